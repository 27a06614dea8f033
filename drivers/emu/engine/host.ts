/**
 * Small host-memory accessors for the hot path. A WQE, an SGE list or a CQE lies inside one
 * DMA buffer, so one IOMMU lookup (mappingOf: the range is checked) gives a view of it, and
 * its little-endian words are read and written from there without a call per word. Copies
 * of message bytes go through the same checked lookup; short ones are copied word by word
 * (copyBytes) so that nothing is allocated (a subarray per copy would be).
 */
import type { Iommu } from '../iommu.ts';
import type { PagedMemory } from '../objects.ts';
import { copyFromWords, copyToWords } from '../wire/frame-memory.ts';

/** Copies shorter than this go byte by byte; longer ones through one subarray (amortized). */
const SHORT_COPY_BYTES = 256;

export function le32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

/** A u64 that stays below 2^53 (addresses, lengths) as a number. */
export function le64(b: Uint8Array, at: number): number {
  return le32(b, at) + le32(b, at + 4) * 4294967296;
}

export function putLe32(b: Uint8Array, at: number, v: number): void {
  b[at] = v;
  b[at + 1] = v >>> 8;
  b[at + 2] = v >>> 16;
  b[at + 3] = v >>> 24;
}

/**
 * Bytes [offset, offset + length) of `memory` (inside one page) into dst[dstAt...]. False (an
 * IOMMU fault) if not mapped.
 */
export function readHost(
  iommu: Iommu, memory: PagedMemory, offset: number, length: number, dst: Uint8Array, dstAt: number,
): boolean {
  const m = iommu.bytesIn(memory, offset, length);
  if (m === undefined) return false;
  const from = iommu.viewOffset;
  if (length >= SHORT_COPY_BYTES) dst.set(m.subarray(from, from + length), dstAt);
  else copyFromWords(m, iommu.viewWords, from, dst, dstAt, length);
  return true;
}

/**
 * src[srcAt...] into bytes [offset, offset + length) of `memory` (inside one page). False (an
 * IOMMU fault) if not mapped.
 */
export function writeHost(
  iommu: Iommu, memory: PagedMemory, offset: number, src: Uint8Array, srcAt: number, length: number,
): boolean {
  const m = iommu.bytesIn(memory, offset, length);
  if (m === undefined) return false;
  iommu.notePagedWrite(memory, offset, length);
  const to = iommu.viewOffset;
  if (length >= SHORT_COPY_BYTES) m.set(src.subarray(srcAt, srcAt + length), to);
  else copyToWords(src, srcAt, m, iommu.viewWords, to, length);
  return true;
}
