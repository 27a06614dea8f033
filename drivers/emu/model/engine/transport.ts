/**
 * The engine's per-QP transport state (hung on EmuQp.transport): the requester's and
 * completer's positions on the send ring, the responder's on the receive ring, and their
 * scratch, all numbers and typed arrays made once when the QP is first seen. Indexes called
 * "...Wqe" count WQEs since the QP left RESET (free-running); the ring slot is
 * ringSlot(index, entries) (firmware-hwrm/ring.ts).
 *
 *   send ring:  compWqe ........ txWqe ........ fetchedWqe ........ sqProducer
 *               oldest without   next packet    next WQE to read    posted by the
 *               a completion     to (re)send    from host memory    last SQ doorbell
 *   PSNs:       ackPsn .......... txPsn ........ sentHighPsn / nextNewPsn
 *
 * In variable-size WQE mode (Thor2's default, Linux bnxt_re main.c bnxt_re_set_drv_mode) the
 * send ring is a ring of 16-byte slots and its doorbell names a slot: each WQE takes wqe_size
 * slots, so the doorbell handler walks the headers the driver wrote (doorbells.ts) to learn
 * how many WQEs it posted and where each starts (wqeSlot, free-running in slots).
 */
import type { EmuMr, EmuQp, PagedMemory } from '../objects.ts';
import type { HeaderTemplate } from '../wire/build.ts';
import { ReqState, RespState, checkReqTransition, checkRespTransition } from './states.ts';
import { psnAdd } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import { ringSlot } from '../../../../firmware-hwrm/ring.ts';

/** Static WQE mode: at most 6 SGEs in a 128-byte WQE. */
export const MAX_SGE = 6;
/**
 * Responder read contexts (rxe: resp.resources): the READ requests answered or being answered,
 * kept to replay duplicates. At least the largest IRD a QP may have (126, the firmware's cap).
 */
export const READ_CONTEXTS = 128;

/** What a send WQE does on the wire. */
export const WqeKind = { INVALID: 0, SEND: 1, WRITE: 2, READ: 3 } as const;

/** A resolved scatter/gather list: each SGE's region and byte range in it, plus a cursor for sequential access. */
export class SgList {
  count = 0;
  readonly mr: (EmuMr | null)[] = new Array<EmuMr | null>(MAX_SGE).fill(null);
  /** Byte offset of each SGE's first byte inside its region (va - region va). */
  readonly offset = new Float64Array(MAX_SGE);
  readonly size = new Float64Array(MAX_SGE);
  total = 0;
  /** Inline data (SEND with the INLINE flag): the bytes' offset in the send ring's memory, or -1. */
  inlineOffset = -1;
  inlineMemory: PagedMemory | null = null;
  // Where the next sequential access starts, so a message walks its SGEs once.
  cursorAt = 0;
  cursorSge = 0;
  cursorSgeOffset = 0;

  clear(): void {
    // Entries past count are null already: only the ones in use are let go.
    for (let i = 0; i < this.count; i++) this.mr[i] = null;
    this.count = 0;
    this.total = 0;
    this.inlineOffset = -1;
    this.inlineMemory = null;
    this.cursorAt = 0;
    this.cursorSge = 0;
    this.cursorSgeOffset = 0;
  }
}

export class QpTransport {
  readonly sqEntries: number;
  readonly rqEntries: number;
  /** Effective path MTU in bytes (the QP's, capped by the port's Ethernet MTU). */
  mtu = 1024;
  /** Destination IPv4 address (from the IPv4-mapped destination GID) and this QP's UDP source port. */
  dstIp = 0;
  udpSrcPort = 0;
  /** The headers of this QP's frames as the port last built them (port.ts send; null: none yet). */
  txHeader: HeaderTemplate | null = null;
  /** qpDestroyed was called: nothing more is done for this QP. */
  dead = false;
  /** Position in the engine's list of live transports. */
  listIndex = -1;

  // ---- requester / completer (send ring) ----
  reqState: number = ReqState.OFF;
  sqProducer = 0;
  fetchedWqe = 0;
  txWqe = 0;
  txPsn = 0;
  nextNewPsn = 0;
  sentHighPsn = 0;
  ackPsn = 0;
  compWqe = 0;
  readsOutstanding = 0;
  retryLeft = 0;
  rnrLeft = 0;
  /** A retransmission was started and no progress was seen since (rxe: comp.started_retry). */
  retryStarted = false;
  /**
   * After an RNR NAK the requester resends one packet, the NAKed one (asking for an ACK), and
   * sends more only once it is acknowledged: a peer without a receive gets one packet per RNR
   * timer, not the whole window again each time (completer.ts rnrRetry).
   */
  rnrProbe = false;
  /**
   * After an ACK timeout: one past the highest PSN sent before it (-1: not recovering). Until
   * everything before it is acknowledged the requester resends one packet at a time; an ACK for a
   * PSN it has not resent yet shows the originals were only late, and sending goes on after them
   * (completer.ts errorRetry).
   */
  recoveryEndPsn = -1;
  /** Where sending stood when the recovery began (the WQE and PSN it goes on from if the timeout was only late). */
  recoveryTxWqe = 0;
  recoveryTxPsn = 0;
  /** ACK timeout and RNR timer deadlines in ns (Infinity when stopped). */
  ackDeadlineNs = Infinity;
  rnrDeadlineNs = Infinity;
  /**
   * Per send-ring slot: first PSN, PSNs used, kind, WQE flags, length, local failure status (0 = none).
   * From SlotArrays (taken at creation, given back when the QP is destroyed).
   */
  wqeStartPsn: Int32Array;
  wqePackets: Int32Array;
  wqeKind: Uint8Array;
  wqeFlags: Uint8Array;
  wqeType: Uint8Array;
  wqeLength: Float64Array;
  wqeStatus: Uint8Array;
  /** The WQE whose header and SGEs are loaded for transmission (-1 = none). */
  txLoaded = -1;
  /** The loaded WQE's remote_va as 32-bit halves (the peer's address space is 64-bit). */
  txRemoteVaLo = 0;
  txRemoteVaHi = 0;
  txRkey = 0;
  txImm = 0;
  readonly txSgl = new SgList();
  /** The READ WQE whose destination SGEs are loaded for the completer (-1 = none). */
  rdLoaded = -1;
  readonly rdSgl = new SgList();
  /** QP error reason of the WQE that failed locally (the requester stops at it). */
  localFailReason = 0;
  /** Status the head send WQE completes with when the QP is flushed (0: WORK_REQUEST_FLUSHED). */
  sqFailStatus = 0;
  /** Requester error reason recorded for the QP error notification. */
  reqErrReason = 0;

  // ---- responder (receive ring) ----
  respState: number = RespState.OFF;
  ePsn = 0;
  msn = 0;
  /** Opcode of the last packet of an unfinished SEND/WRITE message, or -1 between messages. */
  lastOpcode = -1;
  /** A sequence or RNR NAK was sent: later out-of-sequence requests are dropped silently. */
  nakSent = false;
  rqProducer = 0;
  rqConsumer = 0;
  /** A SEND is being received into the RQ WQE at rqConsumer. */
  recvActive = false;
  recvWrId = 0;
  recvOffset = 0;
  readonly recvSgl = new SgList();
  /** An RDMA WRITE in progress: its region, next offset in it, bytes left. */
  writeMr: EmuMr | null = null;
  writeOffset = 0;
  writeResid = 0;
  writeLength = 0;
  /** Status and length the receive at rqConsumer completes with when the QP is flushed (0: flushed). */
  rqFailStatus = 0;
  rqFailLength = 0;
  resErrReason = 0;
  /** Coalesced acknowledgement: an ACK of everything before ePsn is due. */
  pendingAck = false;
  /** In the engine's list of transports with responses to send. */
  outputScheduled = false;
  /** A NAK waiting behind read responses. */
  pendingNak = false;
  pendingNakSyndrome = 0;
  pendingNakPsn = 0;
  // Read contexts (ring): the READ requests served, kept to replay duplicates.
  readonly rdFirstPsn = new Int32Array(READ_CONTEXTS);
  readonly rdPackets = new Int32Array(READ_CONTEXTS);
  readonly rdVa = new Float64Array(READ_CONTEXTS);
  readonly rdLength = new Float64Array(READ_CONTEXTS);
  readonly rdRkey = new Uint32Array(READ_CONTEXTS);
  readonly rdValid = new Uint8Array(READ_CONTEXTS);
  // ...and where each one's responses stand.
  readonly rdCurPsn = new Int32Array(READ_CONTEXTS);
  readonly rdCurVa = new Float64Array(READ_CONTEXTS);
  readonly rdResid = new Float64Array(READ_CONTEXTS);
  /** The context is in outQueue. */
  readonly rdQueued = new Uint8Array(READ_CONTEXTS);
  /** The context's READ is new and its responses are not all sent (a replay of an old one is not). */
  readonly rdFresh = new Uint8Array(READ_CONTEXTS);
  /** Contexts with rdFresh set: the READs in flight that IRD bounds. */
  rdInFlight = 0;
  rdNext = 0;
  /** FIFO of contexts with responses to send. */
  readonly outQueue = new Int32Array(READ_CONTEXTS * 2);
  outHead = 0;
  outTail = 0;

  // ---- error and flush ----
  /** The QP is in ERR and has WQEs without a completion, or CQEs to write. */
  flushPending = false;
  /** A QP error notification owed to the driver, sent once the failed entries' CQEs are written. */
  notifyPending = false;
  notifyReqReason = 0;
  notifyResReason = 0;

  // ---- variable-size WQE mode (send ring in 16-byte slots) ----
  /** The QP was created with VARIABLE_SIZED_WQE_ENABLED: sq.entries counts slots. */
  readonly variable: boolean;
  /** Slots posted by the last SQ doorbell (free-running). */
  sqSlotProducer = 0;
  /** Slot where the next WQE the doorbell handler has not walked yet starts (free-running). */
  parsedSlot = 0;
  /** Per WQE (by sqSlot): its first slot, free-running. */
  wqeSlot: Float64Array;
  /** Per WQE: 1 if its header did not fit the slots posted (a wqe_size past the doorbell, or below 2). */
  wqeMalformed: Uint8Array;
  private slots: SlotArrays | undefined;

  constructor(readonly qp: EmuQp) {
    this.variable = qp.variableWqe;
    this.sqEntries = Math.max(1, qp.sq.entries);
    this.rqEntries = Math.max(1, qp.rq.entries);
    const a = takeSlotArrays(this.sqEntries, this.variable);
    this.slots = a;
    this.wqeStartPsn = a.startPsn;
    this.wqePackets = a.packets;
    this.wqeKind = a.kind;
    this.wqeFlags = a.flags;
    this.wqeType = a.type;
    this.wqeLength = a.length;
    this.wqeStatus = a.status;
    this.wqeSlot = a.slot;
    this.wqeMalformed = a.malformed;
  }

  /**
   * The QP is destroyed: its per-slot arrays go back for the next QP with a ring of this size.
   * This transport keeps empty ones, so nothing it might still be asked writes into them.
   */
  releaseSlots(): void {
    const a = this.slots;
    if (a === undefined) return;
    this.slots = undefined;
    this.wqeStartPsn = this.wqePackets = NO_SLOTS.startPsn;
    this.wqeKind = this.wqeFlags = this.wqeType = this.wqeStatus = this.wqeMalformed = NO_SLOTS.kind;
    this.wqeLength = this.wqeSlot = NO_SLOTS.length;
    giveSlotArrays(a);
  }

  setReqState(next: number): void {
    checkReqTransition(this.reqState, next);
    this.reqState = next;
  }

  setRespState(next: number): void {
    checkRespTransition(this.respState, next);
    this.respState = next;
  }

  /** Back to what RESET means: every position 0, nothing outstanding (the driver resets its side too). */
  reset(): void {
    if (this.reqState !== ReqState.OFF) this.setReqState(ReqState.OFF);
    if (this.respState !== RespState.OFF) this.setRespState(RespState.OFF);
    this.sqProducer = this.fetchedWqe = this.txWqe = this.compWqe = 0;
    this.sqSlotProducer = this.parsedSlot = 0;
    this.wqeMalformed.fill(0);
    this.txPsn = this.nextNewPsn = this.sentHighPsn = this.ackPsn = 0;
    this.readsOutstanding = 0;
    this.retryStarted = false;
    this.rnrProbe = false;
    this.recoveryEndPsn = -1;
    this.ackDeadlineNs = this.rnrDeadlineNs = Infinity;
    this.wqeStatus.fill(0);
    this.txLoaded = this.rdLoaded = -1;
    this.sqFailStatus = this.reqErrReason = 0;
    this.ePsn = this.msn = 0;
    this.lastOpcode = -1;
    this.nakSent = false;
    this.rqProducer = this.rqConsumer = 0;
    this.recvActive = false;
    this.writeMr = null;
    this.rqFailStatus = this.rqFailLength = this.resErrReason = 0;
    this.pendingAck = this.pendingNak = false;
    this.rdValid.fill(0);
    this.rdQueued.fill(0);
    this.rdFresh.fill(0);
    this.rdInFlight = 0;
    this.outHead = this.outTail = 0;
    this.flushPending = false;
    this.notifyPending = false;
  }

  /** Slot of a free-running send WQE index. */
  sqSlot(wqe: number): number {
    return ringSlot(wqe, this.sqEntries);
  }

  /**
   * The ring slot where free-running WQE `wqe` starts: its 16-byte slot index, what the MSN
   * table's start_slot_idx and a variable-mode error CQE's sq_cons_idx name (static mode: 8
   * slots per WQE, Linux qplib_fp.c bnxt_qplib_required_slots).
   */
  startSlot(wqe: number): number {
    const i = ringSlot(wqe, this.sqEntries);
    return this.variable ? ringSlot(this.wqeSlot[i]!, this.sqEntries) : i * 8;
  }

  /**
   * sq_cons_idx of the requester CQE completing free-running WQE `wqe` with `status`. Static
   * mode: the WQE after it, as a ring index. Variable mode: a success names the WQE after it
   * as a count of WQEs (rdma-core providers/bnxt_re verbs.c bnxt_re_poll_success_scqe reduces
   * it modulo its WQE count), a failure the failed WQE's first slot (qplib_fp.c
   * bnxt_qplib_cq_process_req, __is_err_cqe_for_var_wqe and bnxt_qplib_get_cqe_sq_cons).
   */
  reqConsIdx(wqe: number, status: number): number {
    if (!this.variable) return ringSlot(wqe + 1, this.sqEntries);
    return status === 0 ? (wqe + 1) & 0xffff : this.startSlot(wqe) & 0xffff;
  }

  /** PSN after the last packet of WQE `wqe`. */
  wqeEndPsn(slot: number): number {
    return psnAdd(this.wqeStartPsn[slot]!, this.wqePackets[slot]!);
  }
}

/**
 * The per-slot arrays of one send ring. A queue pair's are about 30 bytes a slot (350 KiB for
 * a 12,288-slot Thor2 ring), zeroed by the allocator and counted as external memory: made new
 * for every QP, a make + destroy loop spent a tenth of its time in their allocation and in
 * the scavenges their external memory forces. Kept after destroy (bounded) and zeroed again
 * for the next QP: each array then reads as a fresh one does.
 */
class SlotArrays {
  readonly startPsn: Int32Array;
  readonly packets: Int32Array;
  readonly kind: Uint8Array;
  readonly flags: Uint8Array;
  readonly type: Uint8Array;
  readonly length: Float64Array;
  readonly status: Uint8Array;
  readonly slot: Float64Array;
  readonly malformed: Uint8Array;
  readonly bytes: number;
  constructor(readonly entries: number, readonly variable: boolean) {
    const n = entries;
    this.startPsn = new Int32Array(n);
    this.packets = new Int32Array(n);
    this.kind = new Uint8Array(n);
    this.flags = new Uint8Array(n);
    this.type = new Uint8Array(n);
    this.length = new Float64Array(n);
    this.status = new Uint8Array(n);
    // A variable-mode ring of n slots holds at most n WQEs (each takes one slot or more).
    this.slot = new Float64Array(variable ? n : 1);
    this.malformed = new Uint8Array(variable ? n : 1);
    this.bytes = n * 20 + this.slot.byteLength + this.malformed.byteLength;
  }

  zero(): void {
    this.startPsn.fill(0);
    this.packets.fill(0);
    this.kind.fill(0);
    this.flags.fill(0);
    this.type.fill(0);
    this.length.fill(0);
    this.status.fill(0);
    this.slot.fill(0);
    this.malformed.fill(0);
  }
}

const NO_SLOTS = new SlotArrays(0, false);
/** At most this many bytes of per-slot arrays are kept for reuse (per thread that runs a model). */
const SLOT_POOL_LIMIT_BYTES = 8 * 1024 * 1024;
const slotPool: SlotArrays[] = [];
let slotPoolBytes = 0;

function takeSlotArrays(entries: number, variable: boolean): SlotArrays {
  for (let i = slotPool.length - 1; i >= 0; i--) {
    const a = slotPool[i]!;
    if (a.entries !== entries || a.variable !== variable) continue;
    slotPool[i] = slotPool[slotPool.length - 1]!;
    slotPool.pop();
    slotPoolBytes -= a.bytes;
    a.zero();
    return a;
  }
  return new SlotArrays(entries, variable);
}

function giveSlotArrays(a: SlotArrays): void {
  if (slotPoolBytes + a.bytes > SLOT_POOL_LIMIT_BYTES) return;
  slotPool.push(a);
  slotPoolBytes += a.bytes;
}
