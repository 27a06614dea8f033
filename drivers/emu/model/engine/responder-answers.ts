/**
 * What the responder (responder.ts) sends back and how its errors end: ACKNOWLEDGE packets (ACK, and
 * the sequence and RNR NAKs that may have to wait behind read responses), and the Class A/C errors
 * of the IBA reliable service (chapter 9.7.5): one NAK for the packet at hand, then the QP fails,
 * with the QP error reason the firmware reports for each kind of refused range.
 */
import { CqResRcStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ResErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import { AETH_SYNDROME_ACK, NakCode, Opcode, nakSyndrome } from '../wire/index.ts';
import { SglError } from './sgl.ts';
import { failReceive, failResponder } from './flush.ts';
import type { QpTransport } from './transport.ts';
import type { EngineCore } from './core.ts';

/** A sequence or RNR NAK: sent now, or after the read responses it must follow. */
export function sendNak(core: EngineCore, t: QpTransport, syndrome: number, psn: number): void {
  if (t.outHead === t.outTail) {
    sendAck(core, t, syndrome, psn);
    t.pendingAck = false; // the NAK acknowledges every earlier PSN
    return;
  }
  t.pendingNak = true;
  t.pendingNakSyndrome = syndrome;
  t.pendingNakPsn = psn;
  core.scheduleOutput(t);
}

/** An ACKNOWLEDGE packet (ACK or NAK) with the current MSN. */
export function sendAck(core: EngineCore, t: QpTransport, syndrome: number, psn: number): void {
  const f = core.port.txf;
  f.opcode = Opcode.RC_ACKNOWLEDGE;
  f.psn = psn;
  f.ackReq = 0;
  f.se = 0;
  f.aethSyndrome = syndrome;
  f.aethMsn = t.msn;
  core.port.send(t, 0);
  if (syndrome !== AETH_SYNDROME_ACK) core.counters.naksSent++;
}

/** A request IBA calls invalid: NAK Invalid Request, a receive it took completes REMOTE_INVALID_REQUEST_ERR. */
export function invalidRequest(core: EngineCore, t: QpTransport, resReason: number): void {
  classError(core, t, NakCode.INVALID_REQUEST, CqResRcStatus.REMOTE_INVALID_REQUEST_ERR, resReason);
}

/**
 * Class A/C errors: one NAK for the packet at hand, then the QP fails. The receive in
 * progress (or, with `receive`, the one just taken) completes with `recvStatus`.
 */
export function classError(
  core: EngineCore, t: QpTransport, nakCode: number, recvStatus: number, resReason: number, receive = false,
): void {
  classErrorAt(core, t, nakCode, core.port.rxf.psn, resReason, recvStatus, receive || t.recvActive);
}

export function classErrorAt(
  core: EngineCore, t: QpTransport, nakCode: number, psn: number, resReason: number, recvStatus = 0, receive = false,
): void {
  sendAck(core, t, nakSyndrome(nakCode), psn);
  if (receive && recvStatus !== 0) failReceive(core, t, recvStatus, t.recvOffset, resReason);
  else failResponder(core, t, resReason);
}

/** QP error reasons for a refused READ range (the responder transmits from it: RES_TX_*). */
export function txKeyReason(status: number): number {
  switch (status) {
    case SglError.KEY: return ResErrStateReason.RES_TX_INVALID_R_KEY;
    case SglError.DOMAIN: return ResErrStateReason.RES_TX_DOMAIN_ERROR;
    case SglError.ACCESS: return ResErrStateReason.RES_TX_NO_PERMISSION;
    default: return ResErrStateReason.RES_TX_RANGE_ERROR;
  }
}

/** ...and for a refused WRITE range (the responder receives into it: RES_RX_*). */
export function rxKeyReason(status: number): number {
  switch (status) {
    case SglError.KEY: return ResErrStateReason.RES_RX_INVALID_R_KEY;
    case SglError.DOMAIN: return ResErrStateReason.RES_RX_DOMAIN_ERROR;
    case SglError.ACCESS: return ResErrStateReason.RES_RX_NO_PERMISSION;
    default: return ResErrStateReason.RES_RX_RANGE_ERROR;
  }
}