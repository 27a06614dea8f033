/**
 * The completer (rxe: rxe_comp.c): turns responses into requester completions, in WQE order.
 * One response packet runs through
 *
 *   CHECK_PSN   a response for a PSN never sent is dropped; one past the oldest WQE
 *               acknowledges it (SEND/WRITE: ACKs and NAKs acknowledge every earlier PSN) or, for a
 *               READ still missing responses, is an implied NAK: retry;
 *               one before the oldest unacknowledged PSN is a duplicate: dropped
 *   CHECK_ACK   by opcode and AETH syndrome:
 *     READ      READ RESPONSE FIRST/MIDDLE/LAST/ONLY in order, payload into the local SGEs
 *     ACK       progress up to its PSN
 *     RNR NAK   wait the advertised time, then resend the NAKed packet alone, asking for an
 *               ACK, and the rest once it is acknowledged (rnr_retry 7 = forever); the
 *               responder answered, so the transport retries spent before it are given back
 *     NAK-SEQ   resend everything from its PSN (go-back-N), counted against retry_cnt
 *     NAK-other the WQE at its PSN fails: invalid request, remote access, remote operational
 *   COMPLETE    a CQE for a signalled WQE (and for any WQE that fails: IBA 10.7.3.1)
 *
 * Progress (ACK, read response) resets the retry counters and restarts the ACK timer.
 * Timer expiry is ERROR_RETRY too: go-back-N from the oldest unacknowledged PSN, at most
 * retry_cnt times, then the oldest WQE fails with TRANSPORT_RETRY_CNT_ERR.
 */
import { CqReqStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ReqErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import { WqeFlags } from '../../../../firmware-hwrm/roce/wqe.ts';
import { AethKind, NakCode, Opcode, OpFlag, OPCODE_FLAGS, aethKind, aethValue } from '../wire/index.ts';
import { ReqState } from './states.ts';
import { psnAdd, psnDiff } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import { SglError, copySgl } from './sgl.ts';
import { loadWqeSgl } from './sq-wqe.ts';
import { restartAckTimer, startRnrTimer } from './timers.ts';
import { writeReqCqe } from './cq-writer.ts';
import { enterError, failSendHead } from './flush.ts';
import { rewindFromMsnTable } from './msn-table.ts';
import { WqeKind, type QpTransport } from './transport.ts';
import type { EngineCore } from './core.ts';

/** A response (ACK, NAK, READ RESPONSE) for QP `t`'s requester, parsed into core.port.rxf. */
export function completerReceive(core: EngineCore, t: QpTransport, frame: Uint8Array): void {
  const f = core.port.rxf;
  if (t.reqState !== ReqState.READY && t.reqState !== ReqState.RNR_WAIT) {
    core.counters.dropQpNotReady++;
    return;
  }
  const psn = f.psn;
  // CHECK_PSN: a PSN this QP never sent, or nothing outstanding (a late duplicate). A NAK names
  // the PSN the responder expects, which is the next one to send once it has everything: that
  // NAK is valid and acknowledges every PSN before it (IBA 9.7.5.1.4: a NAK implicitly
  // acknowledges the earlier requests; the responder sends it instead of its ACK).
  const nak = f.opcode === Opcode.RC_ACKNOWLEDGE && aethKind(f.aethSyndrome) !== AethKind.ACK;
  if (psnDiff(psn, t.sentHighPsn) > (nak ? 0 : -1)) {
    core.counters.dropUnexpectedResponse++;
    return;
  }
  if (t.compWqe === t.fetchedWqe) {
    core.counters.dropStaleResponse++;
    return;
  }
  // A response past the oldest WQE acknowledges it, unless it is a READ still owed data.
  while (t.compWqe < t.fetchedWqe) {
    const slot = t.sqSlot(t.compWqe);
    if (t.wqeStatus[slot] !== 0) break;
    const last = psnAdd(t.wqeStartPsn[slot]!, t.wqePackets[slot]! - 1);
    if (psnDiff(psn, last) <= 0) break;
    if (t.wqeKind[slot] === WqeKind.READ) {
      errorRetry(core, t, false);
      return;
    }
    if (!completeWqe(core, t, slot, CqReqStatus.OK)) return;
  }
  checkHead(core, t);
  if (inError(t)) return;
  if (t.compWqe === t.fetchedWqe || psnDiff(psn, t.ackPsn) < 0) {
    core.counters.dropStaleResponse++;
    return;
  }
  const slot = t.sqSlot(t.compWqe);
  const flags = OPCODE_FLAGS[f.opcode]!;
  if ((flags & OpFlag.READ) !== 0) readResponse(core, t, slot, frame);
  else if (f.opcode === Opcode.RC_ACKNOWLEDGE) acknowledge(core, t, slot);
  else core.counters.dropUnexpectedResponse++; // atomic ACKs: no atomics are sent
}

/** CHECK_ACK for an ACKNOWLEDGE packet; the head WQE contains its PSN. */
function acknowledge(core: EngineCore, t: QpTransport, slot: number): void {
  const f = core.port.rxf;
  const psn = f.psn;
  const syndrome = f.aethSyndrome;
  switch (aethKind(syndrome)) {
    case AethKind.ACK: {
      if (t.wqeKind[slot] === WqeKind.READ) {
        // An ACK inside a READ's range: its responses were lost (implied NAK).
        errorRetry(core, t, false);
        return;
      }
      t.ackPsn = psnAdd(psn, 1);
      progress(t);
      if (psn === psnAdd(t.wqeStartPsn[slot]!, t.wqePackets[slot]! - 1)) completeWqe(core, t, slot, CqReqStatus.OK);
      restartAckTimer(core, t);
      return;
    }
    case AethKind.RNR_NAK: {
      core.counters.rnrNaksReceived++;
      // The NAK acknowledges every PSN before its own.
      if (psnDiff(psn, t.ackPsn) > 0) t.ackPsn = psn;
      rnrRetry(core, t, aethValue(syndrome));
      return;
    }
    case AethKind.NAK: {
      const code = aethValue(syndrome);
      if (code === NakCode.PSN_SEQUENCE_ERROR) {
        core.counters.seqNaksReceived++;
        if (psnDiff(psn, t.ackPsn) > 0) {
          t.ackPsn = psn;
          progress(t);
        }
        errorRetry(core, t, false);
        return;
      }
      core.counters.naksReceived++;
      if (psnDiff(psn, t.ackPsn) > 0) t.ackPsn = psn;
      // The WQE the NAK names completes in error and the QP goes to ERR (rxe: COMPST_ERROR).
      failSendHead(core, t, nakStatus(code),
        ReqErrStateReason.REQ_NAK_ARRIVAL_1 + (code > 0 && code <= 4 ? code - 1 : 2));
      return;
    }
    default:
      core.counters.dropUnexpectedResponse++;
  }
}

/** Requester status of a NAK code (IBA Table 44 -> roce_hsi.h CQ_REQ_STATUS_*). */
function nakStatus(code: number): number {
  switch (code) {
    case NakCode.INVALID_REQUEST: return CqReqStatus.REMOTE_INVALID_REQUEST_ERR;
    case NakCode.REMOTE_ACCESS_ERROR: return CqReqStatus.REMOTE_ACCESS_ERR;
    case NakCode.INVALID_RD_REQUEST: return CqReqStatus.REMOTE_INVALID_REQUEST_ERR;
    default: return CqReqStatus.REMOTE_OPERATION_ERR;
  }
}

/** READ: one response packet of the head READ WQE. */
function readResponse(core: EngineCore, t: QpTransport, slot: number, frame: Uint8Array): void {
  const f = core.port.rxf;
  if (t.wqeKind[slot] !== WqeKind.READ) {
    failSendHead(core, t, CqReqStatus.BAD_RESPONSE_ERR, ReqErrStateReason.REQ_INVALID_READ_RESP);
    return;
  }
  if (psnDiff(f.psn, t.ackPsn) > 0) {
    // Responses before this one are missing: ask again from the first missing PSN.
    errorRetry(core, t, false);
    return;
  }
  const packets = t.wqePackets[slot]!;
  const index = psnDiff(f.psn, t.wqeStartPsn[slot]!);
  const last = index === packets - 1;
  const op = f.opcode;
  // FIRST/MIDDLE before the last PSN, LAST/ONLY at it (a replay from mid-range restarts with MIDDLE).
  const inOrder = last
    ? op === Opcode.RC_RDMA_READ_RESPONSE_LAST || op === Opcode.RC_RDMA_READ_RESPONSE_ONLY
    : op === Opcode.RC_RDMA_READ_RESPONSE_MIDDLE || op === Opcode.RC_RDMA_READ_RESPONSE_FIRST;
  if (!inOrder || ((OPCODE_FLAGS[op]! & OpFlag.AETH) !== 0 && aethKind(f.aethSyndrome) !== AethKind.ACK)) {
    failSendHead(core, t, CqReqStatus.BAD_RESPONSE_ERR, ReqErrStateReason.REQ_INVALID_READ_RESP);
    return;
  }
  const offset = index * t.mtu;
  const expected = last ? t.wqeLength[slot]! - offset : t.mtu;
  if (f.payloadLength !== expected) {
    failSendHead(core, t, CqReqStatus.BAD_RESPONSE_ERR, ReqErrStateReason.REQ_READ_RESP_LENGTH);
    return;
  }
  if (!core.mayWrite(t)) return;
  if (t.rdLoaded !== t.compWqe) {
    const status = loadWqeSgl(core, t, slot, t.rdSgl);
    if (status !== 0) {
      failSendHead(core, t, status, t.localFailReason);
      return;
    }
    t.rdLoaded = t.compWqe;
  }
  const copied = copySgl(core.iommu, core.tables, t.rdSgl, offset, expected, frame, f.payloadOffset, true);
  if (copied !== SglError.OK) {
    // The READ's destination region was deregistered (checked on every response) or its memory went away.
    if (copied === SglError.FAULT) core.counters.dmaFaults++;
    failSendHead(core, t, CqReqStatus.LOCAL_PROTECTION_ERR,
      copied === SglError.FAULT ? ReqErrStateReason.REQ_RX_PCI_ERROR : ReqErrStateReason.REQ_RX_MEMORY_ERROR);
    return;
  }
  t.ackPsn = psnAdd(f.psn, 1);
  progress(t);
  if (last) completeWqe(core, t, slot, CqReqStatus.OK);
  restartAckTimer(core, t);
}

/**
 * COMPLETE: the head WQE is done with `status`. A CQE is written for a signalled WQE or a
 * failure; sq_cons_idx as QpTransport.reqConsIdx says (read as qplib_fp.c bnxt_qplib_cq_process_req
 * reads it). False if the CQ overflowed (the QP then fails).
 */
function completeWqe(core: EngineCore, t: QpTransport, slot: number, status: number): boolean {
  if ((t.wqeFlags[slot]! & WqeFlags.SIGNAL_COMP) !== 0 || status !== CqReqStatus.OK) {
    if (!writeReqCqe(core, t, t.reqConsIdx(t.compWqe, status), status)) {
      core.counters.cqOverflows++;
      enterError(core, t, ReqErrStateReason.REQ_CMP_ERROR, 0, true);
      return false;
    }
  }
  if (t.wqeKind[slot] === WqeKind.READ) t.readsOutstanding--;
  const end = t.wqeEndPsn(slot);
  if (psnDiff(end, t.ackPsn) > 0) t.ackPsn = end;
  if (t.rdLoaded === t.compWqe) t.rdLoaded = -1;
  t.compWqe++;
  // A retransmission that had not got this far yet restarts after it.
  if (t.txWqe < t.compWqe) {
    t.txWqe = t.compWqe;
    t.txPsn = t.ackPsn;
  }
  progress(t);
  // The next one may be a WQE that failed locally: its turn has come.
  checkHead(core, t);
  return true;
}

/** Forward progress: the retry counters start again (rxe: reset_retry_counters). */
function progress(t: QpTransport): void {
  t.retryLeft = t.qp.retryCnt & 7;
  t.rnrLeft = t.qp.rnrRetry & 7;
  t.retryStarted = false;
  if (t.recoveryEndPsn < 0) t.rnrProbe = false;
  else if (psnDiff(t.ackPsn, t.recoveryEndPsn) >= 0) endRecovery(t);
  else if (psnDiff(t.ackPsn, t.txPsn) > 0 && t.recoveryTxWqe >= t.compWqe) {
    // Acknowledged beyond what was resent: the packets sent before the timeout are arriving, the
    // timeout was only a late answer, and sending goes on where it stood, not through them again.
    endRecovery(t);
    t.txWqe = t.recoveryTxWqe;
    t.txPsn = t.recoveryTxPsn;
    return;
  }
  if (psnDiff(t.txPsn, t.ackPsn) < 0) t.txPsn = t.ackPsn;
}

function endRecovery(t: QpTransport): void {
  t.recoveryEndPsn = -1;
  t.rnrProbe = false;
}

/** Read through a call so the compiler does not keep the state narrowed from before it. */
function inError(t: QpTransport): boolean {
  return t.reqState === ReqState.ERROR;
}

/** A failed WQE at the head of the ring completes with its error now (all before it are done). */
export function checkHead(core: EngineCore, t: QpTransport): void {
  if (t.reqState === ReqState.ERROR || t.compWqe >= t.fetchedWqe) return;
  const slot = t.sqSlot(t.compWqe);
  const status = t.wqeStatus[slot]!;
  if (status !== 0) failSendHead(core, t, status, t.localFailReason);
}

/**
 * ERROR_RETRY: go back to the oldest unacknowledged PSN and send again. A NAK or a gap starts
 * one retry per episode (until progress); every ACK timeout is one. After retry_cnt of them,
 * the oldest WQE fails.
 *
 * A NAK (or a READ response past a gap) says what is missing: everything from its PSN is sent
 * again at once (go-back-N). An ACK timeout says only that no answer came in time, which a
 * slow responder causes as well as a loss: the requester resends the oldest packet alone
 * (asking for an ACK) and, until everything sent before the timeout is acknowledged, one more
 * each time an ACK arrives; an ACK for a PSN it has not resent yet shows the originals were
 * only late, and it goes on after them (progress above). A responder slower than the timeout
 * then gets one extra packet per timeout instead of the window again: resending the window
 * queued up to 128 stale copies ahead of each resend at a soft-RoCE guest descheduled for
 * 67 ms, until 7 timeouts passed with no progress and the send failed "retry exceeded"
 * (docs/hardware.md, "After an ACK timeout"). IBA 9.7.6.1 fixes where a retransmission starts
 * (the oldest unacknowledged PSN) and when (timeout or NAK), not how fast the rest follows.
 *
 * The ACK timer starts when the resent packet leaves (requester.ts sendPacket), not here: a
 * timer started before the resend would expire that much less than a timeout after it.
 */
export function errorRetry(core: EngineCore, t: QpTransport, fromTimeout: boolean): void {
  if (t.compWqe === t.fetchedWqe) return;
  if (t.retryStarted && !fromTimeout) return;
  if (t.retryLeft === 0) {
    failSendHead(core, t, CqReqStatus.TRANSPORT_RETRY_CNT_ERR, ReqErrStateReason.REQ_TIMEOUT_RETRY_LIMIT);
    return;
  }
  t.retryLeft--;
  t.retryStarted = true;
  core.counters.retransmitEvents++;
  if (fromTimeout) {
    if (t.recoveryEndPsn < 0) {
      t.recoveryEndPsn = t.sentHighPsn;
      t.recoveryTxWqe = t.txWqe;
      t.recoveryTxPsn = t.txPsn;
    }
    t.rnrProbe = true;
  } else if (t.recoveryEndPsn >= 0) {
    endRecovery(t);
  }
  if (!rewind(core, t, t.ackPsn)) return;
  t.ackDeadlineNs = Infinity;
}

/**
 * RNR_RETRY: wait the RNR timer, then resend from the NAKed PSN; rnr_retry 7 retries forever.
 *
 * Two counters, as IBA keeps them apart: RNR NAKs spend rnr_retry; retry_cnt counts the times
 * the requester heard nothing (ACK timeouts) or was told a packet went missing (sequence NAKs).
 * An RNR NAK for the oldest unacknowledged PSN is the responder's answer to that very packet,
 * so the requester has heard from it: retry_cnt starts again, as on any response that shows the
 * responder alive (rxe's reset_retry_counters on ACKs). Without that, a send waiting for a late
 * receive fails "retry exceeded" once 8 of its resends were lost on the way, over any length
 * of waiting, while the spec retries it "without end" (docs/hardware.md, RNR waits).
 *
 * After the timer only the NAKed packet goes out (with AckReq), and the rest of the window
 * once it is acknowledged: one packet per RNR timer instead of a window each time, so a long
 * wait costs the peer one frame per period and a lossy link is not flooded (a window of 4 KiB
 * packets overflowed a UDP socket's buffer, losing the very resends the wait depends on).
 */
function rnrRetry(core: EngineCore, t: QpTransport, timerCode: number): void {
  const forever = (t.qp.rnrRetry & 7) === 7;
  if (!forever && t.rnrLeft === 0) {
    failSendHead(core, t, CqReqStatus.RNR_NAK_RETRY_CNT_ERR, ReqErrStateReason.REQ_RNR_TIMEOUT_RETRY_LIMIT);
    return;
  }
  if (!forever) t.rnrLeft--;
  t.retryLeft = t.qp.retryCnt & 7;
  t.retryStarted = false;
  t.recoveryEndPsn = -1;
  t.rnrProbe = true;
  if (!rewind(core, t, t.ackPsn)) return;
  if (t.reqState === ReqState.READY) t.setReqState(ReqState.RNR_WAIT);
  startRnrTimer(core, t, timerCode);
}

/** The ACK timer expired with packets outstanding. */
export function onAckTimeout(core: EngineCore, t: QpTransport): void {
  t.ackDeadlineNs = Infinity;
  if (t.reqState !== ReqState.READY || t.compWqe === t.fetchedWqe) return;
  core.counters.ackTimeouts++;
  errorRetry(core, t, true);
}

/** The RNR timer expired: sending resumes from the NAKed PSN. */
export function onRnrTimer(t: QpTransport): void {
  t.rnrDeadlineNs = Infinity;
  if (t.reqState === ReqState.RNR_WAIT) t.setReqState(ReqState.READY);
}

/**
 * Points the requester at the packet with PSN `psn` (go-back-N): by the driver's MSN table
 * where the QP has one, else by the WQEs' PSN ranges. False if the QP failed on the way.
 */
function rewind(core: EngineCore, t: QpTransport, psn: number): boolean {
  if (t.qp.msnEntries > 0 && psnDiff(psn, t.nextNewPsn) < 0) return rewindFromMsnTable(core, t, psn);
  let w = t.compWqe;
  while (w < t.fetchedWqe && psnDiff(psn, t.wqeEndPsn(t.sqSlot(w))) >= 0) w++;
  t.txWqe = w;
  t.txPsn = w < t.fetchedWqe ? psn : t.nextNewPsn;
  return true;
}
