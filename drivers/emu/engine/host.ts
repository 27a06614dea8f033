/**
 * Small host-memory accessors for the hot path. A WQE, an SGE list or a CQE lies inside one
 * DMA buffer, so one IOMMU lookup (mappingOf: the range is checked) gives a view of it, and
 * its little-endian words are read and written from there without a call per word. Copies
 * of message bytes go through the same checked lookup; short ones are copied byte by byte
 * so that nothing is allocated (a subarray per copy would be).
 */
import type { Iommu } from '../iommu.ts';

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

/** Host memory [iova, iova + length) into dst[dstAt...]. False (an IOMMU fault) if not mapped. */
export function readHost(iommu: Iommu, iova: number, length: number, dst: Uint8Array, dstAt: number): boolean {
  if (length >= SHORT_COPY_BYTES) return iommu.readInto(iova, length, dst, dstAt);
  const m = iommu.mappingOf(iova, length);
  if (m === undefined) return false;
  const from = iommu.viewOffset;
  for (let i = 0; i < length; i++) dst[dstAt + i] = m[from + i]!;
  return true;
}

/** src[srcAt...] into host memory [iova, iova + length). False (an IOMMU fault) if not mapped. */
export function writeHost(iommu: Iommu, iova: number, src: Uint8Array, srcAt: number, length: number): boolean {
  if (length >= SHORT_COPY_BYTES) return iommu.writeFrom(iova, src, srcAt, length);
  const m = iommu.mappingOf(iova, length);
  if (m === undefined) return false;
  iommu.onWrite?.(iova, length);
  const to = iommu.viewOffset;
  for (let i = 0; i < length; i++) m[to + i] = src[srcAt + i]!;
  return true;
}
