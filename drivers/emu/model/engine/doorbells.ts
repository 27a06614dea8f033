/**
 * Doorbells (bnxt_hsi.h struct dbc_dbc; Linux bnxt_re qplib_res.h bnxt_qplib_ring_db): one
 * 64-bit store into BAR2 per doorbell, decoded with the shared codec. A doorbell only moves an
 * index (QEMU style: work is queued, run() does it):
 *
 *   SQ / RQ            producer: "WQEs up to index - 1 are posted"; the epoch bit is the wrap
 *                      parity, so with it the index names a position modulo 2 x ring size.
 *                      A variable-size WQE QP's SQ doorbell names a 16-byte slot instead
 *                      (Linux qplib_fp.c: max_slot 1, bnxt_qplib_ring_prod_db sends prod /
 *                      max_slot), and must end on the end of a WQE (sqSlotDoorbell)
 *   CQ                 consumer: the driver has read the CQEs before index
 *   CQ_ARMALL/ARMSE    consumer, and arm one NQ notification
 *   NQ / NQ_ARM        the firmware's rings (the CREQ and the CQ notification queues)
 *
 * A doorbell naming no object, an index outside its ring, or a producer that would post more
 * WQEs than the ring holds is refused and counted; nothing else happens.
 */
import { DbcPath, DbcType } from '../../../../firmware-hwrm/roce/doorbell.ts';
import * as Db from '../../../../firmware-hwrm/roce/doorbell.g.ts';
import { SLOT_BYTES, WQE_HEADER_SLOTS } from '../../../../firmware-hwrm/roce/wqe.ts';
import * as Wqe from '../../../../firmware-hwrm/roce/wqe.g.ts';
import { EmuQpState } from '../objects.ts';
import { ReqState, RespState } from './states.ts';
import { armCq, cqConsumerDoorbell } from './cq-writer.ts';
import type { EngineCore } from './core.ts';
import type { QpTransport } from './transport.ts';
import { countAt, ringSlot } from '../../../../firmware-hwrm/ring.ts';

/**
 * Which doorbell address a doorbell was written to: a DPI page (QP and CQ doorbells), the NQ
 * doorbell offset (NQ and CREQ doorbells), or an address that is both (P5: 0x10000). On P7 they
 * differ (Linux bnxt.c bnxt_hwrm_func_qcfg db_offset for the NQs, bnxt_re main.c
 * bnxt_re_set_db_offset for the DPIs); a doorbell at the other one's address is refused.
 */
export const DoorbellWindow = { DPI: 0, NQ: 1, ANY: 2 } as const;

export function handleDoorbell(core: EngineCore, lo: number, hi: number, window: number): void {
  const counters = core.counters;
  counters.doorbells++;
  if (Db.dbcDbcPathOf(hi) !== DbcPath.ROCE) {
    counters.doorbellsIgnored++;
    return;
  }
  const type = Db.dbcDbcTypeOf(hi);
  const nqType = type === DbcType.NQ || type === DbcType.NQ_ARM || type === DbcType.NQ_MASK;
  if (window !== DoorbellWindow.ANY && nqType !== (window === DoorbellWindow.NQ)) {
    counters.doorbellsWrongBase++;
    counters.doorbellsRejected++;
    return;
  }
  const xid = Db.dbcDbcXidOf(hi);
  const index = Db.dbcDbcIndexOf(lo);
  const epoch = Db.dbcDbcEpochOf(lo);
  switch (type) {
    case DbcType.SQ:
    case DbcType.RQ: {
      const qp = core.tables.qp(xid);
      if (qp?.service === 'gsi' && !qp.destroyed) {
        // QP1's queues are the firmware's record only: the engine sends and receives no MADs.
        counters.gsiDoorbells++;
        counters.doorbellsIgnored++;
        return;
      }
      const t = qp ? core.transportOf(qp) : undefined;
      if (!qp || !t) {
        counters.doorbellsRejected++;
        return;
      }
      // A QP in RESET takes no work (the driver posts from INIT on).
      if (qp.state === EmuQpState.RESET) {
        counters.doorbellsIgnored++;
        return;
      }
      const ok = type === DbcType.RQ
        ? rqDoorbell(t, index, epoch)
        : t.variable ? sqSlotDoorbell(core, t, index, epoch) : sqDoorbell(t, index, epoch);
      if (!ok) counters.doorbellsRejected++;
      return;
    }
    case DbcType.CQ:
    case DbcType.CQ_ARMSE:
    case DbcType.CQ_ARMALL: {
      const cq = core.tables.cq(xid);
      if (!cq || cq.destroyed || !cqConsumerDoorbell(cq, index, epoch)) {
        counters.doorbellsRejected++;
        return;
      }
      if (type !== DbcType.CQ) armCq(core, cq, type === DbcType.CQ_ARMSE);
      return;
    }
    case DbcType.NQ:
    case DbcType.NQ_ARM: {
      // The firmware's rings (the CREQ and the CQ notification queues): the firmware moves them.
      core.tables.nqDoorbell(xid, index, epoch);
      return;
    }
    default:
      // CQ_ARMENA, CQ_CUTOFF_ACK, SRQ_ARMENA, NULL: nothing to do; SRQ, SRQ_ARM, NQ_MASK: not modelled.
      counters.doorbellsIgnored++;
  }
}

/**
 * The free-running count a producer doorbell names: the position (index, epoch) modulo
 * 2 x entries, taken forward from `count` (ring.ts countAt). -1 if the index is outside the ring.
 */
export function producerCount(count: number, entries: number, index: number, epoch: number): number {
  return entries === 0 || index >= entries ? -1 : countAt(count, entries, index, epoch);
}

function sqDoorbell(t: QpTransport, index: number, epoch: number): boolean {
  const entries = t.qp.sq.entries;
  const next = producerCount(t.sqProducer, entries, index, epoch);
  // More WQEs without a completion than the ring holds: the doorbell is out of step.
  if (next < 0 || next - t.compWqe > entries) return false;
  t.sqProducer = next;
  t.qp.sqProducer = index;
  if (t.reqState === ReqState.ERROR) t.flushPending = true;
  return true;
}

/**
 * A variable-size WQE QP's SQ doorbell: `index` is the slot after the last one posted. The
 * handler walks the headers from where the last walk ended, each WQE wqe_size slots (at least
 * its 2 header slots), to count the WQEs posted. A doorbell that ends inside a WQE (a static-
 * mode producer, counting WQEs where the ring counts slots, ends inside the first 3-slot WQE)
 * makes that WQE malformed: the requester fails it with a WQE format error and the QP errs.
 * What Thor2 does then is not public; this is the stricter reading (docs/hardware.md).
 */
function sqSlotDoorbell(core: EngineCore, t: QpTransport, index: number, epoch: number): boolean {
  const slots = t.qp.sq.entries;
  const next = producerCount(t.sqSlotProducer, slots, index, epoch);
  const oldest = t.compWqe < t.sqProducer ? t.wqeSlot[t.sqSlot(t.compWqe)]! : t.parsedSlot;
  if (next < 0 || next - oldest > slots) return false;
  t.sqSlotProducer = next;
  t.qp.sqProducer = index;
  walkPostedWqes(core, t);
  if (t.reqState === ReqState.ERROR) t.flushPending = true;
  return true;
}

/** Counts the WQEs between parsedSlot and the slot producer (sqSlotDoorbell). */
function walkPostedWqes(core: EngineCore, t: QpTransport): void {
  const sq = t.qp.sq;
  const iommu = core.iommu;
  while (t.parsedSlot < t.sqSlotProducer && t.sqProducer - t.compWqe < t.sqEntries) {
    const at = t.parsedSlot;
    const u = iommu.wordsIn(sq.memory, sq.entryOffset(ringSlot(at, sq.entries)), SLOT_BYTES);
    const size = u === undefined ? 0 : Wqe.sqSendHdrWqeSize(u, iommu.wordOffset);
    const i = t.sqSlot(t.sqProducer);
    t.wqeSlot[i] = at;
    const fits = size >= WQE_HEADER_SLOTS && at + size <= t.sqSlotProducer;
    t.wqeMalformed[i] = fits ? 0 : 1;
    if (!fits) core.counters.sqFormatErrors++;
    t.parsedSlot = fits ? at + size : t.sqSlotProducer;
    t.sqProducer++;
  }
}

function rqDoorbell(t: QpTransport, index: number, epoch: number): boolean {
  const entries = t.qp.rq.entries;
  const next = producerCount(t.rqProducer, entries, index, epoch);
  if (next < 0 || next - t.rqConsumer > entries) return false;
  t.rqProducer = next;
  t.qp.rqProducer = index;
  if (t.respState === RespState.ERROR) t.flushPending = true;
  return true;
}
