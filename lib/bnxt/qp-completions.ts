/**
 * A queue pair's rings as its completions see them: the ring counts (posted, taken), the bytes
 * each due entry moves, and the reading of the SQ's and RQ's CQEs with the failure rules
 * (docs/architecture.md "Failure rules"): the base of BnxtQp (queue-pair.ts), whose posts
 * (qp-posts.ts) write what these read.
 *
 *   SQ / RQ: 4096 entries, 4095 of them usable: one slot stays empty so a full ring never
 *            looks empty
 *   SCQ / RCQ: 4096 CQEs of 32 B (completion-queue.ts)
 */
import * as R from '../../firmware-hwrm/roce/index.ts';
import * as C from '../../firmware-hwrm/roce/cqe.g.ts';
import { RingCursor } from '../../firmware-hwrm/ring.ts';
import type { RoceDevice } from './roce-device.ts';
import type { RcfwChannel } from './rcfw-channel.ts';
import { CQ_RING, type CompletionQueue } from './completion-queue.ts';
import { RING_ENTRIES, type QpResources } from './qp-resources.ts';
import { takeEntryLengths } from './entry-lengths.ts';
import { isFlush, requesterStatusMessage, responderStatusMessage } from './completion-status.ts';

export { RING_ENTRIES };
export const RING_ROOM = RING_ENTRIES - 1;
/** The SQ's and RQ's entries, laps and epochs (firmware-hwrm/ring.ts). */
const RING = new RingCursor(RING_ENTRIES);
// Posts and polls spell RingCursor.slot and .epoch out with the ring's mask and shift: measured
// (bench/qp-post-poll.ts), the calls through the cursor cost the send path ~4 ns.
const MASK = RING.mask;
const SHIFT = RING.shift;
// room, sqFull and rqFull (and the posts, qp-posts.ts) spell the ring's room out as 4095.
if (MASK !== 4095 || SHIFT !== 12 || RING_ROOM !== 4095) throw new Error('queue pair: ring layout');
/** The CQE word holding toggle, type and status (cq_base's trailer). */
const TRAILER = C.CQ_BASE_TOGGLE_WORD;
/**
 * The trailer's toggle, cqe_type and status bits (cq_base), and cqe_type in its place for the
 * send ring's CQEs and the receive ring's: a written CQE of the ring's kind with status 0 has
 * exactly (trailer & TRAILER_KIND_MASK) === TYPE_BITS | phase.
 */
const TRAILER_KIND_MASK = (C.CQ_BASE_TOGGLE_MASK << C.CQ_BASE_TOGGLE_SHIFT) |
  (C.CQ_BASE_CQE_TYPE_MASK << C.CQ_BASE_CQE_TYPE_SHIFT) | (C.CQ_BASE_STATUS_MASK << C.CQ_BASE_STATUS_SHIFT);
const REQ_TYPE_BITS = R.CqeType.REQ << C.CQ_BASE_CQE_TYPE_SHIFT;
const RES_RC_TYPE_BITS = R.CqeType.RES_RC << C.CQ_BASE_CQE_TYPE_SHIFT;

export const enum Side { Send = 0, Receive = 1 }

/** What poll found: bytes >= 0, or one of these. */
export const POLL_NONE = -1;
export const POLL_ERROR = -2;

export class QpCompletions {
  readonly qpn: number = 0;

  // Hot-path state: numbers and typed arrays only. Every number field has an initializer (= 0)
  // though the constructor sets it: the TS loader (esbuild, target ES2022) emits a declared field
  // as a class field, undefined until the constructor stores the number, and V8 then keeps the
  // field as "any value" (each load checked for a Smi or a heap number and converted), where a
  // field that starts as a Smi loads as one (perf annotate of postSend: the doorbell offset went
  // Smi -> double -> int before its store into the write queue).
  // (Qp.send -> postSend: bench harness 30.9 -> 28.6 ns with this in the hot classes.)
  protected sqProd = 0;
  protected sqTaken = 0;
  protected rqProd = 0;
  protected rqTaken = 0;
  /** Bytes each posted send moves, by ring slot. */
  protected sqLength = takeEntryLengths();
  /** Bytes each posted receive takes at most: a CQE claiming more is malformed. */
  protected rqLength = takeEntryLengths();
  /** SQ slots a WQE takes (sq-layout.ts): a variable-mode CQE names a slot. */
  protected readonly slotsPerWqe: number = 0;
  /** Variable WQE mode: a failed send's CQE names its WQE's first slot, not the WQE after it. */
  private readonly slotErrorCqes: boolean = false;
  /** The failure's message once the QP failed; a failed QP stays failed. */
  failure: string | undefined;
  /** Per side: CQEs the NIC wrote before the failure (they keep their results). */
  private readonly keepAfterFailure = new Int32Array(2);
  /** The message of the last POLL_ERROR. */
  lastError = '';

  readonly scq: CompletionQueue;
  readonly rcq: CompletionQueue;

  protected constructor(protected readonly roce: RoceDevice, held: QpResources) {
    this.qpn = held.qpn;
    this.scq = held.scq;
    this.rcq = held.rcq;
    this.slotsPerWqe = held.sqLayout.slotsPerWqe;
    this.slotErrorCqes = held.sqLayout.variable;
  }

  protected get rcfw(): RcfwChannel {
    return this.roce.rcfw;
  }

  room(side: Side): number {
    return side === Side.Send ? MASK - (this.sqProd - this.sqTaken) : MASK - (this.rqProd - this.rqTaken); // RING_ROOM
  }

  /** room(Side.Send) === 0, in a few bytes of bytecode (V8's inlining budget: Qp.send). */
  sqFull(): boolean {
    return this.sqProd - this.sqTaken === 4095; // RING_ROOM
  }

  /** room(Side.Receive) === 0. */
  rqFull(): boolean {
    return this.rqProd - this.rqTaken === 4095; // RING_ROOM
  }

  due(side: Side): number {
    return side === Side.Send ? this.sqProd - this.sqTaken : this.rqProd - this.rqTaken;
  }

  /**
   * Takes the oldest due entry's completion of `side`: its bytes, POLL_NONE if it has none
   * yet (or nothing is due), or POLL_ERROR with lastError set. Sends the firmware nothing.
   *
   * Small enough for V8 to inline into Qp.poll: one load of the CQE's trailer says whether it
   * is written (its toggle), of the ring's kind and status 0; only then are its other words
   * read, and a CQE that completes exactly the oldest due entry is taken here. Any other CQE
   * (an error, an aggregated or malformed one) goes to takeCqe, which reads it again and
   * checks everything; a CQE not yet written, to notWritten.
   */
  poll(side: Side): number {
    return side === Side.Send ? this.pollSend() : this.pollReceive();
  }

  private pollSend(): number {
    const taken = this.sqTaken;
    if (taken === this.sqProd) return POLL_NONE;
    if (this.failure !== undefined) return this.pollFailed(Side.Send);
    const cq = this.scq;
    const trailer = cq.trailer();
    const phase = cq.phase();
    if ((trailer & C.CQ_BASE_TOGGLE_MASK) !== phase) return this.notWritten(Side.Send, cq);
    const idx = taken & MASK;
    // sq_cons_idx names the entry after the last one the CQE completes: this one alone.
    if ((trailer & TRAILER_KIND_MASK) === (REQ_TYPE_BITS | phase) &&
      ((C.cqReqSqConsIdx(cq.u32, cq.at()) - idx) & MASK) === 1) {
      cq.take();
      this.sqTaken = taken + 1;
      return this.sqLength[idx]!;
    }
    return this.takeCqe(Side.Send, cq);
  }

  private pollReceive(): number {
    const taken = this.rqTaken;
    if (taken === this.rqProd) return POLL_NONE;
    if (this.failure !== undefined) return this.pollFailed(Side.Receive);
    const cq = this.rcq;
    const trailer = cq.trailer();
    const phase = cq.phase();
    if ((trailer & C.CQ_BASE_TOGGLE_MASK) !== phase) return this.notWritten(Side.Receive, cq);
    if ((trailer & TRAILER_KIND_MASK) === (RES_RC_TYPE_BITS | phase)) {
      const idx = taken & MASK;
      const u = cq.u32;
      const w = cq.at();
      const bytes = C.cqResRcLength(u, w);
      if (C.cqResRcSrqOrRqWrId(u, w) === idx && bytes <= this.rqLength[idx]!) {
        cq.take();
        this.rqTaken = taken + 1;
        return bytes;
      }
    }
    return this.takeCqe(Side.Receive, cq);
  }

  /** A healthy QP's oldest due entry of `side` has no CQE yet: is there a failure on the CREQ? */
  private notWritten(side: Side, cq: CompletionQueue): number {
    // The NIC may have reported the QP's failure on the CREQ (read from memory, no request).
    this.rcfw.pollEvents();
    const event = this.rcfw.qpError(this.qpn);
    if (event === undefined) return POLL_NONE;
    // The NIC writes a failed entry's CQE before its report: look again, and at the other
    // ring, so the failure's error is that entry's own.
    if (cq.ready()) return this.takeCqe(side, cq);
    this.fail(this.failedEntryError(side === Side.Send ? Side.Receive : Side.Send) ?? event.message);
    return this.pollFailed(side);
  }

  /** Reads and consumes the CQE at the consumer, for the oldest due entry of a healthy QP. */
  private takeCqe(side: Side, cq: CompletionQueue): number {
    const u = cq.u32;
    const w = cq.at();
    const trailer = u[w + TRAILER]!;
    const type = C.cqBaseCqeTypeOf(trailer);
    const status = C.cqBaseStatusOf(trailer);
    const send = side === Side.Send;
    const expected = send ? R.CqeType.REQ : R.CqeType.RES_RC;
    let bytes: number;
    if (type !== expected) {
      return this.failAtCqe(side, cq, `the NIC wrote a completion of a kind the ${send ? 'send' : 'receive'} ring ` +
        `does not take (CQE type ${R.cqeTypeName(type)})`);
    }
    if (send) {
      const idx = this.sqTaken & MASK;
      // sq_cons_idx: the entry after the last one this CQE completes. One CQE may complete several
      // (CQE aggregation): every entry before it succeeded, and the CQE stays at the consumer for
      // the last, which takes its status (Linux bnxt_re qplib_fp.c bnxt_qplib_cq_process_req;
      // rdma-core providers/bnxt_re verbs.c bnxt_re_poll_success_scqe). An index outside the due
      // entries is malformed.
      const covered = this.sendCovered(u, w, status, idx);
      if (covered === 0 || covered > this.sqProd - this.sqTaken) {
        const named = RING.slot(idx + covered - 1);
        return this.failAtCqe(side, cq, `the NIC completed send entry ${named} out of order (expected ${idx})`);
      }
      if (covered > 1) {
        this.sqTaken++;
        return this.sqLength[idx]!;
      }
      bytes = this.sqLength[idx]!;
    } else {
      const idx = this.rqTaken & MASK;
      const wrId = C.cqResRcSrqOrRqWrId(u, w);
      if (wrId !== idx) {
        return this.failAtCqe(side, cq, `the NIC completed receive entry ${wrId} out of order (expected ${idx})`);
      }
      bytes = C.cqResRcLength(u, w);
      if (bytes > this.rqLength[idx]! && status === 0) {
        return this.failAtCqe(side, cq,
          `the NIC completed receive entry ${idx} with ${bytes} bytes, more than its ${this.rqLength[idx]!}`);
      }
    }
    cq.take(); // one CQE per entry, in order: the NIC hears the consumer at a later post
    if (send) this.sqTaken++;
    else this.rqTaken++;
    if (status === 0) return bytes;
    const message = send ? requesterStatusMessage(status) : responderStatusMessage(status);
    if (isFlush(send, status)) {
      // A flushed entry did not fail itself: the QP had. The failure's error is that of the
      // entry of the other ring that failed (its CQE came before the flushes), else what the
      // NIC reported on the CREQ (memory: no request), else the flush's own.
      let cause = this.failedEntryError(send ? Side.Receive : Side.Send);
      if (cause === undefined) {
        this.rcfw.pollEvents();
        cause = this.rcfw.qpError(this.qpn)?.message;
      }
      this.fail(cause ?? message);
      this.lastError = this.failure!;
      return POLL_ERROR;
    }
    this.fail(message);
    this.lastError = message; // the failed entry carries its own error
    return POLL_ERROR;
  }

  /**
   * How many due send entries, from entry `idx`, the requester CQE at word `w` completes. Its
   * sq_cons_idx names the entry after the last one; in variable WQE mode a failure's names the
   * failed WQE's first slot instead (Linux qplib_fp.c __is_err_cqe_for_var_wqe,
   * bnxt_qplib_get_cqe_sq_cons). A slot where no WQE starts gives 0: malformed.
   */
  private sendCovered(u: Uint32Array, w: number, status: number, idx: number): number {
    const cons = C.cqReqSqConsIdx(u, w);
    if (status === 0 || !this.slotErrorCqes) return (cons - idx) & MASK;
    const wqe = cons / this.slotsPerWqe;
    return wqe === (wqe | 0) ? RING.slotsBetween(idx, wqe) + 1 : 0;
  }

  /** The error of the first CQE of `side` the NIC wrote that failed its entry (not a flush), if any. */
  private failedEntryError(side: Side): string | undefined {
    const send = side === Side.Send;
    const cq = send ? this.scq : this.rcq;
    const due = send ? this.sqProd - this.sqTaken : this.rqProd - this.rqTaken;
    const kind = send ? R.CqeType.REQ : R.CqeType.RES_RC;
    for (let n = 0; n < due && cq.readyAhead(n); n++) {
      const trailer = cq.u32[CQ_RING.slot(cq.cons + n) * C.CQ_BASE_WORDS + TRAILER]!;
      const status = C.cqBaseStatusOf(trailer);
      if (C.cqBaseCqeTypeOf(trailer) !== kind || status === 0) continue;
      if (!isFlush(send, status)) return send ? requesterStatusMessage(status) : responderStatusMessage(status);
    }
    return undefined;
  }

  /**
   * The CQE at the consumer is not one this ring can take (another kind, out of order,
   * malformed): the QP fails there. CQEs after it came after the failure, so none of this
   * side's keeps its result; the entry it stood for carries the failure's error.
   */
  private failAtCqe(side: Side, cq: CompletionQueue, message: string): number {
    cq.advance();
    this.fail(message);
    this.keepAfterFailure[side] = 0;
    return this.pollFailed(side);
  }

  /** Marks the QP failed: CQEs the NIC already wrote keep their results, the rest get `message`. */
  private fail(message: string): void {
    if (this.failure !== undefined) return;
    this.failure = message;
    this.keepAfterFailure[Side.Send] = countReady(this.scq, this.sqProd - this.sqTaken);
    this.keepAfterFailure[Side.Receive] = countReady(this.rcq, this.rqProd - this.rqTaken);
  }

  private pollFailed(side: Side): number {
    const send = side === Side.Send;
    const cq = send ? this.scq : this.rcq;
    if ((send ? this.sqProd - this.sqTaken : this.rqProd - this.rqTaken) === 0) return POLL_NONE;
    if (this.keepAfterFailure[side]! > 0) {
      this.keepAfterFailure[side]!--;
      const u = cq.u32;
      const w = cq.at();
      const trailer = u[w + TRAILER]!;
      const status = C.cqBaseStatusOf(trailer);
      const type = C.cqBaseCqeTypeOf(trailer);
      const idx = RING.slot(send ? this.sqTaken : this.rqTaken);
      const bytes = send ? this.sqLength[idx]! : C.cqResRcLength(u, w);
      const covered = this.sendCovered(u, w, status, idx);
      if (send && type === R.CqeType.REQ && covered > 1 && covered <= this.sqProd - this.sqTaken) {
        // An aggregated CQE the NIC wrote before the failure: this entry, before its last, succeeded.
        this.keepAfterFailure[side]!++;
        this.sqTaken++;
        return bytes;
      }
      // A kept CQE keeps its result only if it is one this ring takes, for this entry.
      const inOrder = send ? covered === 1 : C.cqResRcSrqOrRqWrId(u, w) === idx && bytes <= this.rqLength[idx]!;
      cq.advance();
      if (send) this.sqTaken++;
      else this.rqTaken++;
      const taken = type === (send ? R.CqeType.REQ : R.CqeType.RES_RC) && inOrder;
      if (status === 0 && taken) return bytes;
      if (!inOrder) this.keepAfterFailure[side] = 0;
      // An entry that failed itself carries its own error; a flushed one, the failure's.
      this.lastError = taken && !isFlush(send, status)
        ? (send ? requesterStatusMessage(status) : responderStatusMessage(status))
        : this.failure!;
      return POLL_ERROR;
    }
    // Entries the NIC had not completed: the failure's error, in order. Drain any CQEs the NIC
    // writes for them later (flushes) so the CQ never fills.
    while (cq.ready()) cq.advance();
    if (send) this.sqTaken++;
    else this.rqTaken++;
    this.lastError = this.failure!;
    return POLL_ERROR;
  }
}

function countReady(cq: CompletionQueue, due: number): number {
  let n = 0;
  while (n < due && cq.readyAhead(n)) n++;
  return n;
}
