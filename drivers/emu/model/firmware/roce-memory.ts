/**
 * Host memory named by create commands, resolved once through the IOMMU (roce_hsi.h *_LVL_* and
 * *_PG_SIZE_* fields; Linux bnxt_re qplib_res.c bnxt_qplib_alloc_init_hwq builds these page tables):
 * rings given by a PBL level and a page-size code, and memory regions given by a
 * PBL level and log2 page size. A region may start inside its first page; its PagedMemory then
 * translates offsets from the registered va, so `mr.memory.iova(address - mr.va)` holds.
 */
import type { Iommu } from '../iommu.ts';
import { PagedMemory, Ring, walkPageList } from '../objects.ts';

/** CREATE_QP / CREATE_CQ page-size codes (0 = 4K ... 5 = 1G). */
const PG_SIZE_BYTES = [4096, 8192, 65536, 2 * 1024 * 1024, 8 * 1024 * 1024, 1024 * 1024 * 1024];

export function pageBytesOfCode(code: number): number | undefined {
  return PG_SIZE_BYTES[code];
}

/**
 * A ring of `entries` entries of `entryBytes`, in `totalBytes` of memory (more than
 * entries x entryBytes when something follows the ring, like the SQ's PSN search area).
 * Undefined if the level or page size is invalid or a page is unmapped.
 */
export function resolveRing(
  iommu: Iommu, pbl: number, level: number, pgSizeCode: number, entries: number, entryBytes: number, totalBytes: number,
): Ring | undefined {
  const pageBytes = pageBytesOfCode(pgSizeCode);
  if (pageBytes === undefined || level > 2) return undefined;
  if (entries === 0) return new Ring(new PagedMemory([], pageBytes, 0), 0, entryBytes);
  const memory = walkPageList(iommu, pbl, level, pageBytes, totalBytes);
  return memory ? new Ring(memory, entries, entryBytes) : undefined;
}

/**
 * The kernel's "DMA MR" (REGISTER_MR level 0, pbl 0, va 0, size all ones): addresses are bus
 * addresses, used untranslated (every access still goes through the IOMMU).
 */
export class IdentityMemory extends PagedMemory {
  constructor(pageBytes: number) {
    super([], pageBytes, Number.MAX_SAFE_INTEGER);
  }
  override iova(offset: number): number {
    return offset;
  }
}

/** The pages of a region of `lengthBytes` at `va`, or undefined if its page list is unusable. */
export function resolveRegion(
  iommu: Iommu, pbl: number, level: number, pageBytes: number, va: number, lengthBytes: number,
): PagedMemory | undefined {
  if (level > 2) return undefined;
  const firstOffset = va % pageBytes;
  const walked = walkPageList(iommu, pbl, level, pageBytes, firstOffset + lengthBytes);
  if (!walked) return undefined;
  return new PagedMemory(walked.pages, pageBytes, lengthBytes, firstOffset);
}
