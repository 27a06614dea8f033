/**
 * The faster CRC-32 a host hands its model for the ICRC of long frames (HostServices.longCrc32;
 * the model's wire/icrc.ts keeps its JS CRC for the rest, and for everything without one):
 *
 *   libdeflate   from 256 bytes, where koffi and libdeflate load (native-crc32.ts): 0.36-0.66 us
 *                for 4 KiB, the koffi call (70-100 ns) included
 *   node:zlib    from 512 bytes otherwise (zlib.crc32, Node 20.15 and later): 1.0-1.65 us for
 *                4 KiB, its call ~190 ns, so the JS slicing-by-8 (3.2 us for 4 KiB) is faster below
 *
 * Both take and return the finished CRC (zlib's convention). libdeflate's view starts at the
 * covered bytes after the headers, the same place in every frame of a buffer, so it is made
 * once per buffer whatever the frames' lengths; zlib's is exactly the range (range-view.ts).
 * Chosen at the first call (a model asks at its first long frame): koffi is not asked for before.
 */
import zlib from 'node:zlib';
import { rangeView } from '../model/wire/range-view.ts';
import { LONG_CRC_PROBE_BYTES, type LongCrc32 } from '../model/wire/icrc.ts';
import { nativeCrc32, type NativeCrc32 } from './native-crc32.ts';

/** Bytes from which libdeflate's CRC is used (its koffi call costs 70-100 ns). */
export const NATIVE_CRC_MIN_BYTES = 256;
/** Bytes from which zlib's CRC is used (measured crossover with the JS CRC 300-500 B). */
export const ZLIB_CRC_MIN_BYTES = 512;
// The model asks for a faster CRC at its first range of LONG_CRC_PROBE_BYTES: neither starts below.
if (NATIVE_CRC_MIN_BYTES < LONG_CRC_PROBE_BYTES) throw new Error('long-crc32.ts: a threshold below the probe');

type ZlibCrc32 = (data: Uint8Array, value: number) => number;
const zlibCrc32: ZlibCrc32 | undefined = typeof (zlib as { crc32?: unknown }).crc32 === 'function'
  ? (zlib as unknown as { crc32: ZlibCrc32 }).crc32 : undefined;

class LibdeflateCrc32 implements LongCrc32 {
  readonly name = 'libdeflate';
  readonly minBytes = NATIVE_CRC_MIN_BYTES;
  constructor(private readonly native: NativeCrc32) {}
  crc32(crc: number, frame: Uint8Array, from: number, end: number): number {
    return this.native.crc32(crc, rangeView(frame, from, frame.length), end - from);
  }
}

class NodeZlibCrc32 implements LongCrc32 {
  readonly name = 'node:zlib';
  readonly minBytes = ZLIB_CRC_MIN_BYTES;
  constructor(private readonly zlibCrc: ZlibCrc32) {}
  crc32(crc: number, frame: Uint8Array, from: number, end: number): number {
    return this.zlibCrc(rangeView(frame, from, end), crc);
  }
}

let chosen: LongCrc32 | null | undefined;

/** libdeflate's CRC where it loads, else node:zlib's where Node has it, else null (the JS CRC alone). */
export function hostLongCrc32(): LongCrc32 | null {
  if (chosen !== undefined) return chosen;
  const native = nativeCrc32();
  if (native !== null) chosen = new LibdeflateCrc32(native);
  else chosen = zlibCrc32 !== undefined ? new NodeZlibCrc32(zlibCrc32) : null;
  return chosen;
}
