/**
 * A reliable-connected queue pair at the hardware interface: its rings in DMA memory, the
 * commands that create, connect and destroy it, and the hot path that builds WQEs, rings
 * doorbells and reads CQEs. Argument checks live in lib/qp.ts; this module trusts them.
 *
 *   SQ: [wqe 0 .. wqe 4095] 128 B each (static mode) or 48 B each (variable mode, Thor2), then
 *       its PSN-search entries or MSN table (sq-layout.ts)
 *   RQ: [wqe 0 .. wqe 4095] 128 B each
 *   SCQ / RCQ: 4096 CQEs of 32 B
 * Each ring holds 4095 entries: one slot stays empty so a full ring never looks empty.
 */
import type { DmaBuffer, Mmio } from '../../drivers/device.ts';
// Hot paths reach the generated accessors and constants through namespace imports of their
// small modules: V8 folds such a load into the function itself, where a named import costs a
// check per call (firmware-hwrm/roce/index.ts says why the accessors are not re-exported).
import * as R from '../../firmware-hwrm/roce/index.ts';
import * as W from '../../firmware-hwrm/roce/wqe.g.ts';
import * as C from '../../firmware-hwrm/roce/cqe.g.ts';
import * as D from '../../firmware-hwrm/roce/doorbell.g.ts';
import type { Values } from '../../firmware-hwrm/layout.ts';
import * as Words from '../../firmware-hwrm/words.ts';
import { ok, err, type Result } from '../result.ts';
import type { BnxtFunction } from './bringup.ts';
import type { RoceDevice } from './roce-device.ts';
import type { RcfwChannel } from './rcfw-channel.ts';
import { CQ_RING, type CompletionQueue } from './completion-queue.ts';
import { RingCursor } from '../../firmware-hwrm/ring.ts';
import { createQpResources, RING_ENTRIES, type QpResources } from './qp-resources.ts';
import { DETACHED, giveEntryLengths, takeEntryLengths } from './entry-lengths.ts';
import { isFlush, requesterStatusMessage, responderStatusMessage } from './completion-status.ts';
import { legalTransition, transitionMask, STATE_CODE, type DriverQpState } from './qp-state.ts';
import * as Q from './roce-commands.ts';

export { RING_ENTRIES };
export const RING_ROOM = RING_ENTRIES - 1;
/** The SQ's and RQ's entries, laps and epochs (firmware-hwrm/ring.ts). */
const RING = new RingCursor(RING_ENTRIES);
// Posts and polls spell RingCursor.slot and .epoch out with the ring's mask and shift: measured
// (bench/qp-post-poll.ts), the calls through the cursor cost the send path ~4 ns.
const MASK = RING.mask;
const SHIFT = RING.shift;
const WQE_WORDS = R.STATIC_WQE_BYTES / 4;
const SLOT_WORDS = R.SLOT_BYTES / 4;
const PSN_WORDS = W.SQ_PSN_SEARCH_EXT_WORDS;
const MSN_WORDS = W.SQ_MSN_SEARCH_WORDS;
/** Outstanding RDMA reads each way (ORD / IRD). */
export const READ_DEPTH = 16;
/** Local ACK timeout 14: 4.096 us x 2^14 = 67 ms; retries 7; RNR retries 7 = forever. */
export const ACK_TIMEOUT = 14;
export const RETRY_COUNT = 7;
export const RNR_RETRY_FOREVER = 7;
/** RNR timer code 1 = 0.01 ms, the smallest delay (min RNR timer). */
export const MIN_RNR_TIMER = 1;

/**
 * wqe_size is the 16-byte units the WQE uses, header and SGEs present: 3 for one SGE. Static
 * mode still gives each WQE 8 slots (the producer and start_slot_idx advance by 8). Linux
 * bnxt_re qplib_fp.c bnxt_qplib_required_slots (wqe_sz = bytes >> 4, slot = 8 when static),
 * rdma-core providers/bnxt_re verbs.c bnxt_re_required_slots and bnxt_re_post_recv (idx = 2 + nsge).
 */
const WQE_SIZE_ONE_SGE = R.sqWqeSizeForSges(1);
const SEND_WORD0 = R.sqWqeWord0(R.WqeType.SEND, R.WqeFlags.SIGNAL_COMP, WQE_SIZE_ONE_SGE);
const READ_WORD0 = R.sqWqeWord0(R.WqeType.READ_WQE, R.WqeFlags.SIGNAL_COMP, WQE_SIZE_ONE_SGE);
const RECV_WORD0 = R.rqWqeWord0(WQE_SIZE_ONE_SGE);
const SEND_OPCODE = R.WqeType.SEND;
const READ_OPCODE = R.WqeType.READ_WQE;
/** The CQE word holding toggle, type and status (cq_base's trailer). */
const TRAILER = C.CQ_BASE_TOGGLE_WORD;
const SGE_WORD = R.WQE_HEADER_BYTES / 4;
// postSend spells the ring's mask and shift and the SGE's word out as literals.
// (writeMsnEntry: an MSN entry's two words.)
if (MASK !== 4095 || SHIFT !== 12 || SGE_WORD !== 8 || RING_ROOM !== 4095 || MSN_WORDS !== 2) {
  throw new Error('queue-pair: ring layout');
}
/**
 * The trailer's toggle, cqe_type and status bits (cq_base), and cqe_type in its place for the
 * send ring's CQEs and the receive ring's: a written CQE of the ring's kind with status 0 has
 * exactly (trailer & TRAILER_KIND_MASK) === TYPE_BITS | phase.
 */
const TRAILER_KIND_MASK = (C.CQ_BASE_TOGGLE_MASK << C.CQ_BASE_TOGGLE_SHIFT) |
  (C.CQ_BASE_CQE_TYPE_MASK << C.CQ_BASE_CQE_TYPE_SHIFT) | (C.CQ_BASE_STATUS_MASK << C.CQ_BASE_STATUS_SHIFT);
const REQ_TYPE_BITS = R.CqeType.REQ << C.CQ_BASE_CQE_TYPE_SHIFT;
const RES_RC_TYPE_BITS = R.CqeType.RES_RC << C.CQ_BASE_CQE_TYPE_SHIFT;

/**
 * The WQE's one SGE (roce_hsi.h: struct sq_sge): va = region base + at, as 32-bit halves. The
 * low half is the sum wrapped to 32 bits (`>>> 0`), which wrapped, carrying one into the high
 * half, exactly when it came out below `at` (both halves below 2^32). Integer operations only:
 * the same sum as a double compared with 2^32 and the carry multiplied back out (as before)
 * was the hottest part of a post in a perf profile (vmulsd, vucomisd).
 */
function writeSge(u: Uint32Array, w: number, key: number, vaLo: number, vaHi: number, at: number, n: number): void {
  const lo = (vaLo + at) >>> 0;
  W.setSqSgeWords(u, w, lo, lo < at ? vaHi + 1 : vaHi, key, n); // va_or_pa (lo, hi), l_key, size
}

export const enum Side { Send = 0, Receive = 1 }

/**
 * What an SGE names of a registered region (lib/region.ts Region): its key and base address.
 * postSend and postReceive read them from the region itself: field loads of known representation, where
 * arguments arrive tagged and each use converts them (two fewer of those per post).
 */
export interface SgeSource {
  readonly key: number;
  readonly vaLo: number;
  readonly vaHi: number;
}

type ModifyFields = Partial<Values<(typeof R.CmdqModifyQp)['fields']>>;

/** What poll found: bytes >= 0, or one of these. */
export const POLL_NONE = -1;
export const POLL_ERROR = -2;

export interface ConnectParams {
  readonly destQp: number;
  readonly destPsn: number;
  readonly destGid: Uint8Array;
  readonly destMac: Uint8Array;
  readonly pathMtu: number;
  readonly remoteRead: boolean;
}

export class BnxtQp {
  readonly qpn: number = 0;
  readonly psn: number = 0;
  state: DriverQpState = 'RESET';
  /** A connect that did not finish (refused or ended by an exception): the next one restarts from RESET. */
  private restart = false;
  destroyed = false;
  /** Set after an exception or refusal during destroy: every later destroy is an error. */
  destroyBroken: string | undefined;
  connected = false;
  remoteRead = false;
  peerQpn = 0;

  // Hot-path state: numbers and typed arrays only. Every number field has an initializer (= 0)
  // though the constructor sets it: the TS loader (esbuild, target ES2022) emits a declared field
  // as a class field, undefined until the constructor stores the number, and V8 then keeps the
  // field as "any value" (each load checked for a Smi or a heap number and converted), where a
  // field that starts as a Smi loads as one (perf annotate of postSend: the doorbell offset went
  // Smi -> double -> int before its store into the write queue).
  // (Qp.send -> postSend: bench harness 30.9 -> 28.6 ns with this in the hot classes.)
  private readonly sq32: Uint32Array;
  private readonly rq32: Uint32Array;
  private sqProd = 0;
  private sqTaken = 0;
  private rqProd = 0;
  private rqTaken = 0;
  private nextPsn: number = 0;
  private mtu = 4096;
  /** log2 of mtu (a path MTU is a power of two, 256-4096). */
  private mtuShift = 12;
  /** mtu - 1. */
  private mtuMask = 4095;
  private sqLength = takeEntryLengths();
  /** Bytes each posted receive takes at most: a CQE claiming more is malformed. */
  private rqLength = takeEntryLengths();
  private readonly dbOffset: number = 0;
  /** The SQ's geometry for the chip's WQE mode (sq-layout.ts), as plain numbers for the hot path. */
  private readonly sqWqeWords: number = 0;
  private readonly slotsPerWqe: number = 0;
  private readonly doorbellStep: number = 0;
  private readonly auxWord: number = 0;
  private readonly psnIndexStep: number = 0;
  /** Entries of the SQ's MSN table, or 0 where it keeps PSN search (RoceDevice.msnTable). */
  private readonly msnEntries: number = 0;
  /** msnEntries - 1 (a power of two's mask: an entry's index is msn % msnEntries). */
  private readonly msnMask: number = 0;
  /** Variable WQE mode: a failed send's CQE names its WQE's first slot, not the WQE after it. */
  private readonly slotErrorCqes: boolean = false;
  private readonly sqDbHi: number = 0;
  private readonly rqDbHi: number = 0;
  /** The failure's message once the QP failed; a failed QP stays failed. */
  failure: string | undefined;
  /** Per side: CQEs the NIC wrote before the failure (they keep their results). */
  private readonly keepAfterFailure = new Int32Array(2);
  /** The message of the last POLL_ERROR. */
  lastError = '';

  readonly scq: CompletionQueue;
  readonly rcq: CompletionQueue;
  /** What the QP holds in the firmware and in memory: destroy unwinds it. */
  private readonly ledger: QpResources['ledger'];
  /** Ring memory (for tests that check where the NIC reads and writes). */
  private readonly sq: QpResources['sq'];
  private readonly rq: QpResources['rq'];

  private constructor(
    private readonly roce: RoceDevice,
    held: QpResources,
    private readonly doorbells: Mmio,
    psn: number,
  ) {
    this.qpn = held.qpn;
    this.psn = psn;
    this.nextPsn = this.psn;
    this.sq32 = held.sq.buffer.u32;
    this.rq32 = held.rq.buffer.u32;
    this.scq = held.scq;
    this.rcq = held.rcq;
    this.ledger = held.ledger;
    this.sq = held.sq;
    this.rq = held.rq;
    this.dbOffset = roce.doorbellOffset;
    const layout = held.sqLayout;
    this.sqWqeWords = layout.slotsPerWqe * SLOT_WORDS;
    this.slotsPerWqe = layout.slotsPerWqe;
    this.doorbellStep = layout.doorbellStep;
    this.auxWord = layout.auxWord;
    this.psnIndexStep = layout.psnIndexStep;
    this.msnEntries = layout.msnEntries;
    this.msnMask = layout.msnEntries - 1;
    this.slotErrorCqes = layout.variable;
    this.sqDbHi = R.doorbellHi(held.qpn, R.DbcType.SQ);
    this.rqDbHi = R.doorbellHi(held.qpn, R.DbcType.RQ);
  }

  /** @internal Every DMA buffer the QP holds (rings, their page tables, read queues) until destroyed. */
  get memory(): DmaBuffer[] {
    return this.ledger.buffers();
  }

  private get rcfw(): RcfwChannel {
    return this.roce.rcfw;
  }

  // ---- control path -------------------------------------------------------------------

  /**
   * CREATE_CQ x2, CREATE_QP (RC), MODIFY_QP to INIT. A refusal gives back everything, in
   * reverse; memory the firmware may still name (it went silent, or refused to destroy what
   * names it) is quarantined instead. On an exception everything taken is quarantined.
   */
  static make(func: BnxtFunction, roce: RoceDevice, handle: number): Result<BnxtQp> {
    // A silent firmware would get none of the commands: take nothing it could be left holding.
    if (roce.rcfw.stalled) return err(`Qp.make: ${roce.rcfw.stalled}`);
    const held = createQpResources(func, roce, handle);
    if (!held.ok) return err(`Qp.make: ${held.error}`);
    const { ledger } = held.value;
    return ledger.guard(() => {
      // The first PSN is the device's random draw: crypto-random on hardware, replayable from a
      // seed on a stepped software NIC.
      const qp = new BnxtQp(roce, held.value, func.doorbells, func.device.random.u32() & R.PSN_MASK);
      // MODIFY_QP RESET -> INIT.
      const init = qp.modify('INIT', {});
      if (init.ok) return ok(qp);
      ledger.unwind();
      return err(`Qp.make: ${init.error}`);
    });
  }

  /**
   * MODIFY_QP's read depths: IRRQ and ORRQ slots for IRD and ORD, each capped at the device's
   * maximum (QUERY_FUNC max_qp_rd_atom, max_qp_init_rd_atom); the depths as they are only where
   * the device reports internal queue memory. Linux bnxt_re qplib_fp.c bnxt_qplib_modify_qp
   * (ORD_LIMIT_TO_ORRQ_SLOTS = ORD + 1, IRD_LIMIT_TO_IRRQ_SLOTS = 2 x IRD + 2, qplib_fp.h),
   * ib_verbs.c bnxt_re_modify_qp (caps), BNXT_RE_IQM(dev_cap_flags).
   */
  private get readDepths(): { orrq: number; irrq: number } {
    const caps = this.roce.caps;
    const ord = Math.min(READ_DEPTH, caps.max_qp_init_rd_atom);
    const ird = Math.min(READ_DEPTH, caps.max_qp_rd_atom);
    if ((caps.dev_cap_flags & R.DevCapFlags.INTERNAL_QUEUE_MEMORY) !== 0) return { orrq: ord, irrq: ird };
    return { orrq: R.orrqSlots(ord), irrq: R.irrqSlots(ird) };
  }

  /** One MODIFY_QP, checked against the transition table; `fields` is the caller's fresh object (completed here). */
  private modify(to: DriverQpState, fields: ModifyFields): Result<void> {
    if (!legalTransition(this.state, to)) return err(`MODIFY_QP ${this.state} -> ${to} is not a legal transition`);
    // The fields every MODIFY_QP carries, added to the caller's own fresh object (no copy of it).
    fields.qp_type = R.QpType.RC;
    fields.modify_mask = transitionMask(to);
    fields.qp_cid = this.qpn;
    fields.new_state = STATE_CODE[to];
    if (to === 'INIT') {
      fields.access = R.QpAccess.LOCAL_WRITE;
      fields.pkey = 0xffff;
    }
    const r = this.rcfw.send(Q.MODIFY_QP, fields);
    if (!r.ok) return err(`MODIFY_QP to ${to}: ${r.error}`);
    this.state = to;
    return ok();
  }

  /** RESET -> INIT -> RTR -> RTS with the spec's values; restarts from RESET after a broken attempt. */
  connect(p: ConnectParams): Result<void> {
    if (this.state !== 'INIT' || this.restart) {
      const reset = this.modify('RESET', {});
      if (!reset.ok) return reset;
      const init = this.modify('INIT', {});
      if (!init.ok) return init;
    }
    this.restart = true; // cleared only if every step succeeds (an exception leaves it set)
    const rtr = this.modify('RTR', {
      access: R.QpAccess.LOCAL_WRITE | (p.remoteRead ? R.QpAccess.REMOTE_READ : 0),
      network_type: R.NetworkType.ROCEV2_IPV4, dgid: p.destGid, sgid_index: this.roce.gidIndex, hop_limit: 64,
      traffic_class: 0, flow_label: 0, dest_mac: p.destMac, vlan_id: 0xfff, path_mtu: R.pathMtuCode(p.pathMtu),
      rq_psn: p.destPsn, min_rnr_timer: MIN_RNR_TIMER, max_dest_rd_atomic: this.readDepths.irrq, dest_qp_id: p.destQp,
    });
    if (!rtr.ok) return rtr;
    const rts = this.modify('RTS', {
      timeout: ACK_TIMEOUT, retry_cnt: RETRY_COUNT, rnr_retry: RNR_RETRY_FOREVER, sq_psn: this.psn,
      max_rd_atomic: this.readDepths.orrq,
    });
    if (!rts.ok) return rts;
    this.mtu = p.pathMtu;
    this.mtuShift = 31 - Math.clz32(p.pathMtu);
    this.mtuMask = p.pathMtu - 1;
    this.remoteRead = p.remoteRead;
    this.peerQpn = p.destQp;
    this.connected = true;
    this.restart = false;
    return ok();
  }

  /**
   * DESTROY_QP, then the CQs, then the memory, each only after the firmware confirmed. A
   * refusal or silence ends it: the rings stay allocated (quarantined) until the NIC is
   * closed, and every later destroy is an error.
   */
  destroy(): Result<void> {
    this.destroyed = true;
    this.connected = false;
    // Its rings are gone (or no longer the driver's): no entry is due, so poll and wait read
    // none of that memory again, which a new queue pair may own (docs/api.md, "After destroy").
    this.sqTaken = this.sqProd;
    this.rqTaken = this.rqProd;
    this.destroyBroken = 'an earlier destroy did not finish'; // stays if an exception ends it
    const failures = this.ledger.unwind({ stopAtRefusal: true });
    if (failures.length > 0) {
      this.ledger.abandon(); // the firmware keeps part of it, which may name any of the rings
      this.destroyBroken = failures[0]!;
      return err(`Qp.destroy: ${failures[0]!}`);
    }
    this.destroyBroken = undefined;
    this.rcfw.forgetQp(this.qpn);
    // Nothing is due any more (above): the entry lengths go back for the next queue pair.
    giveEntryLengths(this.sqLength);
    giveEntryLengths(this.rqLength);
    this.sqLength = this.rqLength = DETACHED;
    return ok();
  }

  // ---- hot path -----------------------------------------------------------------------

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
   * Writes a SEND WQE of one SGE and its MSN or PSN-search entry, then rings the SQ doorbell:
   * writeSqWqe's work for a SEND, with writeSge's, writeMsnEntry's and writePsnEntry's written
   * out. Its bytecode (491 bytes) is over V8's limit for a function it inlines (460), on
   * purpose: Qp.send (or a program's loop around it) always calls it, and its own optimized code
   * inlines all it calls (~450 of the 920 bytes V8 allows a function). Where it was small enough
   * to be inlined, whichever function V8 optimized first decided where its budget ran out
   * (perf, bench/qp-post-poll.ts's harness: push or doorbell64 left as calls in 3 of 4
   * processes, send post+poll 31-37 ns by the process; like this 31.3-31.7 in 4 of 4). Keep it
   * over 460 bytes (node --print-bytecode --print-bytecode-filter=postSend) or make its callers
   * fit. The ring's numbers are literals (RING_ENTRIES 4096: mask 4095, shift 12, the SGE at
   * word 8, checked at load).
   */
  postSend(r: SgeSource, at: number, n: number): void {
    const prod = this.sqProd;
    const idx = prod & 4095; // MASK
    this.sqLength[idx] = n;
    if (this.failure !== undefined) return this.skipPost(Side.Send);
    const u = this.sq32;
    const w = idx * this.sqWqeWords;
    W.setSqSendHdrWords(u, w, SEND_WORD0, 0, n, 0, 0, 0, 0, 0);
    const lo = (r.vaLo + at) >>> 0; // as writeSge
    W.setSqSgeWords(u, w + 8, lo, lo < at ? r.vaHi + 1 : r.vaHi, r.key, n); // SGE_WORD
    // The PSN step and the MSN or PSN-search entry: writeMsnEntry's and writePsnEntry's work. The
    // step is advancePsn's in fewer bytes of bytecode: 0 bytes, 0 packets by the shift, are the
    // one packet by `|| 1`.
    const start = this.nextPsn;
    const next = (start + (((n + this.mtuMask) >>> this.mtuShift) || 1)) & 0xffffff; // R.PSN_MASK
    this.nextPsn = next;
    if (this.msnEntries !== 0) {
      W.setSqMsnSearchWords(u, this.auxWord + ((prod & this.msnMask) << 1), // MSN_WORDS: 2
        W.sqMsnSearchWord0(start, next), W.sqMsnSearchWord1(next, idx * this.slotsPerWqe));
    } else {
      W.setSqPsnSearchExtWords(u, this.auxWord + idx * this.psnIndexStep * PSN_WORDS,
        W.sqPsnSearchExtWord0(start, SEND_OPCODE), next, idx * this.slotsPerWqe, 0);
    }
    const np = prod + 1;
    this.sqProd = np;
    this.scq.tellBeforePost(np);
    this.doorbells.doorbell64(this.dbOffset, D.dbcDbcWord0((np & 4095) * this.doorbellStep, (np >>> 12) & 1, 0),
      this.sqDbHi);
  }

  /** Writes an RDMA READ WQE (remote va/key; the local SGE is the destination). */
  postRead(
    key: number, vaLo: number, vaHi: number, at: number, n: number, rKey: number, rVaLo: number, rVaHi: number,
    rAt: number,
  ): void {
    const lo = rVaLo + rAt;
    const carry = lo >= Words.TWO_POW_32 ? 1 : 0;
    this.writeSqWqe(READ_WORD0, key, vaLo, vaHi, at, n, lo - carry * Words.TWO_POW_32, rVaHi + carry, rKey,
      READ_OPCODE);
  }

  /**
   * The SQ's post of any one-SGE WQE (postRead's; postSend writes its SEND the same way, written
   * out): the failed QP's case and the search entries are calls of their own.
   */
  private writeSqWqe(
    word0: number, key: number, vaLo: number, vaHi: number, at: number, n: number, w4: number, w5: number,
    w6: number, opcode: number,
  ): void {
    const prod = this.sqProd;
    const idx = prod & MASK;
    this.sqLength[idx] = n;
    if (this.failure !== undefined) return this.skipPost(Side.Send);
    const u = this.sq32;
    const w = idx * this.sqWqeWords;
    // wqe_type/flags/wqe_size, immediate 0, length, q_key 0, words 4-6, timestamp 0
    W.setSqSendHdrWords(u, w, word0, 0, n, 0, w4, w5, w6, 0);
    writeSge(u, w + SGE_WORD, key, vaLo, vaHi, at, n);
    // Only the branch the chip takes is ever run, so V8 inlines only that entry's writer.
    if (this.msnEntries !== 0) this.writeMsnEntry(u, prod, idx, n);
    else this.writePsnEntry(u, idx, n, opcode);
    const np = prod + 1;
    this.sqProd = np;
    this.scq.tellBeforePost(np); // the CQ's consumer, if the NIC must hear it before this entry's CQE
    // The producer: a WQE index (static) or a slot index (variable, max_slot 1), the wrap bit as epoch.
    this.doorbells.doorbell64(this.dbOffset, D.dbcDbcWord0((np & MASK) * this.doorbellStep, (np >>> SHIFT) & 1, 0),
      this.sqDbHi);
  }

  /**
   * The PSN after a message of n bytes from nextPsn, which it becomes: a message of 0 bytes is
   * one packet, as is each started MTU (a power of two).
   */
  private advancePsn(n: number): number {
    const next = (this.nextPsn + (n === 0 ? 1 : (n + this.mtu - 1) >>> this.mtuShift)) & R.PSN_MASK;
    this.nextPsn = next;
    return next;
  }

  /**
   * SQ entry `prod`'s sq_msn_search, entry msn % size (msn counts the WQEs posted; the size is a
   * power of two): start PSN 0-23, next PSN 24-47, start slot 48-63 (qplib_fp.c
   * bnxt_qplib_pull_psn_buff, bnxt_qplib_fill_msn_search).
   */
  private writeMsnEntry(u: Uint32Array, prod: number, idx: number, n: number): void {
    const start = this.nextPsn;
    const next = this.advancePsn(n);
    W.setSqMsnSearchWords(u, this.auxWord + ((prod & this.msnMask) << 1), // MSN_WORDS: 2
      W.sqMsnSearchWord0(start, next), W.sqMsnSearchWord1(next, idx * this.slotsPerWqe));
  }

  /** SQ entry idx's psn_search_ext at slot / max_slot: opcode | start PSN, next PSN (flags 0), start slot index. */
  private writePsnEntry(u: Uint32Array, idx: number, n: number, opcode: number): void {
    const start = this.nextPsn;
    const next = this.advancePsn(n);
    const p = this.auxWord + idx * this.psnIndexStep * PSN_WORDS;
    W.setSqPsnSearchExtWords(u, p, W.sqPsnSearchExtWord0(start, opcode), next, idx * this.slotsPerWqe, 0);
  }

  /** A failed QP runs nothing: the entry completes with the failure's error at poll. */
  private skipPost(side: Side): void {
    if (side === Side.Send) this.sqProd++;
    else this.rqProd++;
  }

  /** Writes an RQ WQE of one SGE (wr_id = its ring index), then rings the RQ doorbell. */
  postReceive(r: SgeSource, at: number, n: number): void {
    const prod = this.rqProd;
    const idx = prod & MASK;
    this.rqLength[idx] = n;
    if (this.failure !== undefined) return this.skipPost(Side.Receive);
    const u = this.rq32;
    const w = idx * WQE_WORDS;
    // RCV/wqe_size, reserved, wr_id (the CQE names the entry it completes), reserved
    W.setRqWqeHdrWords(u, w, RECV_WORD0, 0, idx, 0, 0, 0, 0, 0);
    writeSge(u, w + SGE_WORD, r.key, r.vaLo, r.vaHi, at, n);
    const np = prod + 1;
    this.rqProd = np;
    this.rcq.tellBeforePost(np);
    this.doorbells.doorbell64(this.dbOffset, D.dbcDbcWord0(np & MASK, (np >>> SHIFT) & 1, 0), this.rqDbHi);
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
