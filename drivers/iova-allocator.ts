/**
 * Chooses device addresses (IOVAs) for DMA buffers: page-aligned ranges out of a set of
 * usable windows, with a free list so freed ranges are handed out again. Used by the VFIO
 * backend (windows from VFIO_IOMMU_GET_INFO's IOVA_RANGE capability) and usable by the
 * software NIC. Pure bookkeeping: it never touches memory or the IOMMU.
 *
 *   windows  [start ............................ end)   [start ....... end)
 *   free     [=====)      [========)    [========)     [===============)
 *   taken          [XXXXXX)        [XXXX)
 *
 * Invariants (checked by assertions after every change): free ranges are sorted, non-empty,
 * granule-aligned and never touch each other (neighbours are merged); a released range
 * overlaps no free range. Ranges are only ever carved out of free ranges, so two handed-out
 * ranges never overlap.
 */
import { ok, err, type Result } from '../firmware-hwrm/result.ts';
import { assert, invalid } from '../firmware-hwrm/errors.ts';

/**
 * IOVAs start at 4 GiB, so every address field's high half is exercised (and 0 is never a valid
 * address); they stay below 2^48, far under 2^53, so an IOVA is always an exact number. Both
 * backends (VFIO and the software NIC) hand out addresses from this window.
 */
export const IOVA_BASE = 2 ** 32;
export const IOVA_LIMIT = 2 ** 48;

/** A window of usable IOVAs, `end` exclusive. */
export interface IovaRange {
  readonly start: number;
  readonly end: number;
}

export interface IovaAllocatorOptions {
  readonly ranges: readonly IovaRange[];
  /** Smallest unit handed out; a power of two >= 4096 (the IOMMU's minimum page size). */
  readonly granuleBytes?: number;
}

const DEFAULT_GRANULE_BYTES = 4096;

export class IovaAllocator {
  readonly granuleBytes: number;
  /** Free ranges, sorted by start, non-adjacent. */
  private readonly free: { start: number; end: number }[] = [];
  /** Start of every handed-out range -> its length. */
  private readonly taken = new Map<number, number>();
  private takenBytes = 0;

  constructor(options: IovaAllocatorOptions) {
    const granule = options.granuleBytes ?? DEFAULT_GRANULE_BYTES;
    if (!isPowerOfTwo(granule) || granule < DEFAULT_GRANULE_BYTES)
      invalid(`IovaAllocator: granule ${granule} is not a power of two >= 4096`);
    this.granuleBytes = granule;
    const windows = [...options.ranges]
      .map((r) => {
        if (!Number.isSafeInteger(r.start) || !Number.isSafeInteger(r.end) || r.start < 0 || r.end < r.start) {
          invalid(`IovaAllocator: [${r.start}, ${r.end}) is not a range of safe non-negative integers`);
        }
        // Shrink each window to whole granules: a partial granule can never be mapped.
        return { start: roundUp(r.start, granule), end: Math.floor(r.end / granule) * granule };
      })
      .filter((r) => r.end > r.start)
      .sort((a, b) => a.start - b.start);
    for (const w of windows) {
      const last = this.free[this.free.length - 1];
      if (last && w.start < last.end) invalid(`IovaAllocator: windows overlap at ${hex(w.start)}`);
      if (last && w.start === last.end) last.end = w.end;
      else this.free.push(w);
    }
  }

  /** Bytes currently handed out. */
  get allocatedBytes(): number {
    return this.takenBytes;
  }

  /** Bytes still free (possibly fragmented). */
  get freeBytes(): number {
    let total = 0;
    for (const r of this.free) total += r.end - r.start;
    return total;
  }

  /**
   * Takes `lengthBytes` (rounded up to the granule) starting at a multiple of `alignBytes`
   * (a power of two; at least the granule). First fit, lowest address first.
   */
  allocate(lengthBytes: number, alignBytes: number = this.granuleBytes): Result<number> {
    if (!Number.isSafeInteger(lengthBytes) || lengthBytes <= 0)
      invalid(`IovaAllocator.allocate: length ${lengthBytes} is not a positive integer`);
    if (!isPowerOfTwo(alignBytes)) invalid(`IovaAllocator.allocate: alignment ${alignBytes} is not a power of two`);
    const align = Math.max(alignBytes, this.granuleBytes);
    const length = roundUp(lengthBytes, this.granuleBytes);
    for (let i = 0; i < this.free.length; i++) {
      const r = this.free[i]!;
      const start = roundUp(r.start, align);
      if (start + length > r.end) continue;
      // Split r into what is left before and after the taken range.
      const before = { start: r.start, end: start };
      const after = { start: start + length, end: r.end };
      const keep = [before, after].filter((p) => p.end > p.start);
      this.free.splice(i, 1, ...keep);
      this.taken.set(start, length);
      this.takenBytes += length;
      this.checkInvariants();
      return ok(start);
    }
    return err(
      `IOVA space exhausted: no free range of ${length} bytes aligned to ${align} ` +
        `(${this.takenBytes} bytes in use, ${this.freeBytes} free in ${this.free.length} pieces)`,
    );
  }

  /** Gives back a range returned by `allocate`, by its start. */
  release(iova: number): void {
    const length = this.taken.get(iova);
    if (length === undefined)
      invalid(`IovaAllocator.release: ${hex(iova)} was not handed out (or was already released)`);
    this.taken.delete(iova);
    this.takenBytes -= length;
    const end = iova + length;
    // Insert in order, then merge with the neighbours it touches.
    let i = 0;
    while (i < this.free.length && this.free[i]!.start < iova) i++;
    assert(i === 0 || this.free[i - 1]!.end <= iova, 'released IOVA range overlaps a free range below it');
    assert(i === this.free.length || this.free[i]!.start >= end, 'released IOVA range overlaps a free range above it');
    this.free.splice(i, 0, { start: iova, end });
    const next = this.free[i + 1];
    if (next && next.start === end) {
      this.free[i]!.end = next.end;
      this.free.splice(i + 1, 1);
    }
    const prev = this.free[i - 1];
    if (prev && prev.end === iova) {
      prev.end = this.free[i]!.end;
      this.free.splice(i, 1);
    }
    this.checkInvariants();
  }

  /** Length of the range handed out at `iova`, or undefined. */
  lengthOf(iova: number): number | undefined {
    return this.taken.get(iova);
  }

  private checkInvariants(): void {
    let previousEnd = -1;
    for (const r of this.free) {
      assert(r.start < r.end, 'IOVA free range is empty');
      assert(r.start > previousEnd, 'IOVA free ranges overlap, touch or are unsorted');
      assert(r.start % this.granuleBytes === 0 && r.end % this.granuleBytes === 0,
        'IOVA free range not granule-aligned');
      previousEnd = r.end;
    }
  }
}

function isPowerOfTwo(n: number): boolean {
  return Number.isSafeInteger(n) && n > 0 && 2 ** Math.round(Math.log2(n)) === n;
}

function roundUp(n: number, multiple: number): number {
  return Math.ceil(n / multiple) * multiple;
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}
