/**
 * A completion queue as the data path reads it: 32-byte CQEs written by the NIC, valid when
 * their toggle bit equals this pass's phase (1 on the first pass, flipping at each wrap, as
 * rdma-core's bnxt_re reads them), consumed in order, acknowledged with a CQ doorbell.
 *
 * The NIC needs the consumer index only so it never writes over a CQE not yet read. Each CQ
 * serves one ring of 4095 entries and holds 4096 CQEs, so the hot path tells the consumer
 * lazily: a post rings the CQ doorbell only when the NIC, not told since, could otherwise
 * find the CQ full before it completes that entry (see tellBeforePost). A poll then costs no
 * doorbell (rdma-core's bnxt_re defers its CQ doorbell too in deferred-doorbell mode, until
 * half the ring is consumed: bnxt_re_check_and_ring_cq_db). Each doorbell moves the consumer by
 * at most the ring's size.
 *
 *   [cqe 0][cqe 1]...[cqe 4095]   toggle of pass k = 1 - (k & 1)
 *     ^cons
 */
import type { Mmio } from '../../drivers/device.ts';
import { DbcType, doorbellHi } from '../../firmware-hwrm/roce/doorbell.ts';
import * as C from '../../firmware-hwrm/roce/cqe.g.ts';
import { RingCursor } from '../../firmware-hwrm/ring.ts';
import type { RingMemory } from './ring-memory.ts';

export const CQ_ENTRIES = 4096;
/** The CQ's slots, laps and toggle phase (firmware-hwrm/ring.ts). */
export const CQ_RING = new RingCursor(CQ_ENTRIES);
// The per-poll reads below spell RingCursor.slot and .phase out with the ring's mask and shift:
// measured (bench/qp-post-poll.ts), the calls through the cursor cost the send path ~4 ns.
const CQ_MASK = CQ_RING.mask;
const CQ_SHIFT = CQ_RING.shift;
const CQE_WORDS = C.CQ_BASE_WORDS;

/** One CQ of the driver; its slot and phase are RingCursor's, spelled out (test/tidy.test.ts PERF_FORKS). */
export class CompletionQueue {
  readonly u32: Uint32Array;
  /** Free-running count of CQEs consumed. */
  cons = 0;
  /** The consumer count the NIC was last told by a CQ doorbell. */
  private told = 0;
  private readonly dbHi: number = 0;
  /**
   * The NIC writes its CQEs from this thread (Device.writesInCallerThread): the trailer is read
   * with a plain load, which program order orders after the write. Else an acquire load: a NIC
   * writing from elsewhere (hardware, a worker thread) wrote the CQE's other words before it.
   * In Node 20 an Atomics.load is a call into a builtin, 12-16 ns here against ~1 ns.
   */
  private readonly plainLoads: boolean = false;

  constructor(
    readonly id: number,
    readonly memory: RingMemory,
    private readonly doorbells: Mmio,
    private readonly doorbellOffset: number,
    writesInThisThread = false,
  ) {
    this.u32 = memory.buffer.u32;
    this.dbHi = doorbellHi(id, DbcType.CQ);
    this.plainLoads = writesInThisThread;
  }

  /** The trailer word (toggle, type, status) of the CQE at word `w`. */
  private trailerAt(w: number): number {
    // (a boolean: `=== true` is one compare, where `if (x)` tests every falsy value)
    const i = w + C.CQ_BASE_TOGGLE_WORD;
    return this.plainLoads === true ? this.u32[i]! : Atomics.load(this.u32, i);
  }

  /** Word index of the current CQE's first word. */
  at(): number {
    return (this.cons & CQ_MASK) * CQE_WORDS;
  }

  /** True if the NIC wrote the CQE at the consumer (its toggle matches this pass). */
  ready(): boolean {
    const trailer = this.trailerAt(this.at());
    return C.cqBaseToggleOf(trailer) === (((this.cons >>> CQ_SHIFT) & 1) ^ 1);
  }

  /** The trailer word (toggle, type, status) of the CQE at the consumer: one load, before any other word's. */
  trailer(): number {
    return this.trailerAt(this.at());
  }

  /** The toggle a CQE at the consumer has once written: 1 on the first pass, flipping at each wrap. */
  phase(): number {
    return ((this.cons >>> CQ_SHIFT) & 1) ^ 1;
  }

  /** True if the CQE `ahead` entries past the consumer is ready (for counting, never consuming). */
  readyAhead(ahead: number): boolean {
    const c = this.cons + ahead;
    const trailer = this.trailerAt((c & CQ_MASK) * CQE_WORDS);
    return C.cqBaseToggleOf(trailer) === (((c >>> CQ_SHIFT) & 1) ^ 1);
  }

  /** Consumes the current CQE and tells the NIC (one 64-bit doorbell). */
  advance(): void {
    this.cons++;
    this.tell();
  }

  /** Consumes the current CQE; the NIC is told later, by tellBeforePost. */
  take(): void {
    this.cons++;
  }

  /**
   * Called before the doorbell of the ring's entry number `posted` (a free-running count, the
   * first entry being 1): its CQE is the posted-th the NIC writes, so the NIC finds room for it
   * if it was told a consumer at most CQ_ENTRIES behind. At that point at most posted - 1 CQEs
   * were consumed, so a doorbell moves the consumer by at most CQ_ENTRIES, never ambiguously.
   */
  tellBeforePost(posted: number): void {
    if (posted - this.told > CQ_ENTRIES) this.tell();
  }

  private tell(): void {
    this.told = this.cons;
    this.doorbells.doorbell64(this.doorbellOffset, CQ_RING.doorbellLo(this.cons), this.dbHi);
  }
}
