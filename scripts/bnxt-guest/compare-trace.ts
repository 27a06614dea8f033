/**
 * Compares, command by command, two device-side traces (firmware-hwrm/trace.ts records): what
 * Linux's bnxt_en and bnxt_re sent the software NIC in a guest, and what rig-bnxt's own driver
 * sent it for the same steps. Both traces come from the same place (the model's firmware), so
 * a difference is a difference in what the drivers sent.
 *
 * Each request is put in a step by what it is:
 *   bring-up    the function's HWRM set-up (version, reset, capabilities, context memory,
 *               registration, resources, link) and its undoing
 *   roce-init   the RoCE function: its CREQ and NQ rings and RoCE statistics context (HWRM), the
 *               CMDQ commands that initialise it and take it down (QUERY_FUNC, INITIALIZE_FW,
 *               GIDs, congestion control, DEINITIALIZE_FW)
 *   qp          RC queue pairs and their CQs: create, query, every MODIFY_QP transition, destroy
 *   mr          memory regions: register and deregister
 *   gsi         the GSI QP (QP1) and its CQ
 *   l2          the Ethernet netdev (rings, VNICs, filters, statistics, coalescing)
 * and each step is compared three ways: commands only one side sends, the order of the first
 * sending of the commands both send, and the fields of the first of each command both send
 * (fields that name memory, objects or choices a consumer makes are left out: FIELDS_LEFT_OUT).
 * Each difference is a line of text; docs/hardware.md lists every one with what was done.
 */
import type { TraceRecord } from '../../firmware-hwrm/trace.ts';
import { HWRM_COMMANDS, hwrmRows } from '../../firmware-hwrm/hwrm/commands.ts';

export type Step = 'bring-up' | 'roce-init' | 'qp' | 'mr' | 'gsi' | 'l2';
export const STEPS: readonly Step[] = ['bring-up', 'roce-init', 'qp', 'mr', 'gsi', 'l2'];

/** A request, what it is called in the comparison, and its step. */
export interface Command {
  readonly step: Step;
  /** The request name with what tells same-named requests apart: RING_ALLOC(NQ), MODIFY_QP(RC ->RTR). */
  readonly key: string;
  readonly rec: TraceRecord;
}

// bnxt_hsi.h ring_alloc_input ring_type; the RoCE function's CREQ and NQs are NQ rings on P5.
const RING_TYPES: Record<number, string> = { 0: 'L2_CMPL', 1: 'TX', 2: 'RX', 3: 'ROCE_CMPL', 4: 'RX_AGG', 5: 'NQ' };
const RING_TYPE_NQ = 5;
const STAT_CTX_FLAGS_ROCE = 0x1;
// roce_hsi.h CMDQ_CREATE_QP_TYPE_*, CMDQ_MODIFY_QP_NEW_STATE_*
const QP_TYPES: Record<number, string> = { 2: 'RC', 4: 'UD', 6: 'RAW_ETHERTYPE', 7: 'GSI' };
const QP_STATES: Record<number, string> = { 0: 'RESET', 1: 'INIT', 2: 'RTR', 3: 'RTS', 4: 'SQD', 5: 'SQE', 6: 'ERR' };

/** HWRM requests of the Ethernet side (the table's netdev rows); RING_*, STAT_CTX_* are sorted by type. */
const L2_HWRM = new Set(hwrmRows().filter((row) => row.netdev).map((row) => row.name));
const { RING_ALLOC, RING_FREE, STAT_CTX_ALLOC, STAT_CTX_FREE } = HWRM_COMMANDS;
const ROCE_INIT_CMDQ = new Set([
  'QUERY_FUNC', 'QUERY_VERSION', 'INITIALIZE_FW', 'DEINITIALIZE_FW', 'ADD_GID', 'DELETE_GID', 'MODIFY_GID',
  'MODIFY_ROCE_CC', 'QUERY_ROCE_CC', 'SET_FUNC_RESOURCES',
]);
const MR_CMDQ = new Set(['ALLOCATE_MRW', 'DEALLOCATE_KEY', 'REGISTER_MR', 'DEREGISTER_MR']);

/**
 * Fields not compared: where memory is (addresses, page lists), which object (ids, handles,
 * keys, cookies, sequence numbers), who the peer is (GIDs, MACs, QP numbers, PSNs), and sizes a
 * consumer chooses (queue depths, region lengths). What is left is what the driver decides.
 */
const LEFT_OUT_NAMES = [
  // memory
  'addr', 'address', 'pbl', 'page_dir', 'page_tbl_addr', 'page_tbl_depth',
  // objects and sequence
  'handle', 'cookie', 'seq_id', 'cmpl_ring', 'target_id', 'resp_size', 'cid', 'xid', 'id', 'ids', 'key', 'lkey',
  'l_key', 'logical_id', 'nq_ring_id', 'cmpl_ring_id', 'stat_ctx_id', 'fid', 'ring_id', 'sgid_index',
  'dpi',
  // the peer
  'va', 'dgid', 'gid', 'mac', 'dest_mac', 'src_mac', 'psn', 'sq_psn', 'rq_psn', 'dest_qp_id',
  // sizes a consumer picks
  'size', 'sq_size', 'rq_size', 'cq_size', 'length', 'mr_size', 'total_size', 'cmd_size',
  // the clock
  'timestamp', 'year', 'month', 'day', 'hour', 'minute', 'second', 'millisecond', 'zone',
];
export const FIELDS_LEFT_OUT = new RegExp(`(^|_)(${LEFT_OUT_NAMES.join('|')})$`);

/** The trace's requests, each with its step and key. */
export function commands(trace: readonly TraceRecord[]): Command[] {
  const reqs = trace.filter((r) => r.dir === 'req' && (r.ch === 'hwrm' || r.ch === 'cmdq'));
  const firstCmdq = reqs.findIndex((r) => r.ch === 'cmdq');
  // Object ids from the answers (HWRM answers follow their requests, in order).
  const answers = (name: string, field: string) => trace
    .filter((r) => r.ch === 'hwrm' && r.dir === 'resp' && r.name === name).map((r) => r.fields[field]);
  const ringIds = answers(RING_ALLOC.name, 'ring_id');
  const statIds = answers(STAT_CTX_ALLOC.name, 'stat_ctx_id');
  const cqNqs = new Set(reqs.filter((r) => r.name === 'CREATE_CQ').map((r) => r.fields['cnq_id']));
  const qpTypes = new Map<unknown, string>();
  const gsiCqs = new Set<unknown>();
  const roceRings = new Set<unknown>();
  const roceStats = new Set<unknown>();
  let statAllocs = 0;
  const creqAnswers = trace.filter((r) => r.ch === 'creq' && r.name === 'CREATE_QP' && r.fields['status'] === 0);
  let createQps = 0;
  let ringAllocs = 0;
  const out: Command[] = [];
  reqs.forEach((rec, i) => {
    const f = rec.fields;
    let step: Step = 'bring-up';
    let key = rec.name;
    if (rec.ch === 'hwrm') {
      if (rec.name === RING_ALLOC.name || rec.name === RING_FREE.name) {
        const type = Number(f['ring_type']);
        key = `${rec.name}(${RING_TYPES[type] ?? type})`;
        let roce = false;
        if (rec.name === RING_ALLOC.name) {
          const id = ringIds[ringAllocs++];
          // The RoCE function's rings: NQs allocated before its first command, or ones its CQs use.
          roce = type === RING_TYPE_NQ && ((firstCmdq >= 0 && i < firstCmdq) || cqNqs.has(id));
          if (roce) roceRings.add(id);
        } else roce = roceRings.has(f['ring_id']);
        step = roce ? 'roce-init' : 'l2';
      } else if (rec.name === STAT_CTX_ALLOC.name || rec.name === STAT_CTX_FREE.name) {
        let roce: boolean;
        if (rec.name === STAT_CTX_ALLOC.name) {
          roce = (Number(f['stat_ctx_flags']) & STAT_CTX_FLAGS_ROCE) !== 0;
          if (roce) roceStats.add(statIds[statAllocs]);
          statAllocs++;
        } else roce = roceStats.has(f['stat_ctx_id']);
        step = roce ? 'roce-init' : 'l2';
        key = `${rec.name}(${roce ? 'ROCE' : 'L2'})`;
      } else if (L2_HWRM.has(rec.name)) step = 'l2';
    } else if (ROCE_INIT_CMDQ.has(rec.name)) step = 'roce-init';
    else if (MR_CMDQ.has(rec.name)) step = 'mr';
    else if (rec.name === 'CREATE_QP') {
      const type = QP_TYPES[Number(f['type'])] ?? String(f['type']);
      const answer = creqAnswers[createQps++];
      if (answer !== undefined) qpTypes.set(answer.fields['xid'], type);
      if (type === 'GSI') { gsiCqs.add(f['scq_cid']); gsiCqs.add(f['rcq_cid']); }
      step = type === 'GSI' ? 'gsi' : 'qp';
      key = `CREATE_QP(${type})`;
    } else if (rec.name === 'MODIFY_QP' || rec.name === 'QUERY_QP' || rec.name === 'DESTROY_QP') {
      const type = qpTypes.get(f['qp_cid']) ?? '?';
      step = type === 'GSI' ? 'gsi' : 'qp';
      key = rec.name === 'MODIFY_QP' ? modifyKey(type, f) : `${rec.name}(${type})`;
    } else if (rec.name === 'CREATE_CQ' || rec.name === 'DESTROY_CQ') {
      step = 'qp';
      key = rec.name;
    } else step = 'qp';
    out.push({ step, key, rec });
  });
  return withGsiCqs(out, gsiCqs);
}

/** MODIFY_QP's key: the QP type and the state it moves to (or 'same'). */
function modifyKey(type: string, f: TraceRecord['fields']): string {
  const to = (Number(f['modify_mask']) & 1) !== 0 ? QP_STATES[Number(f['new_state'])] : 'same';
  return `MODIFY_QP(${type} ->${to})`;
}

/** The GSI QP's CQ: created just before QP1, destroyed just after it, or named by it. */
function withGsiCqs(out: readonly Command[], gsiCqs: ReadonlySet<unknown>): Command[] {
  return out.map((c, i) => {
    if (c.rec.name !== 'CREATE_CQ' && c.rec.name !== 'DESTROY_CQ') return c;
    const createdBefore = c.rec.name === 'CREATE_CQ' && out[i + 1]?.key === 'CREATE_QP(GSI)';
    const destroyedAfter = c.rec.name === 'DESTROY_CQ' && out[i - 1]?.key === 'DESTROY_QP(GSI)';
    const gsi = createdBefore || destroyedAfter || gsiCqs.has(c.rec.fields['cq_cid']);
    return gsi ? { ...c, step: 'gsi' as Step } : c;
  });
}

const fmt = (v: unknown) => (typeof v === 'number' ? `0x${v.toString(16)}` : String(v));

/** Every difference between the kernel's trace and rig-bnxt's, one line each, by step. */
export function compareTraces(kernel: readonly TraceRecord[], rig: readonly TraceRecord[]): string[] {
  const k = commands(kernel);
  const r = commands(rig);
  const out: string[] = [];
  for (const step of STEPS) {
    const ks = k.filter((c) => c.step === step);
    const rs = r.filter((c) => c.step === step);
    const kKeys = [...new Set(ks.map((c) => c.key))];
    const rKeys = [...new Set(rs.map((c) => c.key))];
    for (const key of kKeys) if (!rKeys.includes(key)) out.push(`${step}: only the kernel sends ${key}`);
    for (const key of rKeys) if (!kKeys.includes(key)) out.push(`${step}: only rig-bnxt sends ${key}`);
    const common = kKeys.filter((key) => rKeys.includes(key));
    const rOrder = rKeys.filter((key) => common.includes(key));
    if (common.join() !== rOrder.join()) {
      out.push(`${step}: order: the kernel ${common.join(', ')}; rig-bnxt ${rOrder.join(', ')}`);
    }
    for (const key of common) {
      const a = ks.find((c) => c.key === key)!.rec.fields;
      const b = rs.find((c) => c.key === key)!.rec.fields;
      for (const field of Object.keys(a)) {
        if (FIELDS_LEFT_OUT.test(field) || !(field in b)) continue;
        if (a[field] === b[field]) continue;
        out.push(`${step}: ${key} ${field}: the kernel ${fmt(a[field])}, rig-bnxt ${fmt(b[field])}`);
      }
    }
  }
  return out;
}
