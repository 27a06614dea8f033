/**
 * Zeroes a large stretch of shared memory by handing its whole pages back to the kernel
 * (madvise(2) MADV_DONTNEED on private anonymous memory: the next access reads a fresh zero
 * page), bound with koffi. Writing zeros touches every page, even pages nobody used since the
 * last zeroing: a queue pair's rings (1.4 MiB) were rewritten on every make although a QP made
 * and destroyed unused touches none of them. Discarding costs about 2-3 us per 512 KiB of pages
 * nobody touched (~25 us for the /dev/zero read it replaces, same runs); a page the program
 * uses afterwards is faulted in zeroed on its first write, which the kernel does for fresh
 * memory anyway.
 *
 * Only pages wholly inside the buffer are discarded (the allocator's bookkeeping before a
 * SharedArrayBuffer's bytes stays untouched); the caller zeroes the partial pages at either end.
 * koffi is loaded on first use: without it (or if madvise ever fails) `discardPages` answers
 * false and the caller zeroes by writing.
 */
import { loadKoffi, libcFunction } from '../../native/libc.ts';

const PAGE = 4096;
/** linux/mman.h (asm-generic/mman-common.h). */
const MADV_DONTNEED = 4;

interface Bound {
  madvise(at: Uint8Array, length: number, advice: number): number;
  /** memmove(p, p, 0) returns p: the address of a typed array's first byte. */
  addressOf(bytes: Uint8Array): number;
}

let bound: Bound | undefined | null;
/** Each buffer's address: a SharedArrayBuffer's memory never moves. */
const addresses = new WeakMap<SharedArrayBuffer, number>();

function libc(): Bound | undefined {
  if (bound !== undefined) return bound ?? undefined;
  try {
    const ffi = loadKoffi();
    const madvise = libcFunction('int madvise(void *addr, size_t length, int advice)') as Bound['madvise'];
    const memmove = libcFunction('void *memmove(void *dst, const void *src, size_t n)');
    bound = { madvise, addressOf: (bytes) => Number(ffi.address(memmove(bytes, bytes, 0))) };
  } catch {
    bound = null;
  }
  return bound ?? undefined;
}

/**
 * Discards the whole pages of memory[0, size) and reports the partial ends left to zero:
 * `head` bytes from 0 and everything from `tail` to `size`. Undefined when nothing was
 * discarded (no koffi, or madvise refused: from then on the caller always writes).
 */
export function discardPages(memory: SharedArrayBuffer, size: number): { head: number; tail: number } | undefined {
  const c = libc();
  if (c === undefined) return undefined;
  let address = addresses.get(memory);
  if (address === undefined) {
    address = c.addressOf(new Uint8Array(memory, 0, 1));
    addresses.set(memory, address);
  }
  const head = Math.min(size, (PAGE - (address % PAGE)) % PAGE);
  const tail = Math.max(head, size - ((address + size) % PAGE));
  if (tail - head < PAGE) return { head: size, tail: size };
  if (c.madvise(new Uint8Array(memory, head, tail - head), tail - head, MADV_DONTNEED) !== 0) {
    bound = null;
    return undefined;
  }
  return { head, tail };
}
