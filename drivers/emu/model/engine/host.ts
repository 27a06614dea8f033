/**
 * Copies of message bytes between host memory (a page of a ring or region, through the IOMMU's
 * checked lookup) and a frame, for the hot path. Short copies go a 32-bit word at a time where the two
 * are mutually 4-aligned (byte by byte otherwise), the host side's words taken from the IOMMU's mapping
 * (copyFromWords / copyToWords), so nothing is allocated (a subarray per copy would be); long ones
 * through one subarray (amortized). A page of a ring or region that the IOMMU holds in several
 * mappings (a guest behind a virtual IOMMU maps each 4 KiB on its own, and a region's pages may be
 * larger) is copied through the IOMMU's copying accesses, which walk from mapping to mapping.
 */
import type { Iommu } from '../iommu.ts';
import type { PagedMemory } from '../objects.ts';
import { copyFromWords, copyToWords } from '../wire/frame-memory.ts';

/** Copies shorter than this go word by word; longer ones through one subarray (amortized). */
const SHORT_COPY_BYTES = 256;

/**
 * Bytes [offset, offset + length) of `memory` (inside one page) into dst[dstAt...]. False (an
 * IOMMU fault) if a byte is not mapped.
 */
export function readHost(
  iommu: Iommu, memory: PagedMemory, offset: number, length: number, dst: Uint8Array, dstAt: number,
): boolean {
  const m = iommu.bytesInIfMapped(memory, offset, length);
  if (m === undefined) return iommu.readInto(memory.iova(offset), length, dst, dstAt);
  const from = iommu.viewOffset;
  if (length >= SHORT_COPY_BYTES) dst.set(m.subarray(from, from + length), dstAt);
  else copyFromWords(m, iommu.viewWords, from, dst, dstAt, length);
  return true;
}

/**
 * src[srcAt...] into bytes [offset, offset + length) of `memory` (inside one page). False (an
 * IOMMU fault) if a byte is not mapped.
 */
export function writeHost(
  iommu: Iommu, memory: PagedMemory, offset: number, src: Uint8Array, srcAt: number, length: number,
): boolean {
  const m = iommu.bytesInIfMapped(memory, offset, length);
  if (m === undefined) return iommu.writeFrom(memory.iova(offset), src, srcAt, length);
  iommu.notePagedWrite(memory, offset, length);
  const to = iommu.viewOffset;
  if (length >= SHORT_COPY_BYTES) m.set(src.subarray(srcAt, srcAt + length), to);
  else copyToWords(src, srcAt, m, iommu.viewWords, to, length);
  return true;
}
