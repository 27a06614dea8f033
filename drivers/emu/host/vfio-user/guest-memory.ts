/**
 * Guest memory as the vfio-user client hands it over: each DMA_MAP names a range of guest
 * physical addresses and, when QEMU's RAM block has one (memory-backend-memfd,share=on), an fd
 * to mmap. Mapped ranges join the model's IOMMU at their guest physical address, so the model's
 * DMA reaches guest memory directly with the same bounds checks as in-process buffers.
 *
 * A range without an fd (ROM, BIOS windows, or a guest started without a shared memory
 * backend) or one the client allows only reads of is not placed in the IOMMU: the model reaches
 * it through the protocol's in-band fallback, a DMA_READ or DMA_WRITE request to the client per
 * access (remote-dma.ts), as the IOMMU's remote memory (iommu.ts RemoteMemory), within the
 * range's DMA_MAP permissions. An access the range does not allow, or that no reply completes,
 * is an IOMMU fault, counted like any other.
 */
import { systemLibc, LINUX, type Libc, type Pointer } from '../../../native/libc.ts';
import type { RemoteMemory } from '../../model/iommu.ts';
import { DMA_FLAGS } from './protocol.ts';

/** How the fd-less ranges are reached: the connection's DMA_READ/DMA_WRITE (remote-dma.ts RemoteDma). */
export interface InBandDma {
  read(address: number, length: number, into: Uint8Array, at: number): boolean;
  write(address: number, src: Uint8Array, at: number, length: number): boolean;
}

export interface GuestMapper {
  map(iova: number, memory: ArrayBuffer, length: number): void;
  unmap(iova: number): void;
}

interface Region {
  readonly address: number;
  readonly size: number;
  readonly flags: number;
  /** Native address of the mmap, when the range is backed here. */
  readonly mapped: Pointer | undefined;
}

export class GuestMemory implements RemoteMemory {
  private readonly regions: Region[] = [];
  /** Set while a client is connected: the ranges without an mmap are reached through it. */
  inBand: InBandDma | undefined;

  constructor(private readonly mapper: GuestMapper, private readonly libc: Libc = systemLibc()) {}

  get count(): number {
    return this.regions.length;
  }

  /** Bytes of guest memory the model reaches directly (mmapped and writable). */
  get reachableBytes(): number {
    return this.regions.reduce((n, r) => n + (r.mapped !== undefined ? r.size : 0), 0);
  }

  /**
   * Records a DMA_MAP; takes ownership of `fd` (closed here: the mmap keeps the memory).
   * Returns an error text for a range that overlaps another or cannot be mapped.
   */
  map(address: number, size: number, flags: number, fd: number | undefined, offset: number): string | undefined {
    const end = address + size;
    try {
      if (size <= 0 || !Number.isSafeInteger(end)) return `DMA_MAP of ${size} bytes at 0x${address.toString(16)}`;
      if (this.regions.some((r) => address < r.address + r.size && r.address < end))
        return `DMA_MAP 0x${address.toString(16)}+0x${size.toString(16)} overlaps a mapped range`;
      let mapped: Pointer | undefined;
      if (fd !== undefined && (flags & DMA_FLAGS.WRITE) !== 0) {
        const p = this.libc.mmap(size, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED, fd, offset);
        if (p < 0n) return `mmap of the DMA_MAP fd failed (${-Number(p)})`;
        mapped = p;
        this.mapper.map(address, this.libc.view(p, size), size);
      }
      this.regions.push({ address, size, flags, mapped });
      return undefined;
    } finally {
      if (fd !== undefined) this.libc.close(fd);
    }
  }

  /** The unmapped range holding all of [iova, iova+length), if any. */
  private remoteRegion(iova: number, length: number): Region | undefined {
    if (!(iova >= 0) || length <= 0) return undefined;
    for (const r of this.regions)
      if (r.mapped === undefined && iova >= r.address && iova + length <= r.address + r.size) return r;
    return undefined;
  }

  covers(iova: number, length: number): boolean {
    return this.inBand !== undefined && this.remoteRegion(iova, length) !== undefined;
  }

  read(iova: number, length: number, into: Uint8Array, at: number): boolean {
    const r = this.remoteRegion(iova, length);
    if (r === undefined || (r.flags & DMA_FLAGS.READ) === 0 || this.inBand === undefined) return false;
    return this.inBand.read(iova, length, into, at);
  }

  write(iova: number, src: Uint8Array, at: number, length: number): boolean {
    const r = this.remoteRegion(iova, length);
    if (r === undefined || (r.flags & DMA_FLAGS.WRITE) === 0 || this.inBand === undefined) return false;
    return this.inBand.write(iova, src, at, length);
  }

  /** Drops every range inside [address, address+size) (all of them with `all`); returns how many. */
  unmap(address: number, size: number, all = false): number {
    let n = 0;
    for (let i = this.regions.length - 1; i >= 0; i--) {
      const r = this.regions[i]!;
      if (!all && (r.address < address || r.address + r.size > address + size)) continue;
      this.release(r);
      this.regions.splice(i, 1);
      n++;
    }
    return n;
  }

  private release(r: Region): void {
    if (r.mapped === undefined) return;
    this.mapper.unmap(r.address);
    this.libc.munmap(r.mapped, r.size);
  }

  /** Closes an fd the client sent with a message that was refused. */
  closeFd(fd: number): void {
    this.libc.close(fd);
  }

  close(): void {
    this.unmap(0, 0, true);
  }
}
