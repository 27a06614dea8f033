/**
 * The software NIC's only path to host memory, as a device behind an IOMMU: it reaches a
 * byte only by IOVA and only where the driver mapped a buffer. An access outside every
 * mapping is an IOMMU fault: counted, and the access does nothing (a read yields zeros).
 *
 * Translation is page by page, as an IOMMU's page tables give it: a range is reachable when
 * every byte of it is mapped, however the mappings were made. A process maps each DMA buffer
 * once (VFIO_IOMMU_MAP_DMA of the whole buffer), but a guest behind a virtual IOMMU has its
 * buffers arrive as one mapping per 4 KiB IOMMU page (QEMU passes each IOTLB entry on as its own
 * vfio-user DMA_MAP), each its own piece of memory: a 64 KiB ring is then 16 mappings that
 * are neighbours by IOVA only. The common case, a range inside one mapping, is one lookup (the
 * last mapping found, then a binary search); a range across mappings is walked from one to the
 * next, and a gap anywhere in it is a fault. The checks (check) and the copying and scalar
 * accesses take both; the zero-copy accesses (view, mappingOf, wordsOf, bytesIn, wordsIn) hand
 * out one mapping's own bytes, so they answer a range inside one mapping only, as a device fetches
 * a structure in one request, which PCIe never lets cross a 4 KiB boundary (the engine's ring
 * entries, SGEs and CQEs are aligned inside one page; its byte copies fall back to the copying
 * accesses where a page of a region spans mappings: engine/host.ts).
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
  /** log2(pageBytes), or -1 if it is not a power of two; pageMask = pageBytes - 1 then. */
  readonly pageShift: number;
  readonly pageMask: number;
  iova(offset: number): number;
}

/**
 * Memory the device reaches by request and reply instead of a mapping here (vfio-user's in-band
 * DMA_READ/DMA_WRITE: vfio-user/remote-dma.ts): tried only where no mapping covers an access, by
 * the copying and scalar accesses. The zero-copy ones (view, mappingOf, wordsOf, bytesIn,
 * wordsIn) hand out the mapping's own bytes, which such memory does not have: a fault there.
 */
export interface RemoteMemory {
  /** True if [iova, iova+length) lies inside one range the device may reach this way. */
  covers(iova: number, length: number): boolean;
  /** False if the range is not readable or the bytes did not come. */
  read(iova: number, length: number, into: Uint8Array, at: number): boolean;
  /** False if the range is not writable or the write was not taken. */
  write(iova: number, src: Uint8Array, at: number, length: number): boolean;
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
  /** Memory reached by request and reply where no mapping covers an access (RemoteMemory). */
  remote: RemoteMemory | undefined;
  /** Up to 8 bytes on their way between a scalar access and memory it cannot take in one piece. */
  private readonly scratch = new Uint8Array(8);
  private readonly scratchView = new DataView(this.scratch.buffer);

  /**
   * Maps `length` bytes of `memory` from byte `offset` (a multiple of 4: the mapping's words are
   * the buffer's) at `iova`. Mappings never overlap (an overlap throws); neighbours join up only
   * in translation, each keeping its own memory.
   */
  map(iova: number, memory: SharedArrayBuffer | ArrayBuffer, length: number, offset = 0): void {
    if (offset % 4 !== 0) throw new Error(`emu iommu: mapping offset ${offset} is not a multiple of 4`);
    const m: Mapping = {
      iova, end: iova + length, u8: new Uint8Array(memory, offset, length), dv: new DataView(memory, offset, length),
      u32: new Uint32Array(memory, offset, length >>> 2), shared: memory instanceof SharedArrayBuffer,
    };
    const ms = this.mappings;
    let lo = 0;
    let hi = ms.length;
    while (lo < hi) { // the first mapping that starts at or after iova
      const mid = (lo + hi) >> 1;
      if (ms[mid]!.iova < iova) lo = mid + 1;
      else hi = mid;
    }
    const prev = ms[lo - 1];
    const next = ms[lo];
    if ((prev && prev.end > iova) || (next && next.iova < m.end)) {
      throw new Error(`emu iommu: mapping 0x${iova.toString(16)}+${length} overlaps another`);
    }
    ms.splice(lo, 0, m);
  }

  /** Unmaps the mapping that starts at `iova`; from the next access on, its bytes fault. */
  unmap(iova: number): void {
    const i = this.indexAt(iova);
    if (i >= 0 && this.mappings[i]!.iova === iova) {
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

  /**
   * True if every byte of [iova, iova+length) is mapped (in one mapping or in neighbouring ones),
   * or the range lies inside one range of the remote memory.
   */
  check(iova: number, length: number): boolean {
    return length === 0 || this.find(iova, length) !== undefined || this.spans(iova, length) ||
      this.remote?.covers(iova, length) === true;
  }

  // ---- A range across mappings: page by page, from each mapping to its neighbour ----

  /** Index of the mapping that holds byte `iova`, or -1. */
  private indexAt(iova: number): number {
    const ms = this.mappings;
    let lo = 0;
    let hi = ms.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = ms[mid]!;
      if (iova < m.iova) hi = mid - 1;
      else if (iova >= m.end) lo = mid + 1;
      else return mid;
    }
    return -1;
  }

  /** True if [iova, iova+length) runs through mappings that follow each other without a gap. */
  private spans(iova: number, length: number): boolean {
    if (!(iova >= 0) || !(length > 0)) return false;
    const ms = this.mappings;
    let i = this.indexAt(iova);
    if (i < 0) return false;
    const end = iova + length;
    while (ms[i]!.end < end) {
      const next = ms[i + 1];
      if (next === undefined || next.iova !== ms[i]!.end) return false;
      i++;
    }
    return true;
  }

  /**
   * Copies between [iova, iova+length), which spans() accepted, and buf[at...], mapping by
   * mapping: into memory when `toMemory`, out of it otherwise.
   */
  private copyAcross(iova: number, length: number, buf: Uint8Array, at: number, toMemory: boolean): void {
    const ms = this.mappings;
    let i = this.indexAt(iova);
    let here = iova;
    let done = 0;
    while (done < length) {
      const m = ms[i++]!;
      const off = here - m.iova;
      const n = Math.min(length - done, m.end - here);
      if (toMemory) m.u8.set(buf.subarray(at + done, at + done + n), off);
      else buf.set(m.u8.subarray(off, off + n), at + done);
      done += n;
      here += n;
    }
  }

  // ---- Where no one mapping holds a scalar access: neighbouring mappings, the remote memory, or a fault ----

  /** Reads `length` (at most 8) bytes into the scratch; false (a fault) if they are not all reachable. */
  private scratchRead(iova: number, length: number): boolean {
    if (this.spans(iova, length)) {
      this.copyAcross(iova, length, this.scratch, 0, false);
      return true;
    }
    const r = this.remote;
    if (r !== undefined && r.covers(iova, length) && r.read(iova, length, this.scratch, 0)) return true;
    this.faults++;
    return false;
  }

  /** Writes the scratch's first `length` bytes; false (a fault) if they are not all reachable. */
  private scratchWrite(iova: number, length: number): boolean {
    if (this.spans(iova, length)) {
      this.onWrite?.(iova, length);
      this.copyAcross(iova, length, this.scratch, 0, true);
      return true;
    }
    const r = this.remote;
    if (r !== undefined && r.covers(iova, length)) {
      this.onWrite?.(iova, length);
      if (r.write(iova, this.scratch, 0, length)) return true;
    }
    this.faults++;
    return false;
  }

  private scratchWrite32(iova: number, value: number): boolean {
    this.scratchView.setUint32(0, value >>> 0, true);
    return this.scratchWrite(iova, 4);
  }

  read32(iova: number): number {
    const m = this.find(iova, 4);
    if (!m) return this.scratchRead(iova, 4) ? this.scratchView.getUint32(0, true) : 0;
    const off = iova - m.iova;
    if ((off & 3) === 0) return m.shared ? Atomics.load(m.u32, off >>> 2) : m.u32[off >>> 2]!;
    return m.dv.getUint32(off, true);
  }

  read16(iova: number): number {
    const m = this.find(iova, 2);
    if (!m) return this.scratchRead(iova, 2) ? this.scratchView.getUint16(0, true) : 0;
    return m.dv.getUint16(iova - m.iova, true);
  }

  read8(iova: number): number {
    const m = this.find(iova, 1);
    if (!m) return this.scratchRead(iova, 1) ? this.scratch[0]! : 0;
    return m.u8[iova - m.iova]!;
  }

  /** Reads a u64 that stays below 2^53 (addresses) as a number. */
  read64(iova: number): number {
    const m = this.find(iova, 8);
    if (!m) {
      const v = this.scratchView;
      return this.scratchRead(iova, 8) ? v.getUint32(0, true) + v.getUint32(4, true) * 4294967296 : 0;
    }
    const off = iova - m.iova;
    return m.dv.getUint32(off, true) + m.dv.getUint32(off + 4, true) * 4294967296;
  }

  write32(iova: number, value: number): boolean {
    const m = this.find(iova, 4);
    if (!m) return this.scratchWrite32(iova, value);
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
    if (!m) return this.scratchWrite32(iova, value); // in pieces, or remote: each lands before the next access
    this.onWrite?.(iova, 4);
    const off = iova - m.iova;
    if ((off & 3) !== 0 || !m.shared) m.dv.setUint32(off, value >>> 0, true);
    else Atomics.store(m.u32, off >>> 2, value);
    return true;
  }

  write8Release(iova: number, value: number): boolean {
    const m = this.find(iova, 1);
    if (!m) {
      this.scratch[0] = value;
      return this.scratchWrite(iova, 1);
    }
    this.onWrite?.(iova, 1);
    if (m.shared) Atomics.store(m.u8, iova - m.iova, value);
    else m.u8[iova - m.iova] = value;
    return true;
  }

  /** Copies host memory [iova, iova+length) into dst at dstAt. False (and a fault) if a byte is unmapped. */
  readInto(iova: number, length: number, dst: Uint8Array, dstAt: number): boolean {
    if (length === 0) return true;
    const m = this.find(iova, length);
    if (!m) {
      if (this.spans(iova, length)) {
        this.copyAcross(iova, length, dst, dstAt, false);
        return true;
      }
      const r = this.remote;
      if (r !== undefined && r.covers(iova, length) && r.read(iova, length, dst, dstAt)) return true;
      this.faults++;
      return false;
    }
    const off = iova - m.iova;
    dst.set(m.u8.subarray(off, off + length), dstAt);
    return true;
  }

  /** Copies src[srcAt, srcAt+length) into host memory at iova. False (and a fault) if a byte is unmapped. */
  writeFrom(iova: number, src: Uint8Array, srcAt: number, length: number): boolean {
    if (length === 0) return true;
    const m = this.find(iova, length);
    if (!m) {
      if (this.spans(iova, length)) {
        this.onWrite?.(iova, length);
        this.copyAcross(iova, length, src, srcAt, true);
        return true;
      }
      const r = this.remote;
      if (r !== undefined && r.covers(iova, length)) {
        this.onWrite?.(iova, length);
        if (r.write(iova, src, srcAt, length)) return true;
      }
      this.faults++;
      return false;
    }
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
    let page: number;
    let inPage: number;
    if ((o | 0) === o && o >= 0 && memory.pageShift >= 0) { // the same numbers as below, without a division
      page = o >> memory.pageShift;
      inPage = o & memory.pageMask;
    } else {
      page = Math.floor(o / memory.pageBytes);
      inPage = o - page * memory.pageBytes;
    }
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

  /**
   * wordsIn without the fault: undefined, and nothing counted, where wordsIn would fault (for a
   * caller that then takes the same bytes in smaller pieces, each looked up and counted on its own).
   */
  wordsInIfMapped(memory: PagedMemory, offset: number, length: number): Uint32Array | undefined {
    const m = this.pagedMapping(memory, offset, length);
    if (m === undefined || (this.pagedOffset & 3) !== 0) return undefined;
    this.wordOffset = this.pagedOffset >>> 2;
    return m.u32;
  }

  /**
   * The whole 32-bit words of the mapping bytesIn last returned, over the same buffer from its
   * byte 0 as those bytes (byte i of the mapping is in word i >>> 2): for copies a word at a time.
   */
  viewWords: Uint32Array = new Uint32Array(0);

  /** Like mappingOf, for `length` bytes at `offset` of `memory` (viewOffset and viewWords set). */
  bytesIn(memory: PagedMemory, offset: number, length: number): Uint8Array | undefined {
    const m = this.bytesInIfMapped(memory, offset, length);
    if (m === undefined) this.faults++;
    return m;
  }

  /**
   * bytesIn without the fault: undefined, and nothing counted, where the range is not inside one
   * mapping (for a caller that then copies it with readInto / writeFrom, which walk neighbouring
   * mappings and count a fault where a byte is unmapped).
   */
  bytesInIfMapped(memory: PagedMemory, offset: number, length: number): Uint8Array | undefined {
    const m = this.pagedMapping(memory, offset, length);
    if (m === undefined) return undefined;
    this.viewOffset = this.pagedOffset;
    this.viewWords = m.u32;
    return m.u8;
  }

  /** Like read32, at `offset` of `memory`. */
  read32In(memory: PagedMemory, offset: number): number {
    const m = this.pagedMapping(memory, offset, 4);
    if (m === undefined) return this.scratchRead(memory.iova(offset), 4) ? this.scratchView.getUint32(0, true) : 0;
    const off = this.pagedOffset;
    if ((off & 3) === 0) return m.shared ? Atomics.load(m.u32, off >>> 2) : m.u32[off >>> 2]!;
    return m.dv.getUint32(off, true);
  }

  /** Like write32Release, at `offset` of `memory`. */
  write32ReleaseIn(memory: PagedMemory, offset: number, value: number): boolean {
    const m = this.pagedMapping(memory, offset, 4);
    if (m === undefined) return this.scratchWrite32(memory.iova(offset), value);
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
