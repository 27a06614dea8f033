/**
 * The software NIC's only path to host memory, as a device behind an IOMMU: it reaches a
 * byte only by IOVA and only where the driver mapped a buffer. An access outside every
 * mapping is an IOMMU fault: counted, and the access does nothing (a read yields zeros).
 */

/**
 * Host memory named by a page list, as the IOMMU's paged accesses need it (objects.ts
 * PagedMemory: declared here, so the IOMMU imports nothing above it), with the page
 * translations the IOMMU caches in it.
 */
export interface PagedMemory {
  readonly pages: readonly number[];
  readonly pageBytes: number;
  readonly firstOffset: number;
  readonly pageMapping: unknown[];
  readonly pageStart: Float64Array;
  readonly pageEpoch: Int32Array;
  iova(offset: number): number;
}

interface Mapping {
  readonly iova: number;
  readonly end: number;
  readonly u8: Uint8Array;
  readonly dv: DataView;
  /** Whole 32-bit words of the buffer, for atomic (ordered) accesses. */
  readonly u32: Uint32Array;
  readonly shared: boolean;
}

export class Iommu {
  private mappings: Mapping[] = []; // sorted by iova
  private last: Mapping | undefined;
  /**
   * Page translations cached in a PagedMemory hold while this is unchanged: an unmap starts a
   * new epoch (a map cannot make a cached translation wrong: mappings never overlap).
   */
  private epoch = 1;
  faults = 0;
  /** Optional observer of every DMA write (tests use it to prove nothing lands after destroy). */
  onWrite: ((iova: number, length: number) => void) | undefined;

  map(iova: number, memory: SharedArrayBuffer | ArrayBuffer, length: number): void {
    const m: Mapping = {
      iova, end: iova + length, u8: new Uint8Array(memory, 0, length), dv: new DataView(memory, 0, length),
      u32: new Uint32Array(memory, 0, length >>> 2), shared: memory instanceof SharedArrayBuffer,
    };
    let i = 0;
    while (i < this.mappings.length && this.mappings[i]!.iova < iova) i++;
    const prev = this.mappings[i - 1];
    const next = this.mappings[i];
    if ((prev && prev.end > iova) || (next && next.iova < m.end)) {
      throw new Error(`emu iommu: mapping 0x${iova.toString(16)}+${length} overlaps another`);
    }
    this.mappings.splice(i, 0, m);
  }

  unmap(iova: number): void {
    const i = this.mappings.findIndex((m) => m.iova === iova);
    if (i >= 0) {
      this.epoch = (this.epoch + 1) | 0 || 1;
      if (this.last === this.mappings[i]) this.last = undefined;
      this.mappings.splice(i, 1);
    }
  }

  get mappedBuffers(): number {
    return this.mappings.length;
  }

  private find(iova: number, length: number): Mapping | undefined {
    // NaN (an offset past a page list) would slip through every comparison below.
    if (!(iova >= 0)) return undefined;
    const last = this.last;
    if (last && iova >= last.iova && iova + length <= last.end) return last;
    const ms = this.mappings;
    let lo = 0;
    let hi = ms.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = ms[mid]!;
      if (iova < m.iova) hi = mid - 1;
      else if (iova >= m.end) lo = mid + 1;
      else {
        if (iova + length > m.end) return undefined;
        this.last = m;
        return m;
      }
    }
    return undefined;
  }

  /** True if [iova, iova+length) lies inside one mapping. */
  check(iova: number, length: number): boolean {
    return length === 0 || this.find(iova, length) !== undefined;
  }

  read32(iova: number): number {
    const m = this.find(iova, 4);
    if (!m) { this.faults++; return 0; }
    const off = iova - m.iova;
    if ((off & 3) === 0) return m.shared ? Atomics.load(m.u32, off >>> 2) : m.u32[off >>> 2]!;
    return m.dv.getUint32(off, true);
  }

  read16(iova: number): number {
    const m = this.find(iova, 2);
    if (!m) { this.faults++; return 0; }
    return m.dv.getUint16(iova - m.iova, true);
  }

  read8(iova: number): number {
    const m = this.find(iova, 1);
    if (!m) { this.faults++; return 0; }
    return m.u8[iova - m.iova]!;
  }

  /** Reads a u64 that stays below 2^53 (addresses) as a number. */
  read64(iova: number): number {
    const m = this.find(iova, 8);
    if (!m) { this.faults++; return 0; }
    const off = iova - m.iova;
    return m.dv.getUint32(off, true) + m.dv.getUint32(off + 4, true) * 4294967296;
  }

  write32(iova: number, value: number): boolean {
    const m = this.find(iova, 4);
    if (!m) { this.faults++; return false; }
    this.onWrite?.(iova, 4);
    m.dv.setUint32(iova - m.iova, value >>> 0, true);
    return true;
  }

  /**
   * A 32-bit write that publishes everything written before it (valid bits, toggle bits,
   * response valid bytes are written last, with this).
   */
  write32Release(iova: number, value: number): boolean {
    const m = this.find(iova, 4);
    if (!m) { this.faults++; return false; }
    this.onWrite?.(iova, 4);
    const off = iova - m.iova;
    if ((off & 3) !== 0 || !m.shared) m.dv.setUint32(off, value >>> 0, true);
    else Atomics.store(m.u32, off >>> 2, value);
    return true;
  }

  write8Release(iova: number, value: number): boolean {
    const m = this.find(iova, 1);
    if (!m) { this.faults++; return false; }
    this.onWrite?.(iova, 1);
    if (m.shared) Atomics.store(m.u8, iova - m.iova, value);
    else m.u8[iova - m.iova] = value;
    return true;
  }

  /** Copies host memory [iova, iova+length) into dst at dstAt. False (and a fault) if unmapped. */
  readInto(iova: number, length: number, dst: Uint8Array, dstAt: number): boolean {
    if (length === 0) return true;
    const m = this.find(iova, length);
    if (!m) { this.faults++; return false; }
    const off = iova - m.iova;
    dst.set(m.u8.subarray(off, off + length), dstAt);
    return true;
  }

  /** Copies src[srcAt, srcAt+length) into host memory at iova. False (and a fault) if unmapped. */
  writeFrom(iova: number, src: Uint8Array, srcAt: number, length: number): boolean {
    if (length === 0) return true;
    const m = this.find(iova, length);
    if (!m) { this.faults++; return false; }
    this.onWrite?.(iova, length);
    m.u8.set(src.subarray(srcAt, srcAt + length), iova - m.iova);
    return true;
  }

  /** Zero-copy view of host memory for the engine's hot path (valid until the next unmap). */
  view(iova: number, length: number): Uint8Array | undefined {
    const m = this.find(iova, length);
    if (!m) { this.faults++; return undefined; }
    const off = iova - m.iova;
    return m.u8.subarray(off, off + length);
  }

  /**
   * The mapping's 32-bit words for a structure at a 4-byte aligned `iova` (WQEs, SGE lists,
   * entries the accessors of firmware-hwrm read), with `wordOffset` set to its first word;
   * allocation-free. Undefined (an IOMMU fault) if unmapped or not aligned.
   */
  wordOffset = 0;
  wordsOf(iova: number, length: number): Uint32Array | undefined {
    const m = this.find(iova, length);
    const off = m === undefined ? 1 : iova - m.iova;
    if (m === undefined || (off & 3) !== 0) { this.faults++; return undefined; }
    this.wordOffset = off >>> 2;
    return m.u32;
  }

  /** Like view() but returns the whole mapping and sets `viewOffset`; allocation-free. */
  viewOffset = 0;
  mappingOf(iova: number, length: number): Uint8Array | undefined {
    const m = this.find(iova, length);
    if (!m) { this.faults++; return undefined; }
    this.viewOffset = iova - m.iova;
    return m.u8;
  }

  // ---- Host memory named as (paged memory, offset): the hot path, allocation-free ----
  //
  // The same accesses as above, for a range inside one page of a ring or region. The page's
  // translation is cached in the PagedMemory (one lookup per page per epoch, not a search per
  // access); any case the cache does not answer (a page not mapped at its first byte, a range
  // past that mapping, a page list too short) takes the IOVA path, so faults and results are
  // exactly those of the IOVA methods.

  /** Byte offset, in the buffer of the mapping pagedMapping returned, of the range's first byte. */
  pagedOffset = 0;

  private pagedMapping(memory: PagedMemory, offset: number, length: number): Mapping | undefined {
    const o = offset + memory.firstOffset;
    const page = Math.floor(o / memory.pageBytes);
    const inPage = o - page * memory.pageBytes;
    if (page < memory.pageEpoch.length) {
      if (memory.pageEpoch[page] !== this.epoch) {
        const pageIova = memory.pages[page]!;
        const m = this.find(pageIova, 1);
        if (m !== undefined) {
          memory.pageMapping[page] = m;
          memory.pageStart[page] = pageIova - m.iova;
          memory.pageEpoch[page] = this.epoch;
        }
      }
      if (memory.pageEpoch[page] === this.epoch) {
        const m = memory.pageMapping[page] as Mapping;
        const at = memory.pageStart[page]! + inPage;
        if (at + length <= m.u8.length) {
          this.pagedOffset = at;
          return m;
        }
      }
    }
    const iova = memory.iova(offset);
    const m = this.find(iova, length);
    if (m !== undefined) this.pagedOffset = iova - m.iova;
    return m;
  }

  /** Like wordsOf, for `length` bytes at `offset` of `memory`. */
  wordsIn(memory: PagedMemory, offset: number, length: number): Uint32Array | undefined {
    const m = this.pagedMapping(memory, offset, length);
    if (m === undefined || (this.pagedOffset & 3) !== 0) { this.faults++; return undefined; }
    this.wordOffset = this.pagedOffset >>> 2;
    return m.u32;
  }

  /** Like mappingOf, for `length` bytes at `offset` of `memory` (viewOffset set). */
  bytesIn(memory: PagedMemory, offset: number, length: number): Uint8Array | undefined {
    const m = this.pagedMapping(memory, offset, length);
    if (m === undefined) { this.faults++; return undefined; }
    this.viewOffset = this.pagedOffset;
    return m.u8;
  }

  /** Like read32, at `offset` of `memory`. */
  read32In(memory: PagedMemory, offset: number): number {
    const m = this.pagedMapping(memory, offset, 4);
    if (m === undefined) { this.faults++; return 0; }
    const off = this.pagedOffset;
    if ((off & 3) === 0) return m.shared ? Atomics.load(m.u32, off >>> 2) : m.u32[off >>> 2]!;
    return m.dv.getUint32(off, true);
  }

  /** Like write32Release, at `offset` of `memory`. */
  write32ReleaseIn(memory: PagedMemory, offset: number, value: number): boolean {
    const m = this.pagedMapping(memory, offset, 4);
    if (m === undefined) { this.faults++; return false; }
    if (this.onWrite !== undefined) this.onWrite(memory.iova(offset), 4);
    const off = this.pagedOffset;
    if ((off & 3) !== 0 || !m.shared) m.dv.setUint32(off, value >>> 0, true);
    else Atomics.store(m.u32, off >>> 2, value);
    return true;
  }

  /** Tells the write observer (tests) of a write at `offset` of `memory`; computes the IOVA only for it. */
  notePagedWrite(memory: PagedMemory, offset: number, length: number): void {
    if (this.onWrite !== undefined) this.onWrite(memory.iova(offset), length);
  }
}
