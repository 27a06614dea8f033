/**
 * Ring positions, one arithmetic for every ring on both sides of the interface: the driver's
 * SQ, RQ, CQ, CREQ and CMDQ, and the same rings as the software NIC reads and writes them (its
 * CQs, NQs, CREQ, CMDQ, SQs and RQs).
 *
 * A ring of `depth` entries is addressed by a free-running count c (the entries produced, or
 * consumed, since the ring was made), never by a wrapped index, so full and empty differ:
 *
 *   slot   c mod depth                 where entry c lives
 *   lap    floor(c / depth)            how many times the ring has wrapped
 *   epoch  lap & 1                     the bit a doorbell carries beside the slot (bnxt_hsi.h
 *                                      dbc_dbc epoch), so the device tells lap k from lap k + 1
 *   phase  epoch ^ 1                   the valid bit the producer writes on lap c's entries: 1
 *                                      on the first lap, flipping at each wrap (roce_hsi.h
 *                                      cq_base toggle, creq_base v, nq_base v; rdma-core
 *                                      bnxt_re_is_cqe_valid, Linux qplib_fp.c
 *                                      bnxt_qplib_queue_toggle / CREQ_CMP_VALID)
 *
 *   count:  0 1 2 3 | 4 5 6 7 | 8 ...        (depth 4)
 *   slot:   0 1 2 3 | 0 1 2 3 | 0
 *   epoch:  0       | 1       | 0
 *   phase:  1       | 0       | 1
 *
 * The driver chooses its depths, all powers of two: RingCursor masks and shifts, and a count
 * may run past 2^32 (a power of two divides 2^32, so ToUint32 keeps slot and epoch right). The
 * model takes depths the driver chose (CREATE_CQ cq_size, RING_ALLOC length, an SQ of any size):
 * the functions below RingCursor divide instead, for any depth.
 */
import { dbcDbcWord0 } from './roce/doorbell.g.ts';

/** The doorbell index field is 24 bits (dbc_dbc index): no ring may be deeper. */
export const MAX_RING_DEPTH = 1 << 24;

/** A ring of power-of-two depth, as the driver makes them. Pure arithmetic: it holds no count. */
export class RingCursor {
  readonly depth: number;
  readonly mask: number;
  readonly shift: number;

  constructor(depth: number) {
    if (!Number.isInteger(depth) || depth < 2 || depth > MAX_RING_DEPTH || (depth & (depth - 1)) !== 0)
      throw new RangeError(`ring depth ${depth} is not a power of two in 2..2^24`);
    this.depth = depth;
    this.mask = depth - 1;
    this.shift = 31 - Math.clz32(depth);
  }

  /** The slot of entry `count`. */
  slot(count: number): number {
    return count & this.mask;
  }

  /** The laps completed before entry `count` (mod 2^32 / depth). */
  lap(count: number): number {
    return count >>> this.shift;
  }

  /** The epoch bit a doorbell naming entry `count` carries. */
  epoch(count: number): number {
    return (count >>> this.shift) & 1;
  }

  /** The valid (toggle) bit entry `count` holds once its producer wrote it: 1 on the first lap. */
  phase(count: number): number {
    return ((count >>> this.shift) & 1) ^ 1;
  }

  /** Entries from slot `fromSlot` forward to slot `toSlot` (0..depth-1). */
  slotsBetween(fromSlot: number, toSlot: number): number {
    return (toSlot - fromSlot) & this.mask;
  }

  /** The low doorbell word naming entry `count` (dbc_dbc: index, epoch, toggle). */
  doorbellLo(count: number, toggle = 0): number {
    return dbcDbcWord0(count & this.mask, (count >>> this.shift) & 1, toggle);
  }
}

// ---- any depth (the model's rings) ---------------------------------------------------------

/**
 * The slot of entry `count` (a free-running count, never negative) of a ring of `depth`
 * entries: count mod depth, as an integer remainder while the count fits an int32. A count read
 * from a Float64Array (the model keeps WQE positions there) is a double, and `%` on a double is
 * a call to the C library's fmod (20-40 ns, on every WQE fetch); `| 0` makes it an int32 first.
 */
export function ringSlot(count: number, depth: number): number {
  return count <= 0x7fffffff ? (count | 0) % depth : count % depth;
}

/** The laps a ring of `depth` entries completed before entry `count`. */
export function ringLap(count: number, depth: number): number {
  return Math.floor(count / depth);
}

/** The valid (toggle) bit entry `count` of a ring of `depth` entries holds once written: 1 on the first lap. */
export function ringPhase(count: number, depth: number): number {
  return (Math.floor(count / depth) & 1) ^ 1;
}

/** The epoch bit a doorbell naming entry `count` of a ring of `depth` entries carries. */
export function ringEpoch(count: number, depth: number): number {
  return Math.floor(count / depth) & 1;
}

/**
 * Entries from free-running count `count` forward to ring slot `toSlot` (0..depth-1) of a ring
 * of `depth` entries: what a producer index in a doorbell adds (less than one lap).
 */
export function ringSlotsForward(count: number, toSlot: number, depth: number): number {
  return (toSlot - (count % depth) + depth) % depth;
}

/**
 * The free-running count a doorbell's (index, epoch) names, at or after `count`: the position
 * index + epoch x depth, seen modulo two laps, so a doorbell moves a count forward by less than
 * two laps and never back. (A doorbell names a position in 2 x depth: index and epoch; `index`
 * is a slot, below depth.) One remainder: the position less the count's place in two laps lies
 * in (-2 x depth, 2 x depth), so a negative one takes two laps more (the model runs this for
 * every producer doorbell: a second `%` would be an integer division more each).
 */
export function countAt(count: number, depth: number, index: number, epoch: number): number {
  const laps2 = depth * 2;
  const ahead = index + (epoch ? depth : 0) - (count % laps2);
  return count + (ahead < 0 ? ahead + laps2 : ahead);
}

/**
 * Entries between consumer position `consumer` (index + epoch x depth, in 0..2 x depth - 1, as
 * a doorbell names it) and the free-running producer count `producer`: those written and not
 * yet consumed.
 */
export function entriesAhead(producer: number, consumer: number, depth: number): number {
  const laps2 = depth * 2;
  return ((producer % laps2) - consumer + laps2) % laps2;
}
