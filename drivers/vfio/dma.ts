/**
 * DMA memory for a VFIO device (VFIO_IOMMU_MAP_DMA, include/uapi/linux/vfio.h; Documentation/driver-api/vfio.rst): each
 * buffer is its own memfd (2 MiB hugetlb pages when asked for 2 MiB or more and hugepages are reserved, 4 KiB pages
 * otherwise), mmapped shared and pre-faulted, given an IOVA by the IOVA allocator and
 * mapped read/write into the container's IOMMU. The memfd is closed right after mmap: the
 * mapping keeps the pages, and a long-lived fd per buffer would only use up descriptors.
 */
import type { DmaBuffer, DmaMemory } from '../device.ts';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { invalid } from '../../firmware-hwrm/errors.ts';
import type { IovaAllocator } from '../iova-allocator.ts';
import { LINUX, errnoName, type Libc, type Pointer } from '../native/libc.ts';
import { Mapping } from './mapping.ts';

export const SMALL_PAGE_BYTES = 4096;
export const HUGE_PAGE_BYTES = 2 * 1024 * 1024;

/** Puts host memory in front of the device at an IOVA (VFIO_IOMMU_MAP_DMA in production). */
export interface IommuMapper {
  map(vaddr: Pointer, iova: number, lengthBytes: number): Result<void>;
  unmap(iova: number, lengthBytes: number): Result<void>;
}

export interface VfioDmaMemoryOptions {
  readonly libc: Libc;
  readonly iommu: IommuMapper;
  readonly iovas: IovaAllocator;
  /** Try 2 MiB hugetlb pages for buffers of 2 MiB or more (falls back to 4 KiB pages). */
  readonly hugePages: boolean;
}

class VfioDmaBuffer implements DmaBuffer {
  readonly bytes: Uint8Array;
  readonly u32: Uint32Array;
  readonly view: DataView;

  constructor(
    readonly iova: number,
    readonly length: number,
    readonly pageBytes: number,
    readonly mapping: Mapping,
  ) {
    this.bytes = new Uint8Array(mapping.buffer, 0, length);
    this.u32 = new Uint32Array(mapping.buffer, 0, length >>> 2);
    this.view = new DataView(mapping.buffer, 0, length);
  }
}

export class VfioDmaMemory implements DmaMemory {
  private readonly live = new Set<VfioDmaBuffer>();
  /**
   * Buffers freeAll released (the device's close): the driver may still free them afterwards
   * (a buffer it held back while the firmware was silent goes back once the device cannot DMA:
   * lib/bnxt/dma-pool.ts releaseQuarantine), which is then nothing left to do, not a misuse.
   */
  private readonly releasedAtClose = new WeakSet<VfioDmaBuffer>();
  private bytesInUse = 0;

  constructor(private readonly options: VfioDmaMemoryOptions) {}

  get allocatedBytes(): number {
    return this.bytesInUse;
  }

  get allocatedBuffers(): number {
    return this.live.size;
  }

  alloc(length: number): Result<DmaBuffer> {
    if (!Number.isSafeInteger(length) || length < 0) return err(`cannot allocate ${length} bytes of DMA memory`);
    let memory: Result<{ mapping: Mapping; pageBytes: number }> | undefined;
    if (this.options.hugePages && length >= HUGE_PAGE_BYTES) {
      const huge = this.mapMemory(length, HUGE_PAGE_BYTES);
      // No hugepage free (or no hugetlb at all): 4 KiB pages still work.
      if (huge.ok) memory = huge;
    }
    memory ??= this.mapMemory(length, SMALL_PAGE_BYTES);
    if (!memory.ok) return memory;
    const { mapping, pageBytes } = memory.value;
    const size = mapping.lengthBytes;

    const iova = this.options.iovas.allocate(size, pageBytes);
    if (!iova.ok) {
      mapping.retire();
      return err(`cannot place ${size} bytes of DMA memory: ${iova.error}`);
    }
    const mapped = this.options.iommu.map(mapping.address, iova.value, size);
    if (!mapped.ok) {
      this.options.iovas.release(iova.value);
      mapping.retire();
      return err(`the IOMMU refused ${size} bytes of DMA memory at IOVA 0x${iova.value.toString(16)}: ${mapped.error}`);
    }
    const buffer = new VfioDmaBuffer(iova.value, size, pageBytes, mapping);
    this.live.add(buffer);
    this.bytesInUse += size;
    return ok(buffer);
  }

  free(buffer: DmaBuffer): void {
    const b = buffer as VfioDmaBuffer;
    if (!this.live.has(b)) {
      if (this.releasedAtClose.has(b)) return;
      invalid('DmaMemory.free: buffer was not allocated here or was already freed');
    }
    this.live.delete(b);
    this.bytesInUse -= b.length;
    const unmapped = this.options.iommu.unmap(b.iova, b.length);
    if (!unmapped.ok) {
      // The device may still reach this IOVA: keep it out of the allocator for good, and
      // keep the pages (they stay pinned by the IOMMU anyway).
      process.emitWarning(
        `rig-bnxt: IOVA 0x${b.iova.toString(16)} (${b.length} bytes) could not be unmapped and stays reserved: ` +
          `${unmapped.error}`,
      );
      return;
    }
    this.options.iovas.release(b.iova);
    b.mapping.retire();
  }

  /** Frees every buffer still allocated (device close); a later free of one of them does nothing. */
  freeAll(): void {
    for (const b of [...this.live]) {
      this.free(b);
      this.releasedAtClose.add(b);
    }
  }

  /** A fresh zeroed memfd of `length` rounded up to `pageBytes`, mapped shared and pre-faulted. */
  private mapMemory(length: number, pageBytes: number): Result<{ mapping: Mapping; pageBytes: number }> {
    const { libc } = this.options;
    const size = Math.max(pageBytes, Math.ceil(length / pageBytes) * pageBytes);
    const huge = pageBytes === HUGE_PAGE_BYTES;
    const kind = huge ? '2 MiB hugepages' : '4 KiB pages';
    const fd = libc.memfd_create(
      'rig-bnxt-dma', LINUX.MFD_CLOEXEC | (huge ? LINUX.MFD_HUGETLB | LINUX.MFD_HUGE_2MB : 0),
    );
    if (fd < 0) return err(`memfd_create for ${kind} failed: ${errnoName(fd)}`);
    try {
      const resized = libc.ftruncate(fd, size);
      if (resized < 0) return err(`cannot size a ${size}-byte memfd of ${kind}: ${errnoName(resized)}`);
      const address = libc.mmap(size, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED | LINUX.MAP_POPULATE, fd, 0);
      if (address < 0n) {
        const why = errnoName(Number(address));
        return err(
          `cannot map ${size} bytes of ${kind}: ${why}` +
            `${huge ? ' (reserve hugepages with scripts/bind-vfio.sh --hugepages N)' : ''}`,
        );
      }
      return ok({ mapping: new Mapping(libc, address, size), pageBytes });
    } finally {
      libc.close(fd);
    }
  }
}
