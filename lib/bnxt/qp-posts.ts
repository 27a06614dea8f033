/**
 * A queue pair's posts: the WQEs it writes into its SQ and RQ in DMA memory, the SQ's PSN-search
 * entries or MSN table, and the doorbells that hand them to the NIC; the hot path's writing half
 * (qp-completions.ts reads what the NIC completes). Argument checks live in lib/qp.ts; this
 * module trusts them.
 *
 *   SQ: [wqe 0 .. wqe 4095] 128 B each (static mode) or 48 B each (variable mode, Thor2), then
 *       its PSN-search entries or MSN table (sq-layout.ts)
 *   RQ: [wqe 0 .. wqe 4095] 128 B each
 */
import type { Mmio } from '../../drivers/device.ts';
// Hot paths reach the generated accessors and constants through namespace imports of their
// small modules: V8 folds such a load into the function itself, where a named import costs a
// check per call (firmware-hwrm/roce/index.ts says why the accessors are not re-exported).
import * as R from '../../firmware-hwrm/roce/index.ts';
import * as W from '../../firmware-hwrm/roce/wqe.g.ts';
import * as D from '../../firmware-hwrm/roce/doorbell.g.ts';
import * as Words from '../../firmware-hwrm/words.ts';
import type { RoceDevice } from './roce-device.ts';
import { RING_ENTRIES, type QpResources } from './qp-resources.ts';
import { QpCompletions } from './qp-completions.ts';

// The ring's mask and shift, as this module's own constants: an imported binding (or a const
// enum of another module, which the TS loader keeps as an object) is a cell each post would
// load and check (bench/qp-post-poll.ts: a receive 3 ns slower with qp-completions.ts's).
const MASK = RING_ENTRIES - 1;
const SHIFT = 31 - Math.clz32(RING_ENTRIES);

const WQE_WORDS = R.STATIC_WQE_BYTES / 4;
const SLOT_WORDS = R.SLOT_BYTES / 4;
const PSN_WORDS = W.SQ_PSN_SEARCH_EXT_WORDS;
const MSN_WORDS = W.SQ_MSN_SEARCH_WORDS;

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
const SGE_WORD = R.WQE_HEADER_BYTES / 4;
// postSend spells the ring's mask and shift, the SGE's word and an MSN entry's two words out as literals.
if (SGE_WORD !== 8 || MSN_WORDS !== 2 || MASK !== 4095 || SHIFT !== 12) throw new Error('queue pair: WQE layout');

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

export class QpPosts extends QpCompletions {
  // Hot-path state (numbers and typed arrays, each number with its = 0: qp-completions.ts says why).
  private readonly sq32: Uint32Array;
  private readonly rq32: Uint32Array;
  protected nextPsn: number = 0;
  /** log2 of the path MTU (a power of two, 256-4096). */
  protected mtuShift = 12;
  private readonly dbOffset: number = 0;
  /** The SQ's geometry for the chip's WQE mode (sq-layout.ts), as plain numbers for the hot path. */
  private readonly sqWqeWords: number = 0;
  private readonly doorbellStep: number = 0;
  private readonly auxWord: number = 0;
  private readonly psnIndexStep: number = 0;
  /** Entries of the SQ's MSN table, or 0 where it keeps PSN search (RoceDevice.msnTable). */
  private readonly msnEntries: number = 0;
  /** msnEntries - 1 (a power of two's mask: an entry's index is msn % msnEntries). */
  private readonly msnMask: number = 0;
  private readonly sqDbHi: number = 0;
  private readonly rqDbHi: number = 0;

  protected constructor(roce: RoceDevice, held: QpResources, private readonly doorbells: Mmio, psn: number) {
    super(roce, held);
    this.nextPsn = psn;
    this.sq32 = held.sq.buffer.u32;
    this.rq32 = held.rq.buffer.u32;
    this.dbOffset = roce.doorbellOffset;
    const layout = held.sqLayout;
    this.sqWqeWords = layout.slotsPerWqe * SLOT_WORDS;
    this.doorbellStep = layout.doorbellStep;
    this.auxWord = layout.auxWord;
    this.psnIndexStep = layout.psnIndexStep;
    this.msnEntries = layout.msnEntries;
    this.msnMask = layout.msnEntries - 1;
    this.sqDbHi = R.doorbellHi(held.qpn, R.DbcType.SQ);
    this.rqDbHi = R.doorbellHi(held.qpn, R.DbcType.RQ);
  }

  /**
   * Writes a SEND WQE of one SGE and its MSN or PSN-search entry, then rings the SQ doorbell:
   * writeSqWqe's work for a SEND, with writeSge's, writeMsnEntry's and writePsnEntry's written
   * out (a hand-inlined copy: test/tidy.test.ts PERF_FORKS names its differential test and its
   * benchmark). Its bytecode (463 bytes) is over V8's limit for a function it inlines (460,
   * --max-inlined-bytecode-size), on purpose: Qp.send (or a program's loop around it) always
   * calls it, and its own optimized code inlines all it calls (~450 of the 920 bytes V8 allows a
   * function). Where it was small enough to be inlined, whichever function V8 optimized first
   * decided where its budget ran out (perf, bench/qp-post-poll.ts's harness: push or doorbell64
   * left as calls in 3 of 4 processes, send post+poll 31-37 ns by the process; like this
   * 31.3-31.7 in 4 of 4). test/qp-post-inlining.test.ts asks V8 (--trace-turbo-inlining) that
   * it is never inlined and inlines every call it makes; keep it so, or make its callers fit.
   * The ring's numbers are literals (RING_ENTRIES 4096: mask 4095, shift 12, the SGE at word 8,
   * checked at load).
   */
  postSend(r: SgeSource, at: number, n: number): void {
    const prod = this.sqProd;
    const idx = prod & 4095; // MASK
    this.sqLength[idx] = n;
    if (this.failure !== undefined) return this.skipSend();
    const u = this.sq32;
    const w = idx * this.sqWqeWords;
    W.setSqSendHdrWords(u, w, SEND_WORD0, 0, n, 0, 0, 0, 0, 0);
    const lo = (r.vaLo + at) >>> 0; // as writeSge
    W.setSqSgeWords(u, w + 8, lo, lo < at ? r.vaHi + 1 : r.vaHi, r.key, n); // SGE_WORD
    // The PSN step and the MSN or PSN-search entry: advancePsn's, writeMsnEntry's and writePsnEntry's work.
    const start = this.nextPsn;
    const next = (start + R.psnPacketsByShift(n, this.mtuShift)) & 0xffffff; // R.PSN_MASK
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
    if (this.failure !== undefined) return this.skipSend();
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

  /** The PSN after a message of n bytes from nextPsn, which it becomes (ib-transport.ts psnPacketsByShift). */
  private advancePsn(n: number): number {
    const next = (this.nextPsn + R.psnPacketsByShift(n, this.mtuShift)) & R.PSN_MASK;
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
    W.setSqMsnSearchWords(u, this.auxWord + (prod & this.msnMask) * MSN_WORDS,
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
  private skipSend(): void {
    this.sqProd++;
  }

  /** As skipSend, for the RQ. */
  private skipReceive(): void {
    this.rqProd++;
  }

  /** Writes an RQ WQE of one SGE (wr_id = its ring index), then rings the RQ doorbell. */
  postReceive(r: SgeSource, at: number, n: number): void {
    const prod = this.rqProd;
    const idx = prod & MASK;
    this.rqLength[idx] = n;
    if (this.failure !== undefined) return this.skipReceive();
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
}
