/**
 * A native CRC-32 for the long frames of the data path, bound with koffi when the system has
 * it: libdeflate's (Debian libdeflate0; it folds with PCLMULQDQ where the CPU has it). It does
 * per byte what the JS and Node paths do, faster:
 *
 *   - CRC-32 of a 4 KiB payload: libdeflate 0.36-0.66 us (the koffi call included), node:zlib's
 *     crc32 1.0-1.65 us, the JS slicing-by-8 3.2 us (measured side by side, Node 20.20, 2-core
 *     AMD EPYC under load). Same function as zlib's: libdeflate_crc32(crc, buf, len) takes and
 *     returns the finished CRC, 0 for an empty prefix.
 *
 * Copies are not made native: with payloads 8-byte aligned (frame-memory.ts), TypedArray.set
 * between host memory and a frame was as fast as libc's memcpy through koffi (0.3-0.6 us for
 * 4 KiB either way), and memcpy into a frame took 2-9 us where glibc chose `rep movsb`.
 *
 * koffi is loaded on first use, never at import (drivers/native/libc.ts loads it, for libc and
 * for this): without koffi's native part or without libdeflate the ICRC keeps node:zlib's CRC
 * and the JS one (long-crc32.ts; RIG_BNXT_NO_NATIVE_CRC=1 forces that, so both paths can be
 * tested on one machine). A koffi call takes a TypedArray as a
 * pointer to its first byte, in place (a plain `const` pointer: koffi copies nothing): callers
 * pass views that start where the range does (model/wire/range-view.ts keeps one per frame buffer).
 */
import { koffiOrWhy } from '../../native/libc.ts';

export interface NativeCrc32 {
  /** CRC-32 of data[0, length) folded into the finished CRC `crc` (zlib's convention); unsigned. */
  crc32(crc: number, data: Uint8Array, length: number): number;
}

let state: NativeCrc32 | null | undefined;

/** The bound call, or null when koffi or libdeflate did not load (or the environment turned it off). */
export function nativeCrc32(): NativeCrc32 | null {
  if (state !== undefined) return state;
  state = null;
  if (process.env['RIG_BNXT_NO_NATIVE_CRC'] === '1') return state;
  const koffi = koffiOrWhy();
  if (typeof koffi === 'string') return state;
  try {
    const deflate = koffi.load('libdeflate.so.0');
    const crc = deflate.func('uint32_t libdeflate_crc32(uint32_t crc, const uint8_t *buf, size_t len)') as
      (c: number, b: Uint8Array, n: number) => number;
    const bound: NativeCrc32 = { crc32: crc };
    if (!selfCheck(bound)) return state;
    state = bound;
  } catch {
    // No koffi, no libdeflate: the JS and node:zlib paths serve.
  }
  return state;
}

/** The bound function gives CRC-32's check value, also continued from a prefix and from a view's start. */
function selfCheck(n: NativeCrc32): boolean {
  const digits = new Uint8Array([0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39]); // "0123456789"
  const prefix = n.crc32(0, digits.subarray(1), 4); // "1234"
  return n.crc32(0, digits.subarray(1), 9) === 0xcbf43926 && n.crc32(prefix, digits.subarray(5), 5) === 0xcbf43926;
}
