/**
 * What a queue pair holds: its two CQs, SQ and RQ rings, read-request queues and the QP
 * object in the firmware, made in the kernel's order (bnxt_re_create_qp: the CQs exist first,
 * CREATE_QP names them) and recorded in one ledger as they are taken, so a refusal at any step
 * and a later destroy both give them back in reverse.
 *
 *   CREATE_CQ (send) -> CREATE_CQ (receive) -> SQ, RQ, ORRQ/IRRQ memory -> CREATE_QP (RC)
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import { Ledger } from '../../drivers/ledger.ts';
import * as R from '../../firmware-hwrm/roce/index.ts';
import { DBC_DBC_XID_MASK } from '../../firmware-hwrm/roce/doorbell.g.ts';
import { ok, err, type Result } from '../result.ts';
import type { BnxtFunction } from './bringup.ts';
import type { RoceDevice } from './roce-device.ts';
import type { DmaPool } from './dma-pool.ts';
import { CompletionQueue, CQ_ENTRIES } from './completion-queue.ts';
import { allocRingMemory, ringBuffers, type RingMemory } from './ring-memory.ts';
import * as Q from './roce-commands.ts';
import { sqLayout, type SqLayout } from './sq-layout.ts';
import { qpBeyondLimits } from './device-limits.ts';

/** WQEs each work ring has room for (the SQ's 16-byte slots: sq-layout.ts). */
export const RING_ENTRIES = 4096;

export interface QpResources {
  readonly qpn: number;
  readonly sq: RingMemory;
  /** Where the SQ's WQEs and its PSN-search entries or MSN table sit (sq-layout.ts). */
  readonly sqLayout: SqLayout;
  readonly rq: RingMemory;
  /** The read-request queues: ORRQ (initiator) and IRRQ (responder), each at a page address. */
  readonly orrq: DmaBuffer;
  readonly irrq: DmaBuffer;
  readonly scq: CompletionQueue;
  readonly rcq: CompletionQueue;
  /** Everything above, in the order taken: unwinding it destroys the QP, then the CQs, then frees the memory. */
  readonly ledger: Ledger;
}

/**
 * Creates the CQs, rings and the QP (left in RESET). A refusal gives back everything taken, in
 * reverse; memory the firmware may still name (it went silent, refused to destroy what names
 * it, or answered with an id the driver cannot use) is quarantined instead. An exception
 * quarantines everything taken and reaches the caller.
 */
export function createQpResources(func: BnxtFunction, roce: RoceDevice, handle: number): Result<QpResources> {
  // Before anything is taken, as bnxt_re checks a CQ's and a QP's sizes against the device's
  // limits before it asks the firmware (device-limits.ts): the rings here are fixed, so a device
  // below them can never hold a queue pair of this driver.
  const layout = sqLayout(func.info.chip, RING_ENTRIES, roce.msnTable);
  const beyond = qpBeyondLimits(roce.limits, {
    cqEntries: CQ_ENTRIES - 1, ringEntries: RING_ENTRIES - 1, sqSges: layout.sqSge, rqSges: R.STATIC_MAX_SGE,
  });
  if (beyond !== undefined) return err(beyond);
  const ledger = new Ledger(func.pool, [roce.rcfw]);
  const made = ledger.guard(() => createSteps(func, roce, handle, layout, ledger));
  if (!made.ok) ledger.unwind();
  return made;
}

function createSteps(
  func: BnxtFunction, roce: RoceDevice, handle: number, layout: SqLayout, ledger: Ledger,
): Result<QpResources> {
  const { pool } = func;
  const rcfw = roce.rcfw;
  const doorbells = func.doorbells;

  // CREATE_CQ: the send CQ, then the receive CQ.
  const cqs: CompletionQueue[] = [];
  for (const which of ['send', 'receive']) {
    const mem = takeRing(pool, ledger, CQ_ENTRIES * R.CQE_BYTES);
    if (!mem.ok) return mem;
    const cq = rcfw.send(Q.CREATE_CQ, {
      cq_handle: BigInt(handle * 2 + cqs.length), lvl: mem.value.level, pg_size: mem.value.pgSize, cnq_id: roce.cqNqId,
      dpi: 0, cq_size: CQ_ENTRIES, pbl: mem.value.table.dir,
    }, ringBuffers(mem.value));
    if (!cq.ok) return err(`CREATE_CQ (${which}): ${cq.error}`);
    const id = cq.value.xid;
    if (id > DBC_DBC_XID_MASK) {
      // A CQ the driver cannot name in a doorbell: the firmware holds it under an id we cannot trust.
      ledger.hold(...ringBuffers(mem.value));
      return err(`CREATE_CQ (${which}): malformed firmware answer (CQ id ${id} does not fit a doorbell)`);
    }
    ledger.undo(rcfw, `DESTROY_CQ (${which})`, () => rcfw.send(Q.DESTROY_CQ, { cq_cid: id }));
    const local = func.device.writesInCallerThread === true; // the NIC writes its CQEs from this thread
    cqs.push(new CompletionQueue(id, mem.value, doorbells, roce.doorbellOffset, local));
  }

  // SQ (ring + PSN search area or MSN table, in the chip's WQE mode: sq-layout.ts) and RQ
  // memory, and the read-request queues (ORRQ / IRRQ).
  const sq = takeRing(pool, ledger, layout.bytes);
  if (!sq.ok) return sq;
  const rq = takeRing(pool, ledger, RING_ENTRIES * R.STATIC_WQE_BYTES);
  if (!rq.ok) return rq;
  // Sized for the device's read depths (max_qp_init_rd_atom / max_qp_rd_atom), each its own
  // page-rounded allocation at a page address, as Linux bnxt_re qplib_fp.c bnxt_qplib_create_qp
  // allocates them (req_size rounded to PAGE_SIZE, orrq_addr / irrq_addr = the first page).
  const orrq = pool.alloc(R.orrqSlots(roce.caps.max_qp_init_rd_atom) * R.XRRQ_ENTRY_BYTES);
  if (!orrq.ok) return err(`no memory for the ORRQ: ${orrq.error}`);
  ledger.take(orrq.value);
  const irrq = pool.alloc(R.irrqSlots(roce.caps.max_qp_rd_atom) * R.XRRQ_ENTRY_BYTES);
  if (!irrq.ok) return err(`no memory for the IRRQ: ${irrq.error}`);
  ledger.take(irrq.value);

  // CREATE_QP (RC). RESERVED_LKEY_ENABLE and FR_PMR_ENABLED on every QP, as Linux's
  // bnxt_qplib_create_qp (qplib_fp.c) always sets them (the kernel's trace shows 0xc), and
  // VARIABLE_SIZED_WQE_ENABLED in variable WQE mode (wqe_mode BNXT_QPLIB_WQE_MODE_VARIABLE).
  const named = [...ringBuffers(sq.value), ...ringBuffers(rq.value), orrq.value, irrq.value];
  const F = R.CreateQpFlags;
  const wqeMode = layout.variable ? F.VARIABLE_SIZED_WQE_ENABLED : 0;
  const created = rcfw.send(Q.CREATE_QP, {
    qp_handle: BigInt(handle), type: R.QpType.RC,
    qp_flags: F.FORCE_COMPLETION | F.RESERVED_LKEY_ENABLE | F.FR_PMR_ENABLED | wqeMode,
    sq_lvl: sq.value.level, sq_pg_size: sq.value.pgSize, rq_lvl: rq.value.level, rq_pg_size: rq.value.pgSize, dpi: 0,
    sq_size: layout.sqSize, rq_size: RING_ENTRIES, sq_sge: layout.sqSge, rq_sge: R.STATIC_MAX_SGE,
    scq_cid: cqs[0]!.id, rcq_cid: cqs[1]!.id, pd_id: roce.pdId,
    sq_pbl: sq.value.table.dir, rq_pbl: rq.value.table.dir,
    orrq_addr: orrq.value.iova, irrq_addr: irrq.value.iova,
  }, named);
  if (!created.ok) return err(`CREATE_QP: ${created.error}`);
  const qpn = created.value.xid;
  if (qpn > DBC_DBC_XID_MASK) {
    ledger.hold(...named);
    return err(`CREATE_QP: malformed firmware answer (QP number ${qpn} does not fit a doorbell)`);
  }
  ledger.undo(rcfw, 'DESTROY_QP', () => rcfw.send(Q.DESTROY_QP, { qp_cid: qpn }));
  const [scq, rcq] = [cqs[0]!, cqs[1]!];
  const queues = { sq: sq.value, sqLayout: layout, rq: rq.value, orrq: orrq.value, irrq: irrq.value };
  return ok({ qpn, ...queues, scq, rcq, ledger });
}

/** Ring memory and its page table, recorded in `ledger` as taken. */
function takeRing(pool: DmaPool, ledger: Ledger, bytes: number): Result<RingMemory> {
  const r = allocRingMemory(pool, bytes);
  if (r.ok) ledger.takeAll(ringBuffers(r.value));
  return r;
}
