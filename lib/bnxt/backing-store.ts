/**
 * Context memory ("backing store": Linux bnxt_en bnxt.c bnxt_hwrm_func_backing_store_qcaps,
 * bnxt_alloc_ctx_mem; hsi.h hwrm_func_backing_store_cfg_input): on P5 the chip keeps QP, SRQ,
 * CQ, VNIC, statistics, TQM, MR/AV and timer contexts in host memory the PF hands it once
 * with FUNC_BACKING_STORE_QCAPS then CFG (V1). Sized with the kernel's recipe, RoCE column
 * included, but with this driver's smaller RoCE limits.
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import type { Ledger } from '../../drivers/ledger.ts';
import type { Values } from '../../firmware-hwrm/layout.ts';
import {
  FUNC_BACKING_STORE_CFG_REQ_ENABLES as EN, FUNC_BACKING_STORE_CFG_REQ_FLAGS as CFG_FLAGS,
  FUNC_BACKING_STORE_CFG_LEGACY_LEN, backingStorePgSizeLvl,
  FUNC_BACKING_STORE_PG_SIZE, FUNC_BACKING_STORE_QCAPS_RESP_CTX_INIT_MASK as INIT, type FuncBackingStoreQcapsOutput,
  FuncBackingStoreCfgInput,
} from '../../firmware-hwrm/hwrm/index.ts';
import { PTU_PTE_VALID } from '../../firmware-hwrm/roce/pbl.ts';
import { ok, err, type Result } from '../result.ts';
import type { DmaPool } from './dma-pool.ts';
import type { HwrmChannel } from './hwrm-channel.ts';
import { HWRM_COMMANDS as C } from '../../firmware-hwrm/hwrm/commands.ts';
import { buildPageTable, type PageTable } from './page-table.ts';

/** RoCE objects this driver sizes context memory for (the kernel defaults are 64 K QPs). */
export const ROCE_LIMITS = {
  qps: 1024, srqs: 0, mrs: 4096,
  /**
   * AH entries beside the MRs, as many as the MRs up to 128 K ("128K extra is needed to
   * accommodate static AH context allocation by f/w": bnxt.c bnxt_alloc_ctx_mem), though this
   * driver makes no AH.
   */
  ahs: 128 * 1024,
} as const;

type Qcaps = Values<(typeof FuncBackingStoreQcapsOutput)['fields']>;
type Cfg = Partial<Values<(typeof FuncBackingStoreCfgInput)['fields']>>;

interface Area {
  readonly data: DmaBuffer;
  readonly table: PageTable;
}

export interface BackingStore {
  readonly areas: readonly Area[];
  /** Every buffer the firmware was told about (quarantined if it stops answering). */
  readonly buffers: readonly DmaBuffer[];
  readonly qpEntries: number;
}

/**
 * Queries the context-memory needs, allocates them (zeroed, then initialised where the firmware
 * asks: ctx_kind_initializer at each entry's init offset), and hands them to the firmware.
 * Every buffer goes into `ledger` as it is taken: the caller's unwind gives it back (or holds
 * it, if the firmware stopped answering after being told of it).
 */
export function configureBackingStore(hwrm: HwrmChannel, pool: DmaPool, ledger: Ledger): Result<BackingStore> {
  // HWRM_FUNC_BACKING_STORE_QCAPS: entry sizes and limits per context kind.
  const q = hwrm.send(C.FUNC_BACKING_STORE_QCAPS, {});
  if (!q.ok) return q;
  const caps = q.value;
  // The CFG's form: all 336 bytes where the firmware takes requests that long, else the 256-byte
  // legacy form (bnxt.c bnxt_hwrm_func_backing_store_cfg: req_len = sizeof(*req) unless it
  // exceeds hwrm_max_ext_req_len, then BNXT_BACKING_STORE_CFG_LEGACY_LEN).
  const fullForm = hwrm.caps.maxExtReqLen >= FuncBackingStoreCfgInput.size;
  const sized = contextSizes(hwrm, caps, fullForm);
  if (!sized.ok) return sized;
  const areas: Area[] = [];
  const cfg: Cfg = {};
  let enables = 0;
  for (const kind of contextKinds(caps, sized.value)) {
    if (kind.entries <= 0 || kind.size <= 0) continue;
    const area = allocateArea(pool, ledger, caps, kind);
    if (!area.ok) return area;
    areas.push(area.value);
    const table = area.value.table;
    kind.apply(cfg, table.dir, backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_4K, table.level), kind.entries);
    enables |= kind.enable;
  }
  const buffers = areas.flatMap((a) => [a.data, ...a.table.tables]);
  // HWRM_FUNC_BACKING_STORE_CFG, in the form chosen above.
  const flags = caps.mrav_num_entries_units !== 0 ? CFG_FLAGS.MRAV_RESERVATION_SPLIT : 0;
  const r = hwrm.send(C.FUNC_BACKING_STORE_CFG, { ...cfg, flags, enables: enables >>> 0 }, {
    names: buffers, lengthBytes: fullForm ? FuncBackingStoreCfgInput.size : FUNC_BACKING_STORE_CFG_LEGACY_LEN,
  });
  if (!r.ok) return err(r.error);
  return ok({ areas, buffers, qpEntries: sized.value.extraQps });
}

/** How many of each the context memory holds: the kernel's recipe with this driver's RoCE limits. */
interface ContextSizes {
  readonly extraQps: number;
  readonly qp1: number;
  readonly l2Qps: number;
  readonly mrs: number;
  readonly ahs: number;
  readonly tqmRings: number;
  readonly tqmEntries: number;
}

/** The sizes from QCAPS (and, where it names no TQM ring count, QUEUE_QPORTCFG's CoS queues). */
function contextSizes(hwrm: HwrmChannel, caps: Qcaps, fullForm: boolean): Result<ContextSizes> {
  const extraQps = Math.max(
    0, Math.min(ROCE_LIMITS.qps, caps.qp_max_entries - caps.qp_max_l2_entries - caps.qp_min_qp1_entries),
  );
  const qp1 = caps.qp_min_qp1_entries;
  const l2Qps = caps.qp_max_l2_entries;
  const mrs = Math.min(Math.floor(caps.mrav_max_entries / 2), ROCE_LIMITS.mrs);
  const ahs = Math.min(mrs, ROCE_LIMITS.ahs);
  // Fast-path TQM rings: QCAPS's count, or where it says 0 the port's CoS queues from
  // QUEUE_QPORTCFG (bnxt.c bnxt_hwrm_func_backing_store_qcaps: bp->max_q), at most the 8 the
  // legacy CFG carries; at 8, with the full form, tqm_fp_rings_count_ext more, at most 9 in all
  // (the 9th as tqm_ring8: FreeBSD bnxt_hwrm.c bnxt_hwrm_func_backing_store_qcaps and _cfg).
  let fpRings = caps.tqm_fp_rings_count;
  if (fpRings === 0) {
    const queues = hwrm.send(C.QUEUE_QPORTCFG, { flags: 0, port_id: 0 });
    if (!queues.ok) return queues;
    fpRings = queues.value.max_configurable_queues;
    if (fpRings === 0) return err(`${C.QUEUE_QPORTCFG.name}: the port has no CoS queue for the TQM rings`);
  }
  let tqmRings = Math.min(MAX_LEGACY_TQM_FP_RINGS, fpRings);
  if (tqmRings === MAX_LEGACY_TQM_FP_RINGS && fullForm)
    tqmRings = Math.min(MAX_TQM_FP_RINGS, tqmRings + caps.tqm_fp_rings_count_ext);
  const tqmEntries = clamp(
    l2Qps + 2 * (extraQps + qp1), caps.tqm_min_entries_per_ring, caps.tqm_max_entries_per_ring,
    caps.tqm_entries_multiple || 1,
  );
  return ok({ extraQps, qp1, l2Qps, mrs, ahs, tqmRings, tqmEntries });
}

/** One context kind: its entries and their size, its CFG enable bit, its initializer, and its CFG fields. */
interface ContextKind {
  readonly name: string;
  readonly entries: number;
  readonly size: number;
  readonly enable: number;
  readonly init?: Init;
  readonly apply: (cfg: Cfg, dir: number, pgLvl: number, entries: number) => void;
}

/** One row per context kind, in the order bnxt_en fills FUNC_BACKING_STORE_CFG (bnxt_hwrm_func_backing_store_cfg). */
function contextKinds(caps: Qcaps, sizes: ContextSizes): ContextKind[] {
  const { extraQps, qp1, l2Qps, mrs, ahs, tqmRings, tqmEntries } = sizes;
  return [
    { name: 'QP', entries: l2Qps + qp1 + extraQps, size: caps.qp_entry_size, enable: EN.QP,
      init: { mask: INIT.QP, offset: caps.qp_init_offset },
      apply: (c, d, p, n) => Object.assign(c, {
        qpc_page_dir: d, qpc_pg_size_qpc_lvl: p, qp_num_entries: n, qp_num_qp1_entries: qp1, qp_num_l2_entries: l2Qps,
        qp_entry_size: caps.qp_entry_size,
      }) },
    { name: 'SRQ', entries: caps.srq_max_l2_entries + ROCE_LIMITS.srqs, size: caps.srq_entry_size, enable: EN.SRQ,
      init: { mask: INIT.SRQ, offset: caps.srq_init_offset },
      apply: (c, d, p, n) => Object.assign(c, {
        srq_page_dir: d, srq_pg_size_srq_lvl: p, srq_num_entries: n, srq_num_l2_entries: caps.srq_max_l2_entries,
        srq_entry_size: caps.srq_entry_size,
      }) },
    { name: 'CQ', entries: caps.cq_max_l2_entries + 2 * extraQps, size: caps.cq_entry_size, enable: EN.CQ,
      init: { mask: INIT.CQ, offset: caps.cq_init_offset },
      apply: (c, d, p, n) => Object.assign(c, {
        cq_page_dir: d, cq_pg_size_cq_lvl: p, cq_num_entries: n, cq_num_l2_entries: caps.cq_max_l2_entries,
        cq_entry_size: caps.cq_entry_size,
      }) },
    { name: 'VNIC', entries: caps.vnic_max_vnic_entries + caps.vnic_max_ring_table_entries, size: caps.vnic_entry_size,
      enable: EN.VNIC, init: { mask: INIT.VNIC, offset: caps.vnic_init_offset },
      apply: (c, d, p) => Object.assign(c, {
        vnic_page_dir: d, vnic_pg_size_vnic_lvl: p, vnic_num_vnic_entries: caps.vnic_max_vnic_entries,
        vnic_num_ring_table_entries: caps.vnic_max_ring_table_entries, vnic_entry_size: caps.vnic_entry_size,
      }) },
    { name: 'STAT', entries: caps.stat_max_entries, size: caps.stat_entry_size, enable: EN.STAT,
      init: { mask: INIT.STAT, offset: caps.stat_init_offset },
      apply: (c, d, p, n) => Object.assign(c, {
        stat_page_dir: d, stat_pg_size_stat_lvl: p, stat_num_entries: n, stat_entry_size: caps.stat_entry_size,
      }) },
    { name: 'TQM slow path',
      entries: clamp(caps.vnic_max_vnic_entries + tqmEntries, caps.tqm_min_entries_per_ring,
        caps.tqm_max_entries_per_ring, caps.tqm_entries_multiple || 1), size: caps.tqm_entry_size, enable: EN.TQM_SP,
      apply: (c, d, p, n) => Object.assign(c, {
        tqm_sp_page_dir: d, tqm_sp_pg_size_tqm_sp_lvl: p, tqm_sp_num_entries: n, tqm_entry_size: caps.tqm_entry_size,
      }) },
    ...Array.from({ length: Math.min(tqmRings, MAX_LEGACY_TQM_FP_RINGS) }, (_, i) => ({
      name: `TQM ring ${i}`, entries: tqmEntries, size: caps.tqm_entry_size, enable: EN.TQM_RING0 << i,
      apply: (c: Cfg, d: number, p: number, n: number) => Object.assign(c, {
        [`tqm_ring${i}_page_dir`]: d, [`tqm_ring${i}_pg_size_tqm_ring${i}_lvl`]: p, [`tqm_ring${i}_num_entries`]: n,
      }),
    })),
    ...(tqmRings > MAX_LEGACY_TQM_FP_RINGS ? [{
      name: 'TQM ring 8', entries: tqmEntries, size: caps.tqm_entry_size, enable: EN.TQM_RING8,
      apply: (c: Cfg, d: number, p: number, n: number) => Object.assign(c, {
        tqm_ring8_page_dir: d, tqm_ring8_pg_size_tqm_ring_lvl: p, tqm_ring8_num_entries: n,
      }),
    }] : []),
    { name: 'MRAV', entries: mrs + ahs, size: caps.mrav_entry_size, enable: EN.MRAV,
      init: { mask: INIT.MRAV, offset: caps.mrav_init_offset },
      apply: (c, d, p) => Object.assign(c, {
        mrav_page_dir: d, mrav_pg_size_mrav_lvl: p, mrav_num_entries: mravEntries(caps, mrs, ahs),
        mrav_entry_size: caps.mrav_entry_size,
      }) },
    { name: 'TIM', entries: l2Qps + qp1 + extraQps, size: caps.tim_entry_size, enable: EN.TIM,
      apply: (c, d, p, n) => Object.assign(c, {
        tim_page_dir: d, tim_pg_size_tim_lvl: p, tim_num_entries: n, tim_entry_size: caps.tim_entry_size,
      }) },
  ];
}

/** A kind's context memory (zeroed, then initialised where asked) and its level-1 page table, both in the ledger. */
function allocateArea(pool: DmaPool, ledger: Ledger, caps: Qcaps, kind: ContextKind): Result<Area> {
  const data = pool.alloc(kind.entries * kind.size);
  if (!data.ok) return err(`no memory for ${kind.name} context memory: ${data.error}`);
  ledger.take(data.value);
  if (kind.init) initContext(data.value, kind.size, caps, kind.init);
  // 4 KiB pages, level 1 at least, as the kernel does (it never uses level 0 here).
  const table = buildPageTable(pool, data.value, 4096, () => PTU_PTE_VALID, 1);
  if (!table.ok) return err(table.error);
  ledger.takeAll(table.value.tables);
  return ok({ data: data.value, table: table.value });
}

/** Fast-path TQM rings the 256-byte legacy CFG names (tqm_ring0..7); the 336-byte form one more (tqm_ring8). */
const MAX_LEGACY_TQM_FP_RINGS = 8;
const MAX_TQM_FP_RINGS = 9;

/**
 * CFG's mrav_num_entries: the entry count, or where QCAPS gives mrav_num_entries_units the
 * split, MRs / units in bits 31:16 and AHs / units in 15:0, with flag MRAV_RESERVATION_SPLIT
 * (bnxt.c bnxt_hwrm_func_backing_store_cfg).
 */
function mravEntries(caps: Qcaps, mrs: number, ahs: number): number {
  const units = caps.mrav_num_entries_units;
  if (units === 0) return mrs + ahs;
  return ((Math.floor(mrs / units) << 16) | Math.floor(ahs / units)) >>> 0;
}

/** Which ctx_init_mask bit covers a kind, and its init offset (in 4-byte units) from QCAPS. */
interface Init {
  readonly mask: number;
  readonly offset: number;
}

/**
 * Writes the firmware's ctx_kind_initializer at the kind's offset in every entry of `data`, where
 * ctx_init_mask names the kind; the rest stays zero. Linux bnxt_en bnxt.c
 * bnxt_init_ctx_initializer (offset x 4, value 0 when the mask bit is clear) and
 * bnxt_init_ctx_mem, which bnxt_alloc_ring calls for each context page: entries are counted
 * from each 4 KiB page's start (the same as from the area's start when the entry size divides
 * the page); commit 3be8136ce14e.
 */
function initContext(data: DmaBuffer, size: number, caps: Qcaps, init: Init): void {
  const value = caps.ctx_kind_initializer;
  if ((caps.ctx_init_mask & init.mask) === 0 || value === 0) return;
  const offset = init.offset * 4;
  const bytes = data.bytes;
  for (let page = 0; page < bytes.length; page += CONTEXT_PAGE_BYTES) {
    for (let i = 0; i < CONTEXT_PAGE_BYTES && page + i + offset < bytes.length; i += size) {
      bytes[page + i + offset] = value;
    }
  }
}

/** The context pages' size: the page tables here are always of 4 KiB pages. */
const CONTEXT_PAGE_BYTES = 4096;

function clamp(n: number, min: number, max: number, multiple: number): number {
  const rounded = Math.ceil(n / multiple) * multiple;
  return Math.max(min, Math.min(max || rounded, rounded));
}
