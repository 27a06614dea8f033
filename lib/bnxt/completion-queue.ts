/**
 * A completion queue as the data path reads it: 32-byte CQEs written by the NIC, valid when
 * their toggle bit equals this pass's phase (1 on the first pass, flipping at each wrap, as
 * rdma-core's bnxt_re reads them), consumed in order, acknowledged with a CQ doorbell.
 *
 *   [cqe 0][cqe 1]...[cqe 4095]   toggle of pass k = 1 - (k & 1)
 *     ^cons
 */
import type { Mmio } from '../../drivers/device.ts';
import { DbcType, doorbellHi, DBC_EPOCH_SHIFT } from '../../firmware-hwrm/roce/doorbell.ts';
import { CQE_TRAILER_WORD, CQE_TOGGLE_MASK } from '../../firmware-hwrm/roce/cqe.ts';
import type { RingMemory } from './ring-memory.ts';

export const CQ_ENTRIES = 4096; // a power of two: index = count & mask, pass = count >>> 12
const CQ_MASK = CQ_ENTRIES - 1;
const CQ_SHIFT = 12;
const CQE_WORDS = 8;

export class CompletionQueue {
  readonly u32: Uint32Array;
  /** Free-running count of CQEs consumed. */
  cons = 0;
  private readonly dbHi: number;

  constructor(
    readonly id: number,
    readonly memory: RingMemory,
    private readonly doorbells: Mmio,
    private readonly doorbellOffset: number,
  ) {
    this.u32 = memory.buffer.u32;
    this.dbHi = doorbellHi(id, DbcType.CQ);
  }

  /** Word index of the current CQE's first word. */
  at(): number {
    return (this.cons & CQ_MASK) * CQE_WORDS;
  }

  /** True if the NIC wrote the CQE at the consumer (its toggle matches this pass). */
  ready(): boolean {
    const trailer = Atomics.load(this.u32, this.at() + CQE_TRAILER_WORD);
    return (trailer & CQE_TOGGLE_MASK) === (((this.cons >>> CQ_SHIFT) & 1) ^ 1);
  }

  /** True if the CQE `ahead` entries past the consumer is ready (for counting, never consuming). */
  readyAhead(ahead: number): boolean {
    const c = this.cons + ahead;
    const trailer = Atomics.load(this.u32, (c & CQ_MASK) * CQE_WORDS + CQE_TRAILER_WORD);
    return (trailer & CQE_TOGGLE_MASK) === (((c >>> CQ_SHIFT) & 1) ^ 1);
  }

  /** Consumes the current CQE and tells the NIC (one 64-bit doorbell). */
  advance(): void {
    this.cons++;
    this.doorbells.doorbell64(this.doorbellOffset, (this.cons & CQ_MASK) | (((this.cons >>> CQ_SHIFT) & 1) << DBC_EPOCH_SHIFT), this.dbHi);
  }
}
