/**
 * Context memory as the software NIC's firmware sees it: what QCAPS advertises (entry
 * sizes like a P5's, with limits kept small) and the check of a CFG: every enabled kind's
 * page directory must be walkable through the IOMMU and large enough for its entries.
 */
import * as H from '../../../firmware-hwrm/hwrm/index.ts';
import type { Iommu } from '../iommu.ts';

const EN = H.FUNC_BACKING_STORE_CFG_REQ_ENABLES;

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
  tqm_entries_multiple: 1, tqm_fp_rings_count: 8,
} as const;

export function answerBackingStoreQcaps(): Record<string, unknown> {
  return { ...CAPS };
}

type Req = Record<string, number | bigint | Uint8Array>;

/** The firmware's state after a valid CFG, or the HWRM error code it answers. */
export function checkBackingStoreCfg(req: Req, iommu: Iommu): BackingStoreState | number {
  const enables = req.enables as number;
  const kinds: [number, string, string, number][] = [
    [EN.QP, 'qpc_page_dir', 'qpc_pg_size_qpc_lvl', (req.qp_num_entries as number) * CAPS.qp_entry_size],
    [EN.SRQ, 'srq_page_dir', 'srq_pg_size_srq_lvl', (req.srq_num_entries as number) * CAPS.srq_entry_size],
    [EN.CQ, 'cq_page_dir', 'cq_pg_size_cq_lvl', (req.cq_num_entries as number) * CAPS.cq_entry_size],
    [EN.STAT, 'stat_page_dir', 'stat_pg_size_stat_lvl', (req.stat_num_entries as number) * CAPS.stat_entry_size],
    [EN.MRAV, 'mrav_page_dir', 'mrav_pg_size_mrav_lvl', (req.mrav_num_entries as number) * CAPS.mrav_entry_size],
    [EN.TIM, 'tim_page_dir', 'tim_pg_size_tim_lvl', (req.tim_num_entries as number) * CAPS.tim_entry_size],
  ];
  // RoCE needs QP, CQ, MRAV and TIM context memory; without them nothing RoCE can be created.
  for (const need of [EN.QP, EN.CQ, EN.MRAV, EN.TIM])
    if ((enables & need) === 0) return H.HWRM_ERR_CODE.INVALID_ENABLES;
  for (const [bit, dirField, lvlField, bytes] of kinds) {
    if ((enables & bit) === 0) continue;
    if ((req.qp_num_entries as number) > CAPS.qp_max_entries) return H.HWRM_ERR_CODE.INVALID_PARAMS;
    if (!walkable(iommu, req[dirField] as number, req[lvlField] as number, bytes))
      return H.HWRM_ERR_CODE.INVALID_PARAMS;
  }
  return {
    qpEntries: req.qp_num_entries as number,
    cqEntries: req.cq_num_entries as number,
    mravEntries: req.mrav_num_entries as number,
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
