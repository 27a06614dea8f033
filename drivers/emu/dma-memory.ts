/**
 * DMA memory of the software NIC's host: each buffer is its own SharedArrayBuffer, mapped
 * into the model's IOMMU at an IOVA chosen here, as VFIO maps memfd buffers. IOVAs start
 * above 4 GiB so the high halves of every address field are exercised.
 */
import type { DmaBuffer, DmaMemory } from '../device.ts';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { IovaAllocator, IOVA_BASE, IOVA_LIMIT } from '../iova-allocator.ts';

const PAGE = 4096;
const HUGE = 2 * 1024 * 1024;

export interface DmaMapper {
  map(iova: number, memory: SharedArrayBuffer, length: number): void;
  unmap(iova: number): void;
}

class EmuDmaBuffer implements DmaBuffer {
  readonly bytes: Uint8Array;
  readonly u32: Uint32Array;
  readonly view: DataView;
  constructor(readonly iova: number, readonly length: number, readonly memory: SharedArrayBuffer, readonly pageBytes: number) {
    this.bytes = new Uint8Array(memory, 0, length);
    this.u32 = new Uint32Array(memory, 0, length >>> 2);
    this.view = new DataView(memory, 0, length);
  }
}

/** Freed backing memory kept for reuse: creating a SharedArrayBuffer costs ~0.1 ms (the OS maps and zeroes it). */
const CACHE_LIMIT_BYTES = 64 * 1024 * 1024;

export class EmuDmaMemory implements DmaMemory {
  private readonly iovas = new IovaAllocator({ ranges: [{ start: IOVA_BASE, end: IOVA_LIMIT }] });
  private readonly cache = new Map<number, SharedArrayBuffer[]>();
  private cachedBytes = 0;
  private live = new Set<DmaBuffer>();
  allocatedBytes = 0;

  constructor(private readonly mapper: DmaMapper, private readonly limitBytes = 2 ** 34) {}

  get allocatedBuffers(): number {
    return this.live.size;
  }

  alloc(length: number): Result<DmaBuffer> {
    if (!Number.isSafeInteger(length) || length < 0) return err(`cannot allocate ${length} bytes of DMA memory`);
    const size = Math.max(PAGE, Math.ceil(length / PAGE) * PAGE);
    if (this.allocatedBytes + size > this.limitBytes) return err(`out of DMA memory: ${size} bytes asked, ${this.limitBytes - this.allocatedBytes} left`);
    // Buffers of 2 MiB or more behave as hugepage memory: 2 MiB-aligned IOVA and pages.
    const huge = size >= HUGE && size % HUGE === 0;
    const iova = this.iovas.allocate(size, huge ? HUGE : PAGE);
    if (!iova.ok) return iova;
    let memory = this.cache.get(size)?.pop();
    if (memory) {
      this.cachedBytes -= size;
      new Uint8Array(memory).fill(0); // handed out zeroed, as fresh memory is
    } else {
      try {
        memory = new SharedArrayBuffer(size);
      } catch {
        this.iovas.release(iova.value);
        return err(`the machine has no memory for ${size} bytes of DMA memory`);
      }
    }
    this.mapper.map(iova.value, memory, size);
    const buffer = new EmuDmaBuffer(iova.value, size, memory, huge ? HUGE : PAGE);
    this.live.add(buffer);
    this.allocatedBytes += size;
    return ok(buffer);
  }

  free(buffer: DmaBuffer): void {
    if (!this.live.delete(buffer)) throw new Error(`emu dma: buffer at 0x${buffer.iova.toString(16)} is not allocated`);
    this.mapper.unmap(buffer.iova);
    this.allocatedBytes -= buffer.length;
    this.iovas.release(buffer.iova);
    if (this.cachedBytes + buffer.length <= CACHE_LIMIT_BYTES) {
      const memory = (buffer as EmuDmaBuffer).memory;
      const list = this.cache.get(buffer.length);
      if (list) list.push(memory);
      else this.cache.set(buffer.length, [memory]);
      this.cachedBytes += buffer.length;
    }
  }
}
