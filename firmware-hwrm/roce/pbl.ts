/**
 * Page-buffer lists and page-size encodings. Facts §7.1. A ring or MR reaches the firmware as:
 *
 *   level 0: the address of the single page / contiguous block itself
 *   level 1: the address of one PBL page; PTE[i] = page i | flags         (2 … 512 pages of 4K)
 *   level 2: the address of a PDE page; PDE[j] = PBL page j | PDE_VALID    (> 512 pages)
 *
 * PTEs are 64-bit little-endian: page address in bits 12–63, flags in the low bits. Queue
 * rings (SQ, RQ, SRQ, CQ, and on P5 the CREQ/NQ) mark their last two pages LAST and
 * NEXT_TO_LAST; MR and context tables carry VALID only.
 */
import { checkBits } from './bits.ts';

// qplib_res.h / bnxt.h: PTU_PTE_*, PTU_PDE_*
export const PTU_PTE_VALID = 0x1;
export const PTU_PTE_LAST = 0x2;
export const PTU_PTE_NEXT_TO_LAST = 0x4;
export const PTU_PDE_VALID = 0x1;
/** Low bits of a PTE that are flags; the page address is 4 KiB aligned. */
export const PTE_FLAGS_MASK = 0xfff;
export const PTE_BYTES = 8;

export const PblLevel = {
  LVL_0: 0,
  LVL_1: 1,
  LVL_2: 2,
} as const;

/** The 3/4-bit page-size code of INITIALIZE_FW, CREATE_QP (sq/rq_pg_size), CREATE_CQ/SRQ, RESIZE_CQ. */
export const PgSize = {
  PG_4K: 0x0,
  PG_8K: 0x1,
  PG_64K: 0x2,
  PG_2M: 0x3,
  PG_8M: 0x4,
  PG_1G: 0x5,
} as const;

const PG_SIZE_BYTES = [4096, 8192, 65536, 2 * 1024 * 1024, 8 * 1024 * 1024, 1024 * 1024 * 1024];

export function pgSizeCode(pageBytes: number): number {
  const code = PG_SIZE_BYTES.indexOf(pageBytes);
  if (code < 0) throw new RangeError(`page size ${pageBytes} has no code (4K, 8K, 64K, 2M, 8M, 1G)`);
  return code;
}

export function pgSizeBytes(code: number): number {
  const bytes = PG_SIZE_BYTES[code];
  if (bytes === undefined) throw new RangeError(`page-size code ${code} is not 0..5`);
  return bytes;
}

/** log2 of a power-of-two page size in 4 KiB … 1 GiB, as REGISTER_MR log2_pg_size / log2_pbl_pg_size take it. */
export function log2PageSize(pageBytes: number): number {
  const log2 = Math.log2(pageBytes);
  if (!Number.isInteger(log2) || log2 < 12 || log2 > 30)
    throw new RangeError(`page size ${pageBytes} is not a power of two in 4K..1G`);
  return log2;
}

/** PBL level for a ring or MR of `pages` pages, with `ptesPerPage` PTEs per PBL page (512 for 4 KiB). */
export function pblLevel(pages: number, ptesPerPage = 512): number {
  if (!Number.isInteger(pages) || pages < 1) throw new RangeError(`pblLevel: ${pages} pages`);
  if (pages === 1) return PblLevel.LVL_0;
  return pages <= ptesPerPage ? PblLevel.LVL_1 : PblLevel.LVL_2;
}

/** Flags for PTE `index` of a queue ring of `pages` pages: VALID, plus LAST / NEXT_TO_LAST at the end. */
export function queuePteFlags(index: number, pages: number): number {
  let flags = PTU_PTE_VALID;
  if (index === pages - 1) flags |= PTU_PTE_LAST;
  else if (index === pages - 2) flags |= PTU_PTE_NEXT_TO_LAST;
  return flags;
}

/** Low 32 bits of a PTE/PDE: address bits 12–31 | flags. */
export function pteLo(pageAddress: number, flags: number): number {
  if (!Number.isSafeInteger(pageAddress) || pageAddress < 0 || pageAddress % 4096 !== 0) {
    throw new RangeError(`PTE address ${pageAddress} is not a 4 KiB aligned address below 2^53`);
  }
  checkBits('PTE flags', flags, 12);
  return ((pageAddress % 2 ** 32) | flags) >>> 0;
}

/** High 32 bits of a PTE/PDE: address bits 32–63. */
export function pteHi(pageAddress: number): number {
  return Math.floor(pageAddress / 2 ** 32) >>> 0;
}

/** Page address named by a PTE's two halves. */
export function pteAddress(lo: number, hi: number): number {
  return hi * 2 ** 32 + ((lo & ~PTE_FLAGS_MASK) >>> 0);
}

export function pteFlags(lo: number): number {
  return lo & PTE_FLAGS_MASK;
}
