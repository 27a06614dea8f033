/**
 * Scatter/gather lists: reading a WQE's SGEs (roce_hsi.h: struct sq_sge) and resolving each
 * through the memory region its key names, then copying message bytes between frames and
 * host memory through those regions, page by page, via the IOMMU (the only path to host
 * memory). Nothing here allocates.
 */
import type { Iommu } from '../iommu.ts';
import { MrAccess } from '../../../../firmware-hwrm/roce/commands-mr.ts';
import { SGE_BYTES, WQE_HEADER_BYTES } from '../../../../firmware-hwrm/roce/wqe.ts';
import * as Wqe from '../../../../firmware-hwrm/roce/wqe.g.ts';
import { TWO_POW_32 } from '../../../../firmware-hwrm/words.ts';
import { readHost, writeHost } from './host.ts';
import type { EmuMr, PagedMemory, Ring, RoceTables } from '../objects.ts';
import type { SgList } from './transport.ts';
import { ringSlot } from '../../../../firmware-hwrm/ring.ts';

/** Why an SGE list or a remote range was refused (0 = accepted). */
export const SglError = {
  OK: 0,
  /** No region has this key. */
  KEY: 1,
  /** The region belongs to another protection domain. */
  DOMAIN: 2,
  /** The bytes do not lie inside the region. */
  RANGE: 3,
  /** The region does not grant the access needed. */
  ACCESS: 4,
  /** The IOMMU refused an access. */
  FAULT: 5,
} as const;

/**
 * Offset inside a region's page list of the byte at virtual address `va`: the firmware
 * resolves a region so that `mr.memory.iova(va - mr.va)` is that byte's bus address, also
 * for a region that starts inside its first page (firmware/roce-memory.ts).
 */
export function regionOffset(mr: EmuMr, va: number): number {
  return va - mr.va;
}

/** Checks that [va, va + length) lies in `mr`, for protection domain `pd`, with `access` bits. */
export function checkRange(mr: EmuMr | undefined, pd: number, va: number, length: number, access: number): number {
  if (mr === undefined) return SglError.KEY;
  if (mr.pd !== pd) return SglError.DOMAIN;
  if ((mr.access & access) !== access) return SglError.ACCESS;
  if (!(va >= mr.va && va + length <= mr.va + mr.length)) return SglError.RANGE;
  return SglError.OK;
}

/**
 * Reads `count` SGEs starting at byte `sgeOffset` of `ring` (in the WQE) into `sgl`, resolving
 * each key through `tables`.
 * Every SGE the WQE's wqe_size names is the WQE's own and is checked, a zero-length one too
 * (it carries no bytes, but its key must name a region of the domain and its address lie in
 * it): a wqe_size larger than the SGEs the driver wrote (the static 8 slots, read as 6 SGEs
 * where one was written) fails the WQE on the zeroed ones. The one exception is a receive of
 * a single zero-length SGE: rdma-core's bnxt_re_post_recv writes that for a receive with no
 * buffer ("HW needs at least one SGE for RQ Entries") and leaves its key unwritten
 * (`emptyReceive`). The public sources do not say whether Thor checks a zero-length SGE's key:
 * this is the stricter reading (docs/hardware.md).
 * `needLocalWrite`: the bytes will be written (receive buffers, READ destinations).
 */
export function loadSgl(
  iommu: Iommu, tables: RoceTables, pd: number, sgl: SgList, ring: PagedMemory, sgeOffset: number, count: number,
  needLocalWrite: boolean, emptyReceive = false,
): number {
  if (count === 0) {
    sgl.clear();
    return SglError.OK;
  }
  const u = iommu.wordsIn(ring, sgeOffset, count * SGE_BYTES);
  if (u === undefined) {
    sgl.clear();
    return SglError.FAULT;
  }
  return loadSglWords(tables, pd, sgl, u, iommu.wordOffset, count, needLocalWrite, emptyReceive);
}

/** loadSgl for `count` SGEs already in view: words `u` from word `w` (a WQE read in one piece). */
export function loadSglWords(
  tables: RoceTables, pd: number, sgl: SgList, u: Uint32Array, w: number, count: number, needLocalWrite: boolean,
  emptyReceive = false,
): number {
  sgl.clear();
  const access = needLocalWrite ? MrAccess.LOCAL_WRITE : 0;
  const skipEmpty = emptyReceive && count === 1;
  for (let i = 0; i < count; i++) {
    const status = addSge(tables, pd, sgl, u, w + i * Wqe.SQ_SGE_WORDS, access, skipEmpty);
    if (status !== SglError.OK) return status;
  }
  return SglError.OK;
}

/**
 * The `count` SGEs of a receive WQE, at byte `sgeOffset` of `ring` (just after its header), for a
 * caller that holds the header's words (`u` from word `w`, the header's first): read from `u` when
 * they lie in the header's page and in that mapping, else as loadSgl (static mode: one lookup) or
 * loadSglEach (variable: each SGE on its own) reads them. The same words and the same refusals
 * either way: a lookup skipped is one that would have found the same mapping.
 */
export function loadSglAfterHeader(
  iommu: Iommu, tables: RoceTables, pd: number, sgl: SgList, ring: PagedMemory, sgeOffset: number,
  u: Uint32Array, w: number, count: number, variable: boolean, needLocalWrite: boolean, emptyReceive: boolean,
): number {
  const bytes = count * SGE_BYTES;
  const at = w + WQE_HEADER_BYTES / 4;
  if (at + bytes / 4 <= u.length && ring.contiguous(sgeOffset - WQE_HEADER_BYTES) >= WQE_HEADER_BYTES + bytes) {
    return loadSglWords(tables, pd, sgl, u, at, count, needLocalWrite, emptyReceive);
  }
  return variable
    ? loadSglEach(iommu, tables, pd, sgl, ring, sgeOffset, count, needLocalWrite, emptyReceive)
    : loadSgl(iommu, tables, pd, sgl, ring, sgeOffset, count, needLocalWrite, emptyReceive);
}

/**
 * loadSgl for a variable-mode receive WQE, whose (2 + rq_sge) slots may cross a page: each SGE
 * is read on its own (a 16-byte slot never crosses one). Same checks and outcome as loadSgl.
 * SGEs that lie in one page are read from one lookup (a lookup per SGE would find the same
 * mapping) when that page's mapping holds them all.
 */
export function loadSglEach(
  iommu: Iommu, tables: RoceTables, pd: number, sgl: SgList, ring: PagedMemory, sgeOffset: number, count: number,
  needLocalWrite: boolean, emptyReceive = false,
): number {
  const bytes = count * SGE_BYTES;
  if (count > 1 && ring.contiguous(sgeOffset) >= bytes) {
    const u = iommu.wordsInIfMapped(ring, sgeOffset, bytes);
    if (u !== undefined) return loadSglWords(tables, pd, sgl, u, iommu.wordOffset, count, needLocalWrite, emptyReceive);
  }
  sgl.clear();
  const access = needLocalWrite ? MrAccess.LOCAL_WRITE : 0;
  const skipEmpty = emptyReceive && count === 1;
  for (let i = 0; i < count; i++) {
    const u = iommu.wordsIn(ring, sgeOffset + i * SGE_BYTES, SGE_BYTES);
    if (u === undefined) return SglError.FAULT;
    const status = addSge(tables, pd, sgl, u, iommu.wordOffset, access, skipEmpty);
    if (status !== SglError.OK) return status;
  }
  return SglError.OK;
}

/**
 * loadSgl for a variable-size WQE: its `count` SGEs are the ring slots after its header, one
 * 16-byte slot each, wrapping at the ring's end as the driver writes them (Linux qplib_fp.c
 * bnxt_qplib_post_send takes each slot with bnxt_qplib_get_prod_qe).
 */
export function loadSglSlots(
  iommu: Iommu, tables: RoceTables, pd: number, sgl: SgList, ring: Ring, firstSlot: number, count: number,
  needLocalWrite: boolean,
): number {
  sgl.clear();
  const access = needLocalWrite ? MrAccess.LOCAL_WRITE : 0;
  for (let i = 0; i < count; i++) {
    const u = iommu.wordsIn(ring.memory, ring.entryOffset(ringSlot(firstSlot + i, ring.entries)), SGE_BYTES);
    if (u === undefined) return SglError.FAULT;
    const status = addSge(tables, pd, sgl, u, iommu.wordOffset, access, false);
    if (status !== SglError.OK) return status;
  }
  return SglError.OK;
}

/** Checks the SGE at word `w` of `u` and appends it to `sgl` (a zero-length one is checked, not kept). */
function addSge(
  tables: RoceTables, pd: number, sgl: SgList, u: Uint32Array, w: number, access: number, skipEmpty: boolean,
): number {
  const size = Wqe.sqSgeSize(u, w);
  if (size === 0 && skipEmpty) return SglError.OK;
  const va = Wqe.sqSgeVaOrPaLo(u, w) + Wqe.sqSgeVaOrPaHi(u, w) * TWO_POW_32;
  const mr = tables.mr(Wqe.sqSgeLKey(u, w));
  const status = checkRange(mr, pd, va, size, access);
  if (status !== SglError.OK || size === 0) return status; // a zero-length SGE is checked, carries nothing
  const n = sgl.count;
  sgl.mr[n] = mr!;
  sgl.offset[n] = regionOffset(mr!, va);
  sgl.size[n] = size;
  sgl.total += size;
  sgl.count = n + 1;
  return SglError.OK;
}

/**
 * Copies `length` message bytes starting at message offset `at` between host memory (through
 * `sgl`) and `buf[bufAt...]`: host to buf when `toHost` is false (gather), buf to host when
 * true (scatter). Every piece is checked again against its region, as hardware checks the MR
 * on each access and not once per message: a region deregistered since the list was loaded
 * (its key no longer names it) is refused, so memory handed out again after DEREGISTER_MR is
 * never read or written. Returns SglError.OK, KEY (a region is gone), RANGE (the list is too
 * short or a piece leaves its region) or FAULT (the IOMMU refused an access).
 */
export function copySgl(
  iommu: Iommu, tables: RoceTables, sgl: SgList, at: number, length: number, buf: Uint8Array, bufAt: number,
  toHost: boolean,
): number {
  // The common case first: from where the last access ended, inside the cursor's SGE, its region
  // and one page (a packet of a one-SGE message). Each condition is one the general walk checks
  // before it copies this piece (`at + length` inside the SGE is inside the list), so it copies
  // what the walk would and takes over only when all hold; anything else goes the walk's way.
  const i = sgl.cursorSge;
  if (at === sgl.cursorAt && sgl.inlineOffset < 0 && i < sgl.count && length > 0) {
    const mr = sgl.mr[i]!;
    const inSge = sgl.size[i]! - sgl.cursorSgeOffset;
    const offset = sgl.offset[i]! + sgl.cursorSgeOffset;
    if (length <= inSge && mr.bound && offset + length <= mr.length && length <= mr.memory.contiguous(offset)) {
      const memory = mr.memory;
      const ok = toHost ? writeHost(iommu, memory, offset, buf, bufAt, length)
        : readHost(iommu, memory, offset, length, buf, bufAt);
      if (!ok) return SglError.FAULT;
      sgl.cursorAt += length;
      if (length === inSge) {
        sgl.cursorSge = i + 1;
        sgl.cursorSgeOffset = 0;
      } else {
        sgl.cursorSgeOffset += length;
      }
      return SglError.OK;
    }
  }
  return copySglPieces(iommu, sgl, at, length, buf, bufAt, toHost);
}

/** copySgl's general walk: from any message offset, piece by piece across SGEs and pages. */
function copySglPieces(
  iommu: Iommu, sgl: SgList, at: number, length: number, buf: Uint8Array, bufAt: number, toHost: boolean,
): number {
  if (length === 0) return SglError.OK;
  if (at + length > sgl.total) return SglError.RANGE;
  if (sgl.inlineOffset >= 0) {
    // Inline bytes sit in the WQE itself, inside one page.
    const ok = !toHost && readHost(iommu, sgl.inlineMemory!, sgl.inlineOffset + at, length, buf, bufAt);
    return ok ? SglError.OK : SglError.FAULT;
  }
  if (at !== sgl.cursorAt) {
    // Not where the last access ended (a retransmission): walk from the first SGE.
    sgl.cursorAt = 0;
    sgl.cursorSge = 0;
    sgl.cursorSgeOffset = 0;
    let skip = at;
    while (skip > 0) {
      const left = sgl.size[sgl.cursorSge]! - sgl.cursorSgeOffset;
      if (skip < left) { sgl.cursorSgeOffset += skip; break; }
      skip -= left;
      sgl.cursorSge++;
      sgl.cursorSgeOffset = 0;
    }
    sgl.cursorAt = at;
  }
  let left = length;
  let to = bufAt;
  while (left > 0) {
    const i = sgl.cursorSge;
    if (i >= sgl.count) return SglError.RANGE;
    const inSge = sgl.size[i]! - sgl.cursorSgeOffset;
    if (inSge <= 0) { sgl.cursorSge++; sgl.cursorSgeOffset = 0; continue; }
    const mr = sgl.mr[i]!;
    // The key still names this very registration (EmuMr.bound: the firmware clears it when the
    // key stops naming the region), and the piece lies in it.
    if (!mr.bound) return SglError.KEY;
    const memory = mr.memory;
    const offset = sgl.offset[i]! + sgl.cursorSgeOffset;
    let n = left < inSge ? left : inSge;
    if (offset + n > mr.length) return SglError.RANGE;
    const inPage = memory.contiguous(offset);
    if (n > inPage) n = inPage;
    const ok = toHost ? writeHost(iommu, memory, offset, buf, to, n) : readHost(iommu, memory, offset, n, buf, to);
    if (!ok) return SglError.FAULT;
    left -= n;
    to += n;
    sgl.cursorSgeOffset += n;
    sgl.cursorAt += n;
    if (sgl.cursorSgeOffset >= sgl.size[i]!) { sgl.cursorSge++; sgl.cursorSgeOffset = 0; }
  }
  return SglError.OK;
}

/**
 * True if `mr` is still the region its key names (not deregistered since it was looked up):
 * for accesses that hold a region across packets (an RDMA WRITE's RETH names it once).
 */
export function stillRegistered(_tables: RoceTables, mr: EmuMr): boolean {
  return mr.bound;
}

/** Copies between a region (from byte `offset` of its page list) and `buf`, page by page. */
export function copyRegion(
  iommu: Iommu, mr: EmuMr, offset: number, length: number, buf: Uint8Array, bufAt: number, toHost: boolean,
): boolean {
  const memory = mr.memory;
  let left = length;
  let off = offset;
  let to = bufAt;
  while (left > 0) {
    const inPage = memory.contiguous(off);
    const n = left < inPage ? left : inPage;
    const ok = toHost ? writeHost(iommu, memory, off, buf, to, n) : readHost(iommu, memory, off, n, buf, to);
    if (!ok) return false;
    left -= n;
    off += n;
    to += n;
  }
  return true;
}
