/**
 * Where element `index` of a ring lives in host memory: depth 0 is one contiguous block,
 * depth 1 a table of LE u64 page addresses (RING_ALLOC page_tbl_addr, page_size as log2).
 * Every L2 ring element is 16 bytes (Linux bnxt.h: tx_bd, rx_bd, tx_cmp, nqe_cn).
 */
import type { Iommu } from '../iommu.ts';

export interface RingMemory {
  readonly pageTblAddr: number;
  readonly pageTblDepth: number;
  readonly pageSizeLog2: number;
  readonly length: number;
}

export const ELEMENT_BYTES = 16;

/** The IOVA of element `index` (taken modulo the ring), or -1 if its page table entry is unreadable. */
export function elementAddress(iommu: Iommu, ring: RingMemory, index: number): number {
  const byte = (index % ring.length) * ELEMENT_BYTES;
  if (ring.pageTblDepth === 0) return ring.pageTblAddr + byte;
  const pageBytes = 2 ** ring.pageSizeLog2;
  const page = Math.floor(byte / pageBytes);
  const pte = ring.pageTblAddr + page * 8;
  if (!iommu.check(pte, 8)) return -1;
  const base = iommu.read64(pte);
  return base - (base % 4096) + (byte % pageBytes);
}
