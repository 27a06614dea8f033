/**
 * Context memory, V2 (required on P7; FUNC_QCAPS flags_ext BS_V2_SUPPORTED): one context
 * type at a time, as Linux's bnxt_en does it (bnxt.c):
 *
 *   discovery  bnxt_hwrm_func_backing_store_qcaps_v2: QCAPS_V2 from type 0 along
 *              next_valid_type to the end marker 0xffff (or past the last type it knows)
 *   sizing     bnxt_alloc_ctx_mem: the V1 recipe (QP, SRQ, CQ, VNIC, STAT, TQM slow and fast
 *              path, MRAV, TIM), with L2/QP1 counts from the split entries; then
 *              bnxt_setup_ctxm_pg_tbls: round up to entry_multiple, clamp to [min, max], one
 *              allocation per instance bit, each initialised with the type's init value
 *   trace      bnxt_backing_store_cfg_v2: every firmware trace type the firmware offers
 *              (bnxt_bs_trace_avail: valid and FW_DBG_TRACE or FW_BIN_DBG_TRACE) gets
 *              max_num_entries, and the last of them becomes the configuration's last type
 *   configure  bnxt_hwrm_func_backing_store_cfg_v2: one CFG_V2 per type and instance, in type
 *              order, BS_CFG_ALL_DONE on the last instance of the last type
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import type { Ledger } from '../../drivers/ledger.ts';
import {
  FUNC_BACKING_STORE_V2_TYPE as T, FUNC_BACKING_STORE_QCAPS_V2_RESP_FLAGS as QF, FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS,
  FUNC_BACKING_STORE_PG_SIZE, backingStorePgSizeLvl,
} from '../../firmware-hwrm/hwrm/index.ts';
import { PTU_PTE_VALID } from '../../firmware-hwrm/roce/pbl.ts';
import { ok, err, type Result } from '../result.ts';
import { ROCE_LIMITS, type BackingStore } from './backing-store.ts';
import type { DmaPool } from './dma-pool.ts';
import type { HwrmChannel } from './hwrm-channel.ts';
import { HWRM_COMMANDS as C } from '../../firmware-hwrm/hwrm/commands.ts';
import { buildPageTable, type PageTable } from './page-table.ts';

/** bnxt.h BNXT_CTX_V2_MAX: one past ERR_QPC_TRACE, the last type the kernel knows. */
export const CTX_V2_MAX = T.ERR_QPC_TRACE + 1;
/** bnxt_backing_store_cfg_v2's trace range, BNXT_CTX_SRT .. BNXT_CTX_QPC. */
const TRACE_FIRST = T.SRT_TRACE;
const TRACE_LAST = T.ERR_QPC_TRACE;
/** bnxt.h BNXT_MAX_SPLIT_ENTRY. */
const MAX_SPLIT = 4;
const PAGE = 4096;
const QCAPS_NAME = C.FUNC_BACKING_STORE_QCAPS_V2.name;
const hex = (n: number) => `0x${n.toString(16)}`;

/** One context type as QCAPS_V2 described it. */
export interface ContextType {
  readonly type: number;
  readonly entrySize: number;
  readonly flags: number;
  readonly instanceBitMap: number;
  /** Byte written into every entry at initOffset (bytes), or 0 for none (bnxt_init_ctx_initializer). */
  readonly initValue: number;
  readonly initOffset: number;
  readonly entryMultiple: number;
  readonly maxEntries: number;
  readonly minEntries: number;
  readonly splits: readonly number[];
}

/** What one type gets: entries per instance, page-table depth, the split words to send. */
interface Plan {
  readonly caps: ContextType;
  readonly entries: number;
  readonly depth: 1 | 2;
  readonly splits: readonly number[];
}

/** Walks QCAPS_V2 from type 0; a type seen twice (a cycle) or an echo of another type is malformed. */
export function queryContextTypes(hwrm: HwrmChannel): Result<Map<number, ContextType>> {
  const types = new Map<number, ContextType>();
  const asked = new Set<number>();
  for (let type = 0; type !== T.INVALID && type < CTX_V2_MAX;) {
    if (asked.has(type)) return err(`${QCAPS_NAME}: next_valid_type leads back to type ${hex(type)}`);
    asked.add(type);
    const r = hwrm.send(C.FUNC_BACKING_STORE_QCAPS_V2, { type });
    if (!r.ok) return r;
    const q = r.value;
    const next = q.next_valid_type;
    if ((q.flags & QF.TYPE_VALID) !== 0) {
      if (q.type !== type) return err(`${QCAPS_NAME}: asked for type ${hex(type)}, answered ${hex(q.type)}`);
      const kindInit = (q.flags & QF.ENABLE_CTX_KIND_INIT) !== 0;
      types.set(type, {
        type, entrySize: q.entry_size, flags: q.flags, instanceBitMap: q.instance_bit_map >>> 0,
        initValue: kindInit ? q.ctx_init_value : 0, initOffset: q.ctx_init_offset * 4,
        entryMultiple: q.entry_multiple, maxEntries: q.max_num_entries, minEntries: q.min_num_entries,
        splits: [q.split_entry_0, q.split_entry_1, q.split_entry_2, q.split_entry_3]
          .slice(0, Math.min(q.subtype_valid_cnt, MAX_SPLIT)),
      });
    }
    type = next;
  }
  return ok(types);
}

/** Instances of a type: one per bit of instance_bit_map, or one (instance 0) when it is 0. */
export function instancesOf(bitMap: number): number[] {
  if (bitMap === 0) return [0];
  const out: number[] = [];
  for (let i = 0; i < 32; i++) if ((bitMap >>> i) & 1) out.push(i);
  return out;
}

/** Entries for a wanted count as bnxt_setup_ctxm_pg_tbls sizes them. */
export function sizeEntries(caps: ContextType, wanted: number): number {
  const rounded = caps.entryMultiple ? Math.ceil(wanted / caps.entryMultiple) * caps.entryMultiple : wanted;
  return Math.max(caps.minEntries, Math.min(caps.maxEntries, rounded));
}

/** bnxt_alloc_ctx_mem's recipe over the V2 types (RoCE always on), plus the trace types. */
export function planContextMemory(types: ReadonlyMap<number, ContextType>): Result<Plan[]> {
  const need = (type: number, name: string): ContextType | string => {
    const c = types.get(type);
    if (!c) return `the firmware offers no ${name} context type (QCAPS_V2 type 0x${type.toString(16)})`;
    if (c.entrySize === 0) return `the firmware gives the ${name} context type an entry size of 0`;
    return c;
  };
  const named: [number, string][] = [[T.QP, 'QP'], [T.SRQ, 'SRQ'], [T.CQ, 'CQ'], [T.VNIC, 'VNIC'], [T.STAT, 'STAT'],
    [T.SP_TQM_RING, 'slow-path TQM ring'], [T.FP_TQM_RING, 'fast-path TQM ring'], [T.MRAV, 'MRAV'], [T.TIM, 'TIM']];
  const c: Record<number, ContextType> = {};
  for (const [type, name] of named) {
    const got = need(type, name);
    if (typeof got === 'string') return err(got);
    c[type] = got;
  }
  const qp = c[T.QP]!;
  const l2Qps = qp.splits[0] ?? 0;
  const qp1Qps = qp.splits[1] ?? 0;
  // Extra QPs for RoCE (the kernel's 64 K cap is this driver's ROCE_LIMITS), plus the fast
  // QP-destroy entries when the firmware has them.
  const extraQps = Math.max(0, Math.min(ROCE_LIMITS.qps, qp.maxEntries - l2Qps - qp1Qps)) + (qp.splits[2] ?? 0);
  const srq = c[T.SRQ]!;
  const srqs = srq.splits[0] ?? 0;
  const extraSrqs = Math.max(0, Math.min(ROCE_LIMITS.srqs, srq.maxEntries - srqs));
  const mrav = c[T.MRAV]!;
  const numMr = Math.min(Math.floor(mrav.maxEntries / 2), ROCE_LIMITS.mrs);
  const numAh = Math.min(numMr, ROCE_LIMITS.ahs);
  // The AV split: the firmware's value unless absent or above what is allocated.
  const avSplit = !mrav.splits[0] || mrav.splits[0] > numAh ? numAh : mrav.splits[0];
  const tqmSp = c[T.SP_TQM_RING]!;
  const tqmEntries = l2Qps + 2 * (extraQps + qp1Qps);
  const plans: Plan[] = [
    plan(qp, l2Qps + qp1Qps + extraQps, 2),
    plan(srq, srqs + extraSrqs, 2),
    plan(c[T.CQ]!, (c[T.CQ]!.splits[0] ?? 0) + 2 * extraQps, 2),
    plan(c[T.VNIC]!, c[T.VNIC]!.maxEntries, 1),
    plan(c[T.STAT]!, c[T.STAT]!.maxEntries, 1),
    plan(tqmSp, (c[T.VNIC]!.splits[0] ?? 0) + tqmEntries + tqmSp.minEntries, 2),
    plan(c[T.FP_TQM_RING]!, tqmEntries, 2),
    { ...plan(mrav, numMr + numAh, 2), splits: [avSplit] },
    plan(c[T.TIM]!, l2Qps + qp1Qps + extraQps, 1),
  ];
  for (let type = TRACE_FIRST; type <= TRACE_LAST; type++) {
    const trace = types.get(type);
    const offered = trace && (trace.flags & (QF.FW_DBG_TRACE | QF.FW_BIN_DBG_TRACE)) !== 0 && trace.entrySize > 0;
    if (offered) plans.push(plan(trace, trace.maxEntries, 1));
  }
  for (const p of plans) {
    if (p.entries * p.caps.entrySize <= 0) return err(`context type ${hex(p.caps.type)} sizes to no memory`);
  }
  return ok(plans.sort((a, b) => a.caps.type - b.caps.type));
}

function plan(caps: ContextType, wanted: number, depth: 1 | 2): Plan {
  return { caps, entries: sizeEntries(caps, wanted), depth, splits: caps.splits };
}

/**
 * Fills `data` as bnxt_init_ctx_mem does, page by page: the init value at the init offset of
 * every entry_size step from each page's start (the kernel calls it per 4 KiB page).
 */
export function initialiseContext(data: Uint8Array, caps: ContextType): void {
  if (caps.initValue === 0) return;
  for (let page = 0; page < data.length; page += PAGE) {
    const end = Math.min(data.length, page + PAGE);
    for (let at = page + caps.initOffset; at < end; at += caps.entrySize) data[at] = caps.initValue;
  }
}

/**
 * Queries, sizes, allocates and initialises every context type, then hands each to the
 * firmware. Every buffer goes into `ledger` as it is taken.
 */
export function configureBackingStoreV2(hwrm: HwrmChannel, pool: DmaPool, ledger: Ledger): Result<BackingStore> {
  const types = queryContextTypes(hwrm);
  if (!types.ok) return types;
  const plans = planContextMemory(types.value);
  if (!plans.ok) return plans;
  // Everything is allocated before the first CFG_V2, as bnxt_alloc_ctx_mem does before
  // bnxt_backing_store_cfg_v2: a host out of memory tells the firmware nothing half-way.
  const areas: { plan: Plan; instance: number; data: DmaBuffer; table: PageTable }[] = [];
  for (const p of plans.value) {
    for (const instance of instancesOf(p.caps.instanceBitMap)) {
      const bytes = p.entries * p.caps.entrySize;
      const data = pool.alloc(bytes);
      if (!data.ok) return err(`no memory for context type 0x${p.caps.type.toString(16)}: ${data.error}`);
      ledger.take(data.value);
      initialiseContext(data.value.bytes.subarray(0, bytes), p.caps);
      const table = buildPageTable(pool, data.value, PAGE, () => PTU_PTE_VALID, p.depth);
      if (!table.ok) return err(table.error);
      ledger.takeAll(table.value.tables);
      areas.push({ plan: p, instance, data: data.value, table: table.value });
    }
  }
  const buffers = areas.flatMap((a) => [a.data, ...a.table.tables]);
  for (const [i, a] of areas.entries()) {
    const p = a.plan;
    const r = hwrm.send(C.FUNC_BACKING_STORE_CFG_V2, {
      type: p.caps.type, instance: a.instance, entry_size: p.caps.entrySize, num_entries: p.entries,
      flags: i === areas.length - 1 ? FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS.BS_CFG_ALL_DONE : 0,
      page_dir: a.table.dir,
      page_size_pbl_level: backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_4K, a.table.level),
      subtype_valid_cnt: p.splits.length,
      split_entry_0: p.splits[0] ?? 0, split_entry_1: p.splits[1] ?? 0,
      split_entry_2: p.splits[2] ?? 0, split_entry_3: p.splits[3] ?? 0,
    }, { names: buffers });
    if (!r.ok) return err(`type 0x${p.caps.type.toString(16)} instance ${a.instance}: ${r.error}`);
  }
  const qp = plans.value.find((p) => p.caps.type === T.QP)!;
  const roceQps = qp.entries - (qp.caps.splits[0] ?? 0) - (qp.caps.splits[1] ?? 0);
  return ok({ areas: areas.map((a) => ({ data: a.data, table: a.table })), buffers, qpEntries: roceQps });
}
