/**
 * Context memory as the software NIC's firmware sees it: what QCAPS advertises (entry
 * sizes like a P5's, with limits kept small) and the check of a CFG: every enabled kind's
 * page directory must be walkable through the IOMMU and large enough for its entries.
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmRequest, HwrmResponse } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { Iommu } from '../iommu.ts';
import { PORT_QUEUE_COUNT } from './port-queues.ts';

const EN = H.FUNC_BACKING_STORE_CFG_REQ_ENABLES;
const INIT = H.FUNC_BACKING_STORE_QCAPS_RESP_CTX_INIT_MASK;

export interface BackingStoreState {
  readonly qpEntries: number;
  readonly cqEntries: number;
  readonly mravEntries: number;
}

const CAPS = {
  qp_max_entries: 4096, qp_min_qp1_entries: 2, qp_max_l2_entries: 64, qp_entry_size: 448,
  srq_max_l2_entries: 64, srq_max_entries: 4096, srq_entry_size: 64,
  cq_max_l2_entries: 128, cq_max_entries: 8192, cq_entry_size: 64,
  vnic_max_vnic_entries: 64, vnic_max_ring_table_entries: 64, vnic_entry_size: 64,
  stat_max_entries: 128, stat_entry_size: 64,
  tqm_entry_size: 16, tqm_min_entries_per_ring: 64, tqm_max_entries_per_ring: 8192,
  mrav_max_entries: 16384, mrav_entry_size: 128, tim_entry_size: 16, tim_max_entries: 4096,
  // 0: one fast-path TQM ring per CoS queue of QUEUE_QPORTCFG (bnxt_hwrm_func_backing_store_qcaps: bp->max_q).
  tqm_entries_multiple: 1, tqm_fp_rings_count: 0,
  // MRAV reservations are split, MRs and AHs, in units of 1 entry (CFG flag MRAV_RESERVATION_SPLIT).
  mrav_num_entries_units: 1,
  // Context initialisation: each entry of a kind whose mask bit is set holds the initializer at its
  // offset (in 4-byte units) before the kind is handed over. The values are this model's: a
  // different offset per kind, STAT (and TKC/RKC) left out of the mask.
  ctx_kind_initializer: 0xff,
  ctx_init_mask: INIT.QP | INIT.SRQ | INIT.CQ | INIT.VNIC | INIT.MRAV,
  qp_init_offset: 14, srq_init_offset: 3, cq_init_offset: 5, vnic_init_offset: 2, stat_init_offset: 0,
  mrav_init_offset: 7,
} as const;

/**
 * Fast-path TQM rings QCAPS offers: `count` (0: one per CoS queue of QUEUE_QPORTCFG) and, where
 * it is 8 and the CFG's 336-byte form fits max_ext_req_len, `ext` more (hsi.h
 * tqm_fp_rings_count_ext; FreeBSD bnxt_hwrm.c bnxt_hwrm_func_backing_store_qcaps adds them, at
 * most 9 rings, the 9th configured as tqm_ring8).
 */
export interface TqmOffer {
  readonly count: number;
  readonly ext: number;
}
export const DEFAULT_TQM_OFFER: TqmOffer = { count: CAPS.tqm_fp_rings_count, ext: 0 };

/** The legacy CFG's fast-path TQM rings (tqm_ring0..7), and at most one more in the 336-byte form. */
const LEGACY_TQM_FP_RINGS = 8;
const MAX_TQM_FP_RINGS = 9;

export function answerBackingStoreQcaps(
  tqm: TqmOffer = DEFAULT_TQM_OFFER,
): Partial<HwrmResponse<'FUNC_BACKING_STORE_QCAPS'>> {
  return { ...CAPS, tqm_fp_rings_count: tqm.count, tqm_fp_rings_count_ext: tqm.ext };
}

/** The fast-path TQM rings a CFG must back (the kernel's rule over what QCAPS offered). */
function tqmRingsDue(tqm: TqmOffer): number {
  const rings = Math.min(LEGACY_TQM_FP_RINGS, tqm.count || PORT_QUEUE_COUNT);
  // The model's max_ext_req_len is 336: the full form always fits, so the ext rings are due too.
  return rings === LEGACY_TQM_FP_RINGS ? Math.min(MAX_TQM_FP_RINGS, rings + tqm.ext) : rings;
}

type Req = HwrmRequest<'FUNC_BACKING_STORE_CFG'>;

/** The firmware's state after a valid CFG, or the HWRM error code it answers. */
export function checkBackingStoreCfg(
  req: Req, iommu: Iommu, tqm: TqmOffer = DEFAULT_TQM_OFFER,
): BackingStoreState | number {
  const enables = req.enables;
  const mrav = mravSplit(req);
  // Enable bit, page directory, page size and level, bytes.
  const kinds: [number, number, number, number][] = [
    [EN.QP, req.qpc_page_dir, req.qpc_pg_size_qpc_lvl, req.qp_num_entries * CAPS.qp_entry_size],
    [EN.SRQ, req.srq_page_dir, req.srq_pg_size_srq_lvl, req.srq_num_entries * CAPS.srq_entry_size],
    [EN.CQ, req.cq_page_dir, req.cq_pg_size_cq_lvl, req.cq_num_entries * CAPS.cq_entry_size],
    [EN.STAT, req.stat_page_dir, req.stat_pg_size_stat_lvl, req.stat_num_entries * CAPS.stat_entry_size],
    [EN.MRAV, req.mrav_page_dir, req.mrav_pg_size_mrav_lvl, (mrav.mrs + mrav.ahs) * CAPS.mrav_entry_size],
    [EN.TIM, req.tim_page_dir, req.tim_pg_size_tim_lvl, req.tim_num_entries * CAPS.tim_entry_size],
  ];
  // RoCE needs QP, CQ, MRAV and TIM context memory; without them nothing RoCE can be created.
  for (const need of [EN.QP, EN.CQ, EN.MRAV, EN.TIM])
    if ((enables & need) === 0) return H.HWRM_ERR_CODE.INVALID_ENABLES;
  // MRs and AHs, split: (MRs / units) << 16 | AHs / units, with the flag (bnxt_hwrm_func_backing_store_cfg).
  const split = (req.flags & H.FUNC_BACKING_STORE_CFG_REQ_FLAGS.MRAV_RESERVATION_SPLIT) !== 0;
  if (!split) return H.HWRM_ERR_CODE.INVALID_PARAMS;
  // Every fast-path TQM ring due, each enabled (bnxt_hwrm_func_backing_store_cfg enables them
  // all; the 9th is tqm_ring8, enable TQM_RING8, only in the 336-byte form), the 9th backed too.
  const fpRings = tqmRingsDue(tqm);
  for (let i = 0; i < Math.min(fpRings, LEGACY_TQM_FP_RINGS); i++)
    if ((enables & (EN.TQM_RING0 << i)) === 0) return H.HWRM_ERR_CODE.INVALID_ENABLES;
  if (fpRings > LEGACY_TQM_FP_RINGS) {
    if ((enables & EN.TQM_RING8) === 0) return H.HWRM_ERR_CODE.INVALID_ENABLES;
    const bytes = req.tqm_ring8_num_entries * CAPS.tqm_entry_size;
    const dir = req.tqm_ring8_page_dir;
    if (bytes === 0 || !walkable(iommu, dir, req.tqm_ring8_pg_size_tqm_ring_lvl, bytes))
      return H.HWRM_ERR_CODE.INVALID_PARAMS;
  }
  for (const [bit, dir, pgSizeLvl, bytes] of kinds) {
    if ((enables & bit) === 0) continue;
    if (req.qp_num_entries > CAPS.qp_max_entries) return H.HWRM_ERR_CODE.INVALID_PARAMS;
    if (!walkable(iommu, dir, pgSizeLvl, bytes)) return H.HWRM_ERR_CODE.INVALID_PARAMS;
  }
  for (const [bit, dir, pgSizeLvl, entries, size, offsetUnits, mask] of initialised(req)) {
    if ((enables & bit) === 0 || (CAPS.ctx_init_mask & mask) === 0) continue;
    if (!initialisedEntries(iommu, dir, pgSizeLvl, entries, size, offsetUnits * 4))
      return H.HWRM_ERR_CODE.INVALID_PARAMS;
  }
  return {
    qpEntries: req.qp_num_entries,
    cqEntries: req.cq_num_entries,
    mravEntries: mrav.mrs,
  };
}

/** True if the page directory describes at least `bytes` of mapped host memory. */
function walkable(iommu: Iommu, dir: number, pgSizeLvl: number, bytes: number): boolean {
  const level = pgSizeLvl & 0xf;
  const pageBytes = [4096, 8192, 65536, 2 << 20, 8 << 20, 1 << 30][pgSizeLvl >> 4];
  if (pageBytes === undefined || level > 2) return false;
  if (level === 0) return iommu.check(dir, bytes);
  const pages = Math.ceil(bytes / pageBytes);
  const perTable = 512;
  const check = (table: number, count: number, leaf: boolean): boolean => {
    for (let i = 0; i < count; i++) {
      const pte = iommu.read64(table + i * 8);
      if ((pte & 1) === 0) return false;
      const target = pte - (pte % 4096);
      if (leaf ? !iommu.check(target, pageBytes) : !check(target, Math.min(perTable, pages - i * perTable), true))
        return false;
    }
    return true;
  };
  if (level === 1) return pages <= perTable && check(dir, pages, true);
  return check(dir, Math.ceil(pages / perTable), false);
}

/** CFG's split MRAV count: MRs in bits 31:16 and AHs in 15:0, in mrav_num_entries_units. */
function mravSplit(req: Req): { mrs: number; ahs: number } {
  const n = req.mrav_num_entries;
  return { mrs: (n >>> 16) * CAPS.mrav_num_entries_units, ahs: (n & 0xffff) * CAPS.mrav_num_entries_units };
}

/** The kinds whose context memory must be initialised: enable, directory, level, entries, size, offset, mask bit. */
function initialised(req: Req): [number, number, number, number, number, number, number][] {
  return [
    [EN.QP, req.qpc_page_dir, req.qpc_pg_size_qpc_lvl, req.qp_num_entries, CAPS.qp_entry_size, CAPS.qp_init_offset,
      INIT.QP],
    [EN.SRQ, req.srq_page_dir, req.srq_pg_size_srq_lvl, req.srq_num_entries, CAPS.srq_entry_size,
      CAPS.srq_init_offset, INIT.SRQ],
    [EN.CQ, req.cq_page_dir, req.cq_pg_size_cq_lvl, req.cq_num_entries, CAPS.cq_entry_size, CAPS.cq_init_offset,
      INIT.CQ],
    [EN.MRAV, req.mrav_page_dir, req.mrav_pg_size_mrav_lvl, mravSplit(req).mrs + mravSplit(req).ahs,
      CAPS.mrav_entry_size, CAPS.mrav_init_offset, INIT.MRAV],
  ];
}

/**
 * True if every entry of the `entries` x `size` bytes holds the initializer at byte `offset`,
 * entries counted from each page's start as Linux bnxt_en's bnxt_init_ctx_mem writes them (per
 * context page, from bnxt_alloc_ring; commit 3be8136ce14e). Context memory that was not
 * initialised is corrupt to the chip: the firmware refuses it, the stricter reading of what a
 * chip would make of it.
 */
function initialisedEntries(
  iommu: Iommu, dir: number, pgSizeLvl: number, entries: number, size: number, offset: number,
): boolean {
  const pageBytes = [4096, 8192, 65536, 2 << 20, 8 << 20, 1 << 30][pgSizeLvl >> 4]!;
  const bytes = entries * size;
  for (let page = 0; page < bytes; page += pageBytes) {
    for (let i = 0; i < pageBytes && page + i + offset < bytes; i += size) {
      const iova = ctxIova(iommu, dir, pgSizeLvl, page + i + offset);
      if (iova === undefined || !iommu.check(iova, 1) || iommu.read8(iova) !== CAPS.ctx_kind_initializer) return false;
    }
  }
  return true;
}

/** The bus address of byte `at` of a context area, through its page table (levels 0-2), if the table names one. */
function ctxIova(iommu: Iommu, dir: number, pgSizeLvl: number, at: number): number | undefined {
  const level = pgSizeLvl & 0xf;
  const pageBytes = [4096, 8192, 65536, 2 << 20, 8 << 20, 1 << 30][pgSizeLvl >> 4]!;
  if (level === 0) return dir + at;
  const page = Math.floor(at / pageBytes);
  let table = dir;
  if (level === 2) {
    const pde = iommu.read64(table + Math.floor(page / 512) * 8);
    if ((pde & 1) === 0) return undefined;
    table = pde - (pde % 4096);
  }
  const pte = iommu.read64(table + (level === 2 ? page % 512 : page) * 8);
  if ((pte & 1) === 0) return undefined;
  return pte - (pte % 4096) + (at % pageBytes);
}
