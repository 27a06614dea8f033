/**
 * The device side of a notification ring: the CREQ and every NQ are rings of 16-byte
 * entries that HWRM_RING_ALLOC created (type NQ on P5), which the device fills and the
 * driver drains (roce_hsi.h creq_base, nq_base; Linux bnxt_re qplib_rcfw.c bnxt_qplib_service_creq,
 * qplib_fp.c bnxt_qplib_service_nq). One writer serves both.
 *
 *   entry k of pass p (p = producer / depth):  words 0, 1, 3 written first,
 *   then word 2 (byte 8 bit 0 = v, v = 1 on even passes, 0 on odd) with a release store.
 *
 * The driver returns space with NQ / NQ_ARM doorbells (index = its consumer index within
 * the ring, epoch = parity of its wraps). The device never overruns it: while the ring is
 * full, entries wait in a bounded FIFO and go out on the next doorbell that makes room.
 * Posting allocates nothing (it runs per CQ notification).
 */
import type { Iommu } from '../iommu.ts';
import { walkPageList, type PagedMemory } from '../objects.ts';
import type { NqRing } from './function-resources.ts';
import { NQE_BYTES } from '../../../../firmware-hwrm/roce/nqe.ts';
import * as Nqe from '../../../../firmware-hwrm/roce/nqe.g.ts';
import * as Creq from '../../../../firmware-hwrm/roce/creq.g.ts';
import { ringLap, ringPhase, ringSlot } from '../../../../firmware-hwrm/ring.ts';

const ENTRY_BYTES = NQE_BYTES;
// One writer serves both kinds of entry: they must agree on their size and where v lies.
if (
  Creq.CREQ_BASE_WORDS !== Nqe.NQ_BASE_WORDS || Creq.CREQ_BASE_V_WORD !== Nqe.NQ_BASE_V_WORD ||
  Creq.CREQ_BASE_V_SHIFT !== Nqe.NQ_BASE_V_SHIFT
) {
  throw new Error('creq_base and nq_base disagree on their valid bit');
}
const PAGE_BYTES = 4096;
/** Entries held while the ring is full; beyond this they are dropped (and counted). */
export const HELD_ENTRIES = 1024;

export class NotifyRing {
  /** Entries written so far (free-running). */
  producer = 0;
  /** The driver's consumer, free-running, as last told by a doorbell. */
  consumer = 0;
  /** Entries lost because the ring and the hold FIFO were both full. */
  dropped = 0;
  /** Doorbells whose index/epoch named no position between the consumer and the producer. */
  badDoorbells = 0;
  private readonly held = new Uint32Array(HELD_ENTRIES * 4);
  /** The entry being written, as words. */
  private readonly entry = new Uint32Array(Nqe.NQ_BASE_WORDS);
  private heldHead = 0;
  private heldCount = 0;

  private constructor(
    /** The HWRM ring this writer was opened on (a freed and re-allocated ring is a new object). */
    readonly desc: NqRing,
    private readonly iommu: Iommu,
    private readonly memory: PagedMemory,
    /** Ring depth in entries (RING_ALLOC length). */
    readonly depth: number,
  ) {}

  /** Resolves the ring's pages through the IOMMU; undefined if any of them is unmapped. */
  static open(iommu: Iommu, desc: NqRing): NotifyRing | undefined {
    if (desc.length < 1) return undefined;
    const pageBytes = desc.pageTblDepth === 0 ? PAGE_BYTES : 2 ** desc.pageSizeLog2;
    const memory = walkPageList(iommu, desc.pageTblAddr, desc.pageTblDepth, pageBytes, desc.length * ENTRY_BYTES);
    return memory ? new NotifyRing(desc, iommu, memory, desc.length) : undefined;
  }

  /** True if an entry posted now is written at once (nothing held, a free slot). */
  hasRoom(): boolean {
    return this.heldCount === 0 && this.producer - this.consumer < this.depth;
  }

  get pending(): number {
    return this.heldCount;
  }

  /**
   * Posts one entry given as four little-endian words; bit 0 of w2 is replaced by the valid
   * bit of the slot's pass. False if it had to be dropped.
   */
  post(w0: number, w1: number, w2: number, w3: number): boolean {
    if (this.hasRoom()) {
      this.write(w0, w1, w2, w3);
      return true;
    }
    if (this.heldCount === HELD_ENTRIES) {
      this.dropped++;
      return false;
    }
    const at = ((this.heldHead + this.heldCount) % HELD_ENTRIES) * 4;
    this.held[at] = w0;
    this.held[at + 1] = w1;
    this.held[at + 2] = w2;
    this.held[at + 3] = w3;
    this.heldCount++;
    return true;
  }

  /**
   * A doorbell from the driver: its consumer is at `index` of the ring, on a pass of parity
   * `epoch`. Returns the number of held entries it let out.
   */
  doorbell(index: number, epoch: number): number {
    const consumer = this.consumerAt(index, epoch & 1);
    if (consumer === undefined) {
      this.badDoorbells++;
      return 0;
    }
    if (consumer > this.consumer) this.consumer = consumer;
    let flushed = 0;
    while (this.heldCount > 0 && this.producer - this.consumer < this.depth) {
      const at = this.heldHead * 4;
      this.write(this.held[at]!, this.held[at + 1]!, this.held[at + 2]!, this.held[at + 3]!);
      this.heldHead = (this.heldHead + 1) % HELD_ENTRIES;
      this.heldCount--;
      flushed++;
    }
    return flushed;
  }

  /**
   * The free-running consumer named by (index, epoch): the one position in
   * [producer - depth, producer] with that index whose pass has that parity.
   */
  private consumerAt(index: number, epoch: number): number | undefined {
    if (index >= this.depth) return undefined;
    const lap = ringLap(this.producer, this.depth);
    for (let l = lap; l >= lap - 1 && l >= 0; l--) {
      const c = l * this.depth + index;
      if ((l & 1) === epoch && c <= this.producer && c >= this.producer - this.depth) return c;
    }
    return undefined;
  }

  private write(w0: number, w1: number, w2: number, w3: number): void {
    const slot = ringSlot(this.producer, this.depth);
    const v = ringPhase(this.producer, this.depth);
    const iova = this.memory.iova(slot * ENTRY_BYTES);
    const io = this.iommu;
    const e = this.entry;
    e[0] = w0;
    e[1] = w1;
    e[2] = w2;
    e[3] = w3;
    Nqe.setNqBaseV(e, 0, v);
    for (let k = 0; k < Nqe.NQ_BASE_WORDS; k++) if (k !== Nqe.NQ_BASE_V_WORD) io.write32(iova + k * 4, e[k]!);
    // The valid bit goes last: the driver reads nothing of an entry before it sees v.
    io.write32Release(iova + Nqe.NQ_BASE_V_WORD * 4, e[Nqe.NQ_BASE_V_WORD]!);
    this.producer++;
  }
}
