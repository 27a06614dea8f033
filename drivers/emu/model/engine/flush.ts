/**
 * Entering the error state and flushing. When a QP fails (an entry of either ring failed, the
 * peer NAKed, retries ran out, a CQ overflowed, an error was injected) or the driver moves it
 * to ERR, it sends nothing more, and every WQE without a completion, on both rings, and every
 * WQE posted later, completes in ring order: the entry that failed with its own status, the
 * rest with WORK_REQUEST_FLUSHED (IBA 10.3.1, the Error state; roce_hsi.h
 * CQ_REQ_STATUS_WORK_REQUEST_FLUSHED_ERR, CQ_RES_RC_STATUS_WORK_REQUEST_FLUSHED_ERR). A failure
 * the NIC detects is also reported on the CREQ as a QP error notification with its reason,
 * after the CQEs of the entries that failed: a driver that reads the report finds the failed
 * entry's own error already in its CQ. Flush CQEs wait for room in their CQ: they are written
 * as the driver consumes.
 */
import { CqReqStatus, CqResRcStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import * as Wqe from '../../../../firmware-hwrm/roce/wqe.g.ts';
import { SLOT_BYTES } from '../../../../firmware-hwrm/roce/wqe.ts';
import { EmuQpState } from '../objects.ts';
import { ReqState, RespState } from './states.ts';
import { writeReqCqe, writeResCqe } from './cq-writer.ts';
import type { EngineCore } from './core.ts';
import type { QpTransport } from './transport.ts';

/**
 * Moves the QP to ERR (once). `notify`: the NIC found the failure, so the driver hears of it
 * through a QP error notification carrying the requester and responder reasons.
 */
export function enterError(
  core: EngineCore, t: QpTransport, reqReason: number, resReason: number, notify: boolean,
): void {
  if (t.reqState === ReqState.ERROR && t.respState === RespState.ERROR) return;
  t.qp.state = EmuQpState.ERR;
  t.setReqState(ReqState.ERROR);
  t.setRespState(RespState.ERROR);
  t.ackDeadlineNs = t.rnrDeadlineNs = Infinity;
  t.pendingAck = t.pendingNak = false;
  t.outHead = t.outTail;
  t.flushPending = true;
  core.counters.qpErrors++;
  if (notify && !t.dead) {
    // Reported by flushStep, right after the failed entries' own CQEs.
    t.notifyPending = true;
    t.notifyReqReason = reqReason;
    t.notifyResReason = resReason;
  }
}

/** The send WQE at the head (compWqe) failed with `status`: it completes with it, the QP fails. */
export function failSendHead(core: EngineCore, t: QpTransport, status: number, reqReason: number): void {
  if (t.reqState === ReqState.ERROR) return;
  t.sqFailStatus = status;
  t.reqErrReason = reqReason;
  enterError(core, t, reqReason, 0, true);
}

/** The receive at rqConsumer failed with `status` after `length` bytes: it completes with it, the QP fails. */
export function failReceive(core: EngineCore, t: QpTransport, status: number, length: number, resReason: number): void {
  if (t.respState === RespState.ERROR) return;
  t.rqFailStatus = status;
  t.rqFailLength = length;
  t.resErrReason = resReason;
  enterError(core, t, 0, resReason, true);
}

/** The responder failed with no receive involved (e.g. a READ with a bad R_Key). */
export function failResponder(core: EngineCore, t: QpTransport, resReason: number): void {
  if (t.respState === RespState.ERROR) return;
  t.resErrReason = resReason;
  enterError(core, t, 0, resReason, true);
}

/** Writes the completions an ERR QP owes, as CQ room allows. True if it wrote any. */
export function flushStep(core: EngineCore, t: QpTransport): boolean {
  if (!t.flushPending || t.dead) return false;
  let progress = false;
  if (t.notifyPending) {
    // The entries that failed complete first (if their CQ has room), then the report.
    if (t.sqFailStatus !== 0 && t.compWqe < t.sqProducer &&
      writeReqCqe(core, t, t.reqConsIdx(t.compWqe, t.sqFailStatus), t.sqFailStatus)) {
      t.sqFailStatus = 0;
      t.compWqe++;
      progress = true;
    }
    if (t.rqFailStatus !== 0 && t.rqConsumer < t.rqProducer && writeFailedReceive(core, t)) progress = true;
    t.notifyPending = false;
    core.tables.postQpError(t.qp, t.notifyReqReason, t.notifyResReason);
  }
  while (t.compWqe < t.sqProducer) {
    const status = t.sqFailStatus !== 0 ? t.sqFailStatus : CqReqStatus.WORK_REQUEST_FLUSHED_ERR;
    if (!writeReqCqe(core, t, t.reqConsIdx(t.compWqe, status), status)) break;
    if (t.sqFailStatus === 0) core.counters.flushedCompletions++;
    t.sqFailStatus = 0;
    t.compWqe++;
    progress = true;
  }
  while (t.rqConsumer < t.rqProducer) {
    const failed = t.rqFailStatus !== 0;
    if (!writeFailedReceive(core, t)) break;
    if (!failed) core.counters.flushedCompletions++;
    progress = true;
  }
  t.recvActive = false;
  t.flushPending = t.compWqe < t.sqProducer || t.rqConsumer < t.rqProducer;
  return progress;
}

/** The CQE of the receive at rqConsumer: its own failure, or a flush. False if its CQ has no room. */
function writeFailedReceive(core: EngineCore, t: QpTransport): boolean {
  // The receive's tag from its WQE (0 if its memory is gone: the CQE still keeps the order).
  const base = t.qp.rq.entryIova(t.rqConsumer % t.rqEntries);
  const iommu = core.iommu;
  // wr_id is in the header's first 16-byte slot, which never crosses a page (a variable-mode WQE may).
  const u = iommu.check(base, SLOT_BYTES) ? iommu.wordsOf(base, SLOT_BYTES) : undefined;
  const wrId = u === undefined ? 0 : Wqe.rqWqeHdrWrId(u, iommu.wordOffset);
  const failed = t.rqFailStatus !== 0;
  const status = failed ? t.rqFailStatus : CqResRcStatus.WORK_REQUEST_FLUSHED_ERR;
  if (!writeResCqe(core, t, failed ? t.rqFailLength : 0, 0, status, 0, wrId, true)) return false;
  t.rqFailStatus = 0;
  t.rqConsumer++;
  return true;
}
