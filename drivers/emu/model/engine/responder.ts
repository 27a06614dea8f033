/**
 * The responder (rxe: rxe_resp.c): takes the requests sent to a QP in RTR/RTS, in PSN order,
 * through the checks of the IBA reliable service (chapter 9.7) as rxe names them:
 *
 *   CHK_PSN       the expected PSN goes on; an earlier one is a duplicate (DUPLICATE_REQUEST);
 *                 a later one is a sequence error: one NAK, then silence until the expected
 *                 PSN arrives (rxe: sent_psn_nak, "Class B")
 *   CHK_OP_SEQ    FIRST, MIDDLE..., LAST of one message, nothing in between ("Class C")
 *   CHK_OP_VALID  the QP grants the operation (REMOTE_READ / REMOTE_WRITE)
 *   CHK_RESOURCE  a SEND's first packet takes the next receive WQE; none: RNR NAK
 *   CHK_LENGTH    FIRST/MIDDLE carry exactly one path MTU, LAST/ONLY at most one
 *   CHK_RKEY      READ/WRITE: the region exists, is in the QP's domain, grants the access, holds the range
 *   EXECUTE       payload into the receive's SGEs or the region; READ: queue the responses
 *   COMPLETE      the message's last packet completes the receive (responder CQE)
 *   ACKNOWLEDGE   on AckReq; ACKs are coalesced to one per batch of frames, PSN = the last
 *                 request done, MSN = messages completed, credits 31 (rxe_resp.c: AETH_ACK_UNLIMITED)
 *
 * Errors of Class A and C (invalid request, remote access, remote operational) answer one
 * NAK and fail the QP; the receive in progress, if any, completes with the error.
 */
import { CqResRcFlags, CqResRcStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ResErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import { MrAccess } from '../../../../firmware-hwrm/roce/commands-mr.ts';
import { QpAccess } from '../../../../firmware-hwrm/roce/commands-qp.ts';
import { TWO_POW_32 } from '../../../../firmware-hwrm/words.ts';
import {
  AETH_SYNDROME_ACK, NakCode, Opcode, OpFlag, OPCODE_FLAGS, nakSyndrome, payloadOffsetFor, rnrNakSyndrome,
} from '../wire/index.ts';
import { RespState } from './states.ts';
import { MAX_MESSAGE_BYTES, psnAdd, psnDiff, psnPackets } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import {
  SglError, checkRange, copyRegion, copySgl, regionOffset, stillRegistered,
} from './sgl.ts';
import { READ_CONTEXTS, type QpTransport } from './transport.ts';
import type { EngineCore } from './core.ts';
import {
  classError, classErrorAt, invalidRequest, rxKeyReason, sendAck, sendNak, txKeyReason,
} from './responder-answers.ts';
import { completeReceive, loadReceive } from './responder-receive.ts';

const OUT_QUEUE = READ_CONTEXTS * 2;

/** A request for QP `t`'s responder, parsed into core.port.rxf; its payload is in `frame`. */
export function responderReceive(core: EngineCore, t: QpTransport, frame: Uint8Array): void {
  const f = core.port.rxf;
  if (t.respState !== RespState.READY) {
    core.counters.dropQpNotReady++;
    return;
  }
  // CHK_PSN
  const d = psnDiff(f.psn, t.ePsn);
  if (d > 0) {
    if (t.nakSent) {
      core.counters.dropOutOfSequence++;
      return;
    }
    t.nakSent = true;
    core.counters.seqNaksSent++;
    sendNak(core, t, nakSyndrome(NakCode.PSN_SEQUENCE_ERROR), t.ePsn);
    return;
  }
  if (d < 0) {
    duplicateRequest(core, t);
    return;
  }
  t.nakSent = false;
  const op = f.opcode;
  const flags = OPCODE_FLAGS[op]!;
  // CHK_OP_SEQ
  if (!opcodeFollows(t.lastOpcode, flags)) {
    invalidRequest(core, t, ResErrStateReason.RES_OPCODE_ERROR);
    return;
  }
  // CHK_OP_VALID: atomics and SEND with invalidate are not served by this model.
  if ((flags & (OpFlag.ATOMIC | OpFlag.IETH)) !== 0) {
    invalidRequest(core, t, ResErrStateReason.RES_UNSUPPORTED_OPCODE);
    return;
  }
  if ((flags & OpFlag.READ) !== 0 && (t.qp.access & QpAccess.REMOTE_READ) === 0) {
    classError(core, t, NakCode.REMOTE_ACCESS_ERROR, 0, ResErrStateReason.RES_TX_NO_PERMISSION);
    return;
  }
  if ((flags & OpFlag.WRITE) !== 0 && (t.qp.access & QpAccess.REMOTE_WRITE) === 0) {
    classError(core, t, NakCode.REMOTE_ACCESS_ERROR, 0, ResErrStateReason.RES_RX_NO_PERMISSION);
    return;
  }
  // CHK_RESOURCE: a SEND's first packet, and a WRITE's immediate, take a receive WQE.
  const takesReceive = ((flags & OpFlag.SEND) !== 0 && (flags & OpFlag.FIRST) !== 0) ||
    ((flags & OpFlag.WRITE) !== 0 && (flags & OpFlag.IMMDT) !== 0);
  if (takesReceive && !t.recvActive) {
    if (t.rqConsumer === t.rqProducer) {
      // IBA: Receiver Not Ready; the requester retries after the advertised delay.
      t.nakSent = true;
      core.counters.rnrNaksSent++;
      sendNak(core, t, rnrNakSyndrome(t.qp.minRnrTimer), f.psn);
      return;
    }
    if (!loadReceive(core, t)) return;
  }
  // CHK_LENGTH
  if ((flags & OpFlag.PAYLOAD) !== 0 && !payloadFits(flags, f.payloadLength, t.mtu)) {
    invalidRequest(core, t, ResErrStateReason.RES_PAYLOAD_LENGTH_MISMATCH);
    return;
  }
  if ((flags & OpFlag.RETH) !== 0 && f.rethDmaLength > MAX_MESSAGE_BYTES) {
    invalidRequest(core, t, ResErrStateReason.RES_EXCEED_MAX);
    return;
  }
  // CHK_RKEY and EXECUTE
  if ((flags & OpFlag.SEND) !== 0) executeSend(core, t, frame, flags);
  else if ((flags & OpFlag.WRITE) !== 0) executeWrite(core, t, frame, flags);
  else executeRead(core, t);
}

/** CHK_OP_SEQ: after SEND/WRITE FIRST or MIDDLE only MIDDLE or LAST of the same kind; else a message's start. */
function opcodeFollows(lastOpcode: number, flags: number): boolean {
  if (lastOpcode < 0) return (flags & OpFlag.FIRST) !== 0;
  const kind = OPCODE_FLAGS[lastOpcode]! & (OpFlag.SEND | OpFlag.WRITE);
  return (flags & kind) !== 0 && (flags & (OpFlag.MIDDLE | OpFlag.LAST)) !== 0 && (flags & OpFlag.FIRST) === 0;
}

/** CHK_LENGTH (rxe check_length): ONLY <= MTU, FIRST/MIDDLE = MTU, LAST 1..MTU. */
function payloadFits(flags: number, payload: number, mtu: number): boolean {
  const first = (flags & OpFlag.FIRST) !== 0;
  const last = (flags & OpFlag.LAST) !== 0;
  if (first && last) return payload <= mtu;
  if (first || (flags & OpFlag.MIDDLE) !== 0) return payload === mtu;
  return payload > 0 && payload <= mtu;
}

/** EXECUTE a SEND packet: payload into the receive's SGEs; the last one completes the receive. */
function executeSend(core: EngineCore, t: QpTransport, frame: Uint8Array, flags: number): void {
  const f = core.port.rxf;
  const n = f.payloadLength;
  if (t.recvOffset + n > t.recvSgl.total) {
    // The message is longer than the receive: it fails, and so does the sender (invalid request).
    classError(core, t, NakCode.INVALID_REQUEST, CqResRcStatus.LOCAL_LENGTH_ERR, ResErrStateReason.RES_EXCEEDS_WQE);
    return;
  }
  if (!core.mayWrite(t)) return;
  const copied = n > 0
    ? copySgl(core.iommu, core.tables, t.recvSgl, t.recvOffset, n, frame, f.payloadOffset, true)
    : SglError.OK;
  if (copied !== SglError.OK) {
    // The receive's region was deregistered under it (checked on every packet) or its memory went away.
    if (copied === SglError.FAULT) core.counters.dmaFaults++;
    const reason = copied === SglError.FAULT ? ResErrStateReason.RES_RX_PCI_ERROR : ResErrStateReason.RES_MEMORY_ERROR;
    classError(core, t, NakCode.REMOTE_OPERATIONAL_ERROR, CqResRcStatus.LOCAL_PROTECTION_ERR, reason);
    return;
  }
  t.recvOffset += n;
  if ((flags & OpFlag.LAST) !== 0) {
    const withImm = (flags & OpFlag.IMMDT) !== 0;
    if (!completeReceive(core, t, t.recvOffset, withImm ? f.immDt : 0, withImm ? CqResRcFlags.IMM : 0, f.se !== 0)) {
      return;
    }
  }
  done(core, t, flags);
}

/** EXECUTE an RDMA WRITE packet: payload into the region its RETH named. */
function executeWrite(core: EngineCore, t: QpTransport, frame: Uint8Array, flags: number): void {
  const f = core.port.rxf;
  const n = f.payloadLength;
  if ((flags & OpFlag.FIRST) !== 0) {
    const length = f.rethDmaLength;
    const va = f.rethVaHi * TWO_POW_32 + f.rethVaLo;
    t.writeMr = null;
    t.writeLength = t.writeResid = length;
    if (length > 0) {
      // CHK_RKEY (a zero-length WRITE names no region).
      const mr = core.tables.mr(f.rethRkey);
      const status = checkRange(mr, t.qp.pd, va, length, MrAccess.REMOTE_WRITE);
      if (status !== SglError.OK) {
        classError(core, t, NakCode.REMOTE_ACCESS_ERROR, CqResRcStatus.REMOTE_INVALID_REQUEST_ERR, rxKeyReason(status));
        return;
      }
      t.writeMr = mr!;
      t.writeOffset = regionOffset(mr!, va);
    }
  }
  const last = (flags & OpFlag.LAST) !== 0;
  if (n > t.writeResid || (last && n !== t.writeResid)) {
    invalidRequest(core, t, ResErrStateReason.RES_PAYLOAD_LENGTH_MISMATCH);
    return;
  }
  if (n > 0 && !stillRegistered(core.tables, t.writeMr!)) {
    // The RETH's region was deregistered since the WRITE's first packet (checked on every packet).
    classError(core, t, NakCode.REMOTE_ACCESS_ERROR, CqResRcStatus.REMOTE_INVALID_REQUEST_ERR,
      ResErrStateReason.RES_RX_INVALID_R_KEY);
    return;
  }
  if (!core.mayWrite(t)) return;
  if (n > 0 && !copyRegion(core.iommu, t.writeMr!, t.writeOffset, n, frame, f.payloadOffset, true)) {
    core.counters.dmaFaults++;
    classError(core, t, NakCode.REMOTE_OPERATIONAL_ERROR, CqResRcStatus.LOCAL_PROTECTION_ERR,
      ResErrStateReason.RES_RX_PCI_ERROR);
    return;
  }
  t.writeOffset += n;
  t.writeResid -= n;
  if (last && (flags & OpFlag.IMMDT) !== 0) {
    if (!completeReceive(core, t, t.writeLength, f.immDt, CqResRcFlags.IMM | CqResRcFlags.RDMA, f.se !== 0)) return;
  }
  done(core, t, flags);
}

/** EXECUTE a READ request: checks the range and queues the responses (IBA C9-148: MSN counts it now). */
function executeRead(core: EngineCore, t: QpTransport): void {
  const f = core.port.rxf;
  const length = f.rethDmaLength;
  const va = f.rethVaHi * TWO_POW_32 + f.rethVaLo;
  if (length > 0) {
    const status = checkRange(core.tables.mr(f.rethRkey), t.qp.pd, va, length, MrAccess.REMOTE_READ);
    if (status !== SglError.OK) {
      classError(core, t, NakCode.REMOTE_ACCESS_ERROR, 0, txKeyReason(status));
      return;
    }
  }
  const packets = psnPackets(length, t.mtu);
  // IBA 9.7.5.1: no more READs in flight than the responder depth (IRD) the QP was given. The
  // firmware takes max_dest_rd_atomic as IRRQ slots, 2 x IRD + 2 (Linux bnxt_re qplib_fp.h
  // IRRQ_SLOTS_TO_IRD_LIMIT); a READ beyond it is NAKed Invalid Request. In flight here: new
  // READs whose responses are not all sent yet (a duplicate replays its old entry and takes
  // none), never more than the requester still counts as outstanding, so a requester within
  // its ORD never meets this.
  if (t.rdInFlight >= irdOf(t.qp.maxDestRdAtomic)) {
    core.counters.readsOverIrd++;
    classError(core, t, NakCode.INVALID_REQUEST, 0, ResErrStateReason.RES_IRRQ_OFLOW);
    return;
  }
  const c = t.rdNext;
  if (t.rdQueued[c] !== 0) {
    // More READs waiting for their responses than the responder holds (rxe: ERR_TOO_MANY_RDMA_ATM_REQ).
    classError(core, t, NakCode.INVALID_REQUEST, 0, ResErrStateReason.RES_IRRQ_OFLOW);
    return;
  }
  t.rdNext = (t.rdNext + 1) % READ_CONTEXTS;
  t.rdFirstPsn[c] = f.psn;
  t.rdPackets[c] = packets;
  t.rdVa[c] = va;
  t.rdLength[c] = length;
  t.rdRkey[c] = f.rethRkey;
  t.rdValid[c] = 1;
  t.rdFresh[c] = 1;
  t.rdInFlight++;
  startReadResponses(core, t, c, f.psn, va, length);
  t.msn = (t.msn + 1) & 0xffffff;
  core.counters.messagesReceived++;
  t.ePsn = psnAdd(f.psn, packets);
  t.lastOpcode = -1;
  // The responses acknowledge every earlier request.
  t.pendingAck = false;
}

/** The responder depth (IRD) that MODIFY_QP's max_dest_rd_atomic (IRRQ slots) gives. */
function irdOf(irrqSlots: number): number {
  const ird = (irrqSlots >> 1) - 1;
  return ird > 0 ? ird : 0;
}

/** The request at ePsn is done: the next is expected; AckReq asks for an ACK (coalesced). */
function done(core: EngineCore, t: QpTransport, flags: number): void {
  const f = core.port.rxf;
  t.ePsn = psnAdd(f.psn, 1);
  t.lastOpcode = (flags & OpFlag.LAST) !== 0 ? -1 : f.opcode;
  if ((flags & OpFlag.LAST) !== 0) {
    t.msn = (t.msn + 1) & 0xffffff;
    core.counters.messagesReceived++;
  }
  if (f.ackReq !== 0) {
    t.pendingAck = true;
    core.scheduleOutput(t);
  }
}

/** DUPLICATE_REQUEST: SEND/WRITE are acknowledged again (C9-105), a READ is answered again from memory. */
function duplicateRequest(core: EngineCore, t: QpTransport): void {
  const f = core.port.rxf;
  const flags = OPCODE_FLAGS[f.opcode]!;
  core.counters.duplicateRequests++;
  if ((flags & (OpFlag.SEND | OpFlag.WRITE)) !== 0) {
    t.pendingAck = true;
    core.scheduleOutput(t);
    return;
  }
  if ((flags & OpFlag.READ) === 0) return; // atomics: not served
  for (let c = 0; c < READ_CONTEXTS; c++) {
    if (t.rdValid[c] === 0) continue;
    const first = t.rdFirstPsn[c]!;
    if (psnDiff(f.psn, first) < 0 || psnDiff(f.psn, psnAdd(first, t.rdPackets[c]! - 1)) > 0) continue;
    // The same request or its tail: same key, a range inside the original (rxe duplicate_request).
    const va = f.rethVaHi * TWO_POW_32 + f.rethVaLo;
    const length = f.rethDmaLength;
    if (f.rethRkey !== t.rdRkey[c] || va < t.rdVa[c]! || va + length > t.rdVa[c]! + t.rdLength[c]!) return;
    startReadResponses(core, t, c, f.psn, va, length);
    return;
  }
  // No context covers it (too old): dropped (rxe: Class D).
}

function startReadResponses(
  core: EngineCore, t: QpTransport, c: number, psn: number, va: number, length: number,
): void {
  t.rdCurPsn[c] = psn;
  t.rdCurVa[c] = va;
  t.rdResid[c] = length;
  if (t.rdQueued[c] === 0) {
    if (t.outTail - t.outHead >= OUT_QUEUE) return; // cannot happen: a context is queued at most once
    t.rdQueued[c] = 1;
    t.outQueue[t.outTail % OUT_QUEUE] = c;
    t.outTail++;
  }
  core.scheduleOutput(t);
}

/**
 * Sends what the responder owes, in PSN order: read responses first (as room allows), then a
 * NAK waiting behind them, then the coalesced ACK. True if it sent anything; `t` stays
 * scheduled (outputScheduled) while something is left.
 */
export function responderOutput(core: EngineCore, t: QpTransport): boolean {
  if (t.respState !== RespState.READY) {
    t.pendingAck = t.pendingNak = false;
    t.outHead = t.outTail;
    return false;
  }
  const port = core.port;
  let sent = false;
  while (t.outHead !== t.outTail) {
    const c = t.outQueue[t.outHead % OUT_QUEUE]!;
    const end = psnAdd(t.rdFirstPsn[c]!, t.rdPackets[c]!);
    while (t.rdCurPsn[c] !== end) {
      if (port.room() <= 0) return sent;
      if (!sendReadResponse(core, t, c)) return true;
      sent = true;
    }
    t.rdQueued[c] = 0;
    if (t.rdFresh[c] !== 0) {
      t.rdFresh[c] = 0;
      t.rdInFlight--;
    }
    t.outHead++;
  }
  if (t.pendingNak) {
    t.pendingNak = false;
    // Dropped if the NAKed PSN was done since (the ACK below covers it).
    if (psnDiff(psnAdd(t.ePsn, -1), t.pendingNakPsn) < 0) {
      sendAck(core, t, t.pendingNakSyndrome, t.pendingNakPsn);
      t.pendingAck = false;
      sent = true;
    }
  }
  if (t.pendingAck) {
    t.pendingAck = false;
    sendAck(core, t, AETH_SYNDROME_ACK, psnAdd(t.ePsn, -1));
    core.counters.acksSent++;
    sent = true;
  }
  return sent;
}

/** READ_REPLY: the next response packet of context `c` (payload read from the region again: rxe_recheck_mr). */
function sendReadResponse(core: EngineCore, t: QpTransport, c: number): boolean {
  const port = core.port;
  const f = port.txf;
  const first = t.rdFirstPsn[c]!;
  const cur = t.rdCurPsn[c]!;
  const index = psnDiff(cur, first);
  const last = index === t.rdPackets[c]! - 1;
  const resid = t.rdResid[c]!;
  const n = resid < t.mtu ? resid : t.mtu;
  // A pass that starts at the first PSN is FIRST..LAST or ONLY; a replay from the middle is MIDDLE..LAST.
  const opcode = index === 0
    ? (last ? Opcode.RC_RDMA_READ_RESPONSE_ONLY : Opcode.RC_RDMA_READ_RESPONSE_FIRST)
    : (last ? Opcode.RC_RDMA_READ_RESPONSE_LAST : Opcode.RC_RDMA_READ_RESPONSE_MIDDLE);
  if (n > 0) {
    const mr = core.tables.mr(t.rdRkey[c]!);
    const va = t.rdCurVa[c]!;
    const status = checkRange(mr, t.qp.pd, va, n, MrAccess.REMOTE_READ);
    if (status !== SglError.OK ||
      !copyRegion(core.iommu, mr!, regionOffset(mr!, va), n, port.txBuf, payloadOffsetFor(opcode), false)) {
      if (status === SglError.OK) core.counters.dmaFaults++;
      classErrorAt(core, t, NakCode.REMOTE_ACCESS_ERROR, cur,
        status === SglError.OK ? ResErrStateReason.RES_TX_PCI_ERROR : txKeyReason(status));
      return false;
    }
  }
  f.opcode = opcode;
  f.psn = cur;
  f.ackReq = 0;
  f.se = 0;
  // AETH on FIRST, LAST and ONLY: an ACK with the MSN (IBA 9.4.3; rdma_rxe's read_reply: the request's PSNs and AETH).
  f.aethSyndrome = AETH_SYNDROME_ACK;
  f.aethMsn = t.msn;
  port.send(t, n);
  core.counters.readResponsesSent++;
  t.rdCurPsn[c] = psnAdd(cur, 1);
  t.rdCurVa[c] = t.rdCurVa[c]! + n;
  t.rdResid[c] = resid - n;
  return true;
}
