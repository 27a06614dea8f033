/**
 * The requester (rxe: rxe_req.c): for a QP in RTS, walks the send ring from the next packet
 * to (re)send to the last WQE posted, turning each WQE into packets:
 *
 *   GET_WQE    read the next WQE's header, give it its PSNs (packets = ceil(length / MTU),
 *              at least 1; a READ takes as many PSNs as its responses)
 *   LOAD       resolve its remote address and local SGEs (again, for a retransmission)
 *   SEND       one packet: SEND/WRITE FIRST, MIDDLE, LAST or ONLY with up to one path MTU of
 *              payload gathered from host memory, or one READ REQUEST with its RETH
 *
 * It stops at a full window of unacknowledged PSNs, at the read limit (ORD), at a fence, at a
 * WQE that failed locally (the completer fails it in order), and when the port has no room.
 * Go-back-N retransmission is the completer moving (txWqe, txPsn) back; this code just
 * sends from wherever they point.
 */
import { WqeFlags, WqeType } from '../../../../firmware-hwrm/roce/wqe.ts';
import { CqReqStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ReqErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import { Opcode, payloadOffsetFor } from '../wire/index.ts';
import { ReqState } from './states.ts';
import { EmuQpState } from '../objects.ts';
import { psnAdd, psnDiff, psnPackets } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import { SglError, copySgl } from './sgl.ts';
import { loadFetchedWqe, loadWqe, readWqeHeader } from './sq-wqe.ts';
import { startAckTimer } from './timers.ts';
import { checkHead } from './completer.ts';
import { WqeKind, type QpTransport } from './transport.ts';
import type { EngineCore } from './core.ts';

/** Unacknowledged PSNs a QP may have in flight (rxe: RXE_MAX_UNACKED_PSNS). */
export const WINDOW_PSNS = 128;
/** Inside a long message, every this many packets asks for an ACK so the window keeps moving. */
const ACK_REQ_EVERY = 32;
/**
 * Packets one QP sends per turn before the next QP's turn. Small enough that a responder that
 * works through its input in order answers every QP often: with 64, two QPs' windows reached a
 * slow soft-RoCE guest as runs of 64 packets each, and the second QP heard nothing while the
 * guest worked through the first one's run (530 ms at 120 packets/s, past 7 ACK timeouts).
 */
const PACKETS_PER_TURN = 16;

const GET_WQE_FETCHED = 0;
const GET_WQE_WAIT = 1;
const GET_WQE_FAILED = 2;

/** Sends what QP `t` may send now; returns the number of packets sent. */
export function requesterStep(core: EngineCore, t: QpTransport): number {
  if (t.reqState !== ReqState.READY) return 0;
  const port = core.port;
  let sent = 0;
  while (sent < PACKETS_PER_TURN && port.requestRoom() > 0) {
    if (t.txWqe === t.fetchedWqe) {
      // SQD (send queue drain): no new WQE starts.
      if (t.fetchedWqe === t.sqProducer || t.qp.state === EmuQpState.SQD) break;
      if (getWqe(core, t) !== GET_WQE_FETCHED) break;
    }
    const slot = t.sqSlot(t.txWqe);
    // A WQE that failed locally is never sent; the completer fails it once it is the oldest.
    if (t.wqeStatus[slot] !== 0) break;
    // The window; after an RNR NAK, one packet until it is acknowledged (completer.ts rnrRetry).
    if (psnDiff(t.txPsn, t.ackPsn) >= (t.rnrProbe ? 1 : WINDOW_PSNS)) break;
    if (t.txLoaded !== t.txWqe && !load(core, t, slot, undefined, 0)) break;
    if (!sendPacket(core, t, slot)) break;
    sent++;
  }
  return sent;
}

/** GET_WQE: reads the header of WQE fetchedWqe and assigns its PSN range. */
function getWqe(core: EngineCore, t: QpTransport): number {
  const slot = t.sqSlot(t.fetchedWqe);
  const header = readWqeHeader(core, t, slot);
  const w = core.iommu.wordOffset;
  if (header === undefined) {
    core.counters.dmaFaults++;
    t.wqeKind[slot] = WqeKind.INVALID;
  }
  const kind = t.wqeKind[slot]!;
  // IBA: no more RDMA READs outstanding than the initiator depth (ORD = max_rd_atomic - 1 here).
  const ord = t.qp.maxRdAtomic > 1 ? t.qp.maxRdAtomic - 1 : 1;
  if (kind === WqeKind.READ && t.readsOutstanding >= ord) return GET_WQE_WAIT;
  // IBA fence indicator: a fenced WQE waits until every earlier READ has completed.
  if ((t.wqeFlags[slot]! & WqeFlags.UC_FENCE) !== 0 && t.readsOutstanding > 0) return GET_WQE_WAIT;
  const length = t.wqeLength[slot]!;
  const packets = psnPackets(length, t.mtu);
  t.wqeStartPsn[slot] = t.nextNewPsn;
  t.wqePackets[slot] = kind === WqeKind.INVALID ? 0 : packets;
  t.nextNewPsn = psnAdd(t.nextNewPsn, t.wqePackets[slot]!);
  t.fetchedWqe++;
  if (kind === WqeKind.READ) t.readsOutstanding++;
  if (!load(core, t, slot, header, w)) return GET_WQE_FAILED;
  return GET_WQE_FETCHED;
}

/**
 * LOAD: the WQE's remote address and local data; a refusal fails the WQE (in order, by the completer).
 * `header` (word `w`): its header's words as GET_WQE has just read them, or undefined to look them up.
 */
function load(core: EngineCore, t: QpTransport, slot: number, header: Uint32Array | undefined, w: number): boolean {
  const status = header !== undefined ? loadFetchedWqe(core, t, slot, t.txSgl, header, w)
    : loadWqe(core, t, slot, t.txSgl);
  if (status !== 0) {
    t.wqeStatus[slot] = status;
    t.txLoaded = -1;
    checkHead(core, t);
    return false;
  }
  t.txLoaded = t.txWqe;
  return true;
}

/** SEND: one packet of WQE `slot` at txPsn. */
function sendPacket(core: EngineCore, t: QpTransport, slot: number): boolean {
  const port = core.port;
  const f = port.txf;
  const kind = t.wqeKind[slot]!;
  const start = t.wqeStartPsn[slot]!;
  const packets = t.wqePackets[slot]!;
  const length = t.wqeLength[slot]!;
  const index = psnDiff(t.txPsn, start);
  const offset = index * t.mtu;
  const retransmission = psnDiff(t.txPsn, t.sentHighPsn) < 0;
  f.psn = t.txPsn;
  f.se = 0;
  if (kind === WqeKind.READ) {
    // One READ REQUEST for the responses still missing, from this PSN on: a retry of a partly
    // answered READ asks for the rest only, with the address and length moved on (as rxe's req_retry).
    f.opcode = Opcode.RC_RDMA_READ_REQUEST;
    f.ackReq = 1;
    setReth(t, f, offset, length - offset);
    port.send(t, 0);
    t.txPsn = psnAdd(start, packets);
    t.txWqe++;
  } else {
    const first = index === 0;
    const last = index === packets - 1;
    const withImm = t.wqeType[slot] === WqeType.SEND_W_IMMEAD || t.wqeType[slot] === WqeType.WRITE_W_IMMEAD;
    const opcode = kind === WqeKind.SEND ? sendOpcode(first, last, withImm) : writeOpcode(first, last, withImm);
    const n = last ? length - offset : t.mtu;
    const copied = n > 0
      ? copySgl(core.iommu, core.tables, t.txSgl, offset, n, port.txBuf, payloadOffsetFor(opcode), false) : SglError.OK;
    if (copied !== SglError.OK) {
      // The payload's region was deregistered under the WQE (checked on every packet), or its
      // memory went away: the WQE fails here, and nothing more of it is sent.
      if (copied === SglError.FAULT) core.counters.dmaFaults++;
      t.wqeStatus[slot] = CqReqStatus.LOCAL_PROTECTION_ERR;
      t.localFailReason = copied === SglError.FAULT ? ReqErrStateReason.REQ_TX_PCI_ERROR
        : ReqErrStateReason.REQ_TX_MEMORY_ERROR;
      checkHead(core, t);
      return false;
    }
    f.opcode = opcode;
    // AckReq on the last packet of a message (as rdma_rxe sets it: rxe_req.c, RXE_END_MASK), and now and then inside a
    // long one.
    // An RNR probe asks too: its ACK is what opens the window again.
    f.ackReq = last || t.rnrProbe || (index + 1) % ACK_REQ_EVERY === 0 ? 1 : 0;
    if (last && (t.wqeFlags[slot]! & WqeFlags.SE) !== 0) f.se = 1;
    if (last && withImm) f.immDt = t.txImm;
    if (first && kind === WqeKind.WRITE) setReth(t, f, 0, length);
    port.send(t, n);
    t.txPsn = psnAdd(t.txPsn, 1);
    if (last) t.txWqe++;
  }
  core.counters.packetsSent++;
  if (retransmission) core.counters.packetsRetransmitted++;
  if (psnDiff(t.txPsn, t.sentHighPsn) > 0) t.sentHighPsn = t.txPsn;
  startAckTimer(core, t);
  return true;
}

/** RETH for the bytes from `offset` of the WQE's remote range (64-bit address as halves). */
function setReth(
  t: QpTransport, f: { rethVaHi: number; rethVaLo: number; rethRkey: number; rethDmaLength: number }, offset: number,
  length: number,
): void {
  const lo = t.txRemoteVaLo + offset;
  f.rethVaLo = lo >>> 0;
  f.rethVaHi = (t.txRemoteVaHi + Math.floor(lo / 4294967296)) >>> 0;
  f.rethRkey = t.txRkey;
  f.rethDmaLength = length >>> 0;
}

function sendOpcode(first: boolean, last: boolean, imm: boolean): number {
  if (first && last) return imm ? Opcode.RC_SEND_ONLY_WITH_IMMEDIATE : Opcode.RC_SEND_ONLY;
  if (first) return Opcode.RC_SEND_FIRST;
  if (last) return imm ? Opcode.RC_SEND_LAST_WITH_IMMEDIATE : Opcode.RC_SEND_LAST;
  return Opcode.RC_SEND_MIDDLE;
}

function writeOpcode(first: boolean, last: boolean, imm: boolean): number {
  if (first && last) return imm ? Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE : Opcode.RC_RDMA_WRITE_ONLY;
  if (first) return Opcode.RC_RDMA_WRITE_FIRST;
  if (last) return imm ? Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE : Opcode.RC_RDMA_WRITE_LAST;
  return Opcode.RC_RDMA_WRITE_MIDDLE;
}
