/**
 * DMA memory of the software NIC's host: each buffer is its own SharedArrayBuffer, mapped
 * into the model's IOMMU at an IOVA chosen here, as VFIO maps memfd buffers. IOVAs start
 * above 4 GiB so the high halves of every address field are exercised.
 */
import { openSync, readSync } from 'node:fs';
import type { DmaBuffer, DmaMemory } from '../../device.ts';
import { ok, err, type Result } from '../../../firmware-hwrm/result.ts';
import { IovaAllocator, IOVA_BASE, IOVA_LIMIT } from '../../iova-allocator.ts';
import { discardPages } from './discard-pages.ts';

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
  constructor(
    readonly iova: number, readonly length: number, readonly memory: SharedArrayBuffer, readonly pageBytes: number,
  ) {
    this.bytes = new Uint8Array(memory, 0, length);
    this.u32 = new Uint32Array(memory, 0, length >>> 2);
    this.view = new DataView(memory, 0, length);
  }
}

/**
 * Freed backing memory kept for reuse, shared by every software NIC of the process and bounded.
 *
 * A fresh SharedArrayBuffer costs ~0.1 ms (the OS maps and zeroes it), and a freed one is
 * garbage that lives until both the host's and the worker's isolates collect it; meanwhile
 * the C allocator keeps the pages. Regions of many sizes allocated and freed one after another
 * (or NICs opened and closed) grew the process's RSS without bound while its heap stayed flat.
 * So freed memory goes back into this pool, by size class (a buffer takes the smallest class
 * that holds it: at most a quarter wasted), and is handed out again zeroed; what the pool
 * cannot hold (over POOL_LIMIT_BYTES in all, or one buffer over POOL_MAX_BUFFER_BYTES) is
 * dropped, and a larger request never reuses memory beyond its class.
 */
export const POOL_LIMIT_BYTES = 64 * 1024 * 1024;
const POOL_MAX_BUFFER_BYTES = 16 * 1024 * 1024;

/** The class of a page-rounded size: itself up to 64 KiB, then a multiple of a quarter of its power of two. */
export function sizeClassBytes(size: number): number {
  if (size <= 16 * PAGE) return size;
  const step = 2 ** (Math.floor(Math.log2(size)) - 2);
  return Math.ceil(size / step) * step;
}

class BackingPool {
  private readonly byClass = new Map<number, SharedArrayBuffer[]>();
  private pooled = 0;

  get bytes(): number {
    return this.pooled;
  }

  /** Backing memory for `size` bytes: a pooled one of its class (its first `size` bytes zeroed), or a new one. */
  take(size: number): SharedArrayBuffer | undefined {
    // A buffer too big to pool gets exactly its size (its class would only waste memory).
    const classBytes = size > POOL_MAX_BUFFER_BYTES ? size : sizeClassBytes(size);
    const memory = this.byClass.get(classBytes)?.pop();
    if (memory === undefined) {
      try {
        return new SharedArrayBuffer(classBytes);
      } catch {
        return undefined;
      }
    }
    this.pooled -= classBytes;
    zeroShared(memory, size); // handed out zeroed, as fresh memory is
    return memory;
  }

  give(memory: SharedArrayBuffer): void {
    const bytes = memory.byteLength;
    // Over the bound: dropped, and the GC gives it back.
    if (bytes > POOL_MAX_BUFFER_BYTES || this.pooled + bytes > POOL_LIMIT_BYTES) return;
    const list = this.byClass.get(bytes);
    if (list) list.push(memory);
    else this.byClass.set(bytes, [memory]);
    this.pooled += bytes;
  }
}

const pool = new BackingPool();

/** Bytes of freed backing memory the process keeps for reuse (at most POOL_LIMIT_BYTES). */
export function pooledDmaBytes(): number {
  return pool.bytes;
}

export class EmuDmaMemory implements DmaMemory {
  private readonly iovas = new IovaAllocator({ ranges: [{ start: IOVA_BASE, end: IOVA_LIMIT }] });
  private live = new Set<DmaBuffer>();
  allocatedBytes = 0;

  constructor(private readonly mapper: DmaMapper, private readonly limitBytes = 2 ** 34) {}

  get allocatedBuffers(): number {
    return this.live.size;
  }

  alloc(length: number): Result<DmaBuffer> {
    if (!Number.isSafeInteger(length) || length < 0) return err(`cannot allocate ${length} bytes of DMA memory`);
    const size = Math.max(PAGE, Math.ceil(length / PAGE) * PAGE);
    if (this.allocatedBytes + size > this.limitBytes)
      return err(`out of DMA memory: ${size} bytes asked, ${this.limitBytes - this.allocatedBytes} left`);
    // Buffers of 2 MiB or more behave as hugepage memory: 2 MiB-aligned IOVA and pages.
    const huge = size >= HUGE && size % HUGE === 0;
    const iova = this.iovas.allocate(size, huge ? HUGE : PAGE);
    if (!iova.ok) return iova;
    const memory = pool.take(size);
    if (memory === undefined) {
      this.iovas.release(iova.value);
      return err(`the machine has no memory for ${size} bytes of DMA memory`);
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
    pool.give((buffer as EmuDmaBuffer).memory);
  }
}

/**
 * Zeroes the first `size` bytes of shared memory (rounded up to 8 when the memory has room).
 * V8 fills a SharedArrayBuffer element by element (relaxed atomic stores), so a Uint8Array
 * fill makes eight times the stores of a BigInt64Array one (2 MiB: 569 us against 71 us), and
 * zeroing reused rings was half of a queue pair's make + connect + destroy. Large buffers give
 * their whole pages back to the kernel instead (discard-pages.ts: pages nobody touched cost
 * nothing to zero again); without that, they are read from /dev/zero (the kernel's memset:
 * 1.4 MiB in 35-75 us against 50-115 us for the 8-byte fill, same runs). Small ones, where a
 * system call would cost more than it saves, take the 8-byte fill.
 */
export function zeroShared(memory: SharedArrayBuffer, size: number): void {
  if (size >= DEV_ZERO_MIN_BYTES) {
    const kept = discardPages(memory, size);
    if (kept !== undefined) {
      fillZero(memory, 0, kept.head);
      fillZero(memory, kept.tail, size - kept.tail);
      return;
    }
    if (zeroFromDevice(memory, size)) return;
  }
  fillZero(memory, 0, size);
}

/** Zeroes memory[at, at + length), in 8-byte stores where `at` is aligned and the memory has room. */
function fillZero(memory: SharedArrayBuffer, at: number, length: number): void {
  if (length <= 0) return;
  const words = Math.ceil(length / 8);
  if (at % 8 === 0 && at + words * 8 <= memory.byteLength) new BigInt64Array(memory, at, words).fill(0n);
  else new Uint8Array(memory, at, length).fill(0);
}

const DEV_ZERO_MIN_BYTES = 64 * 1024;
/** /dev/zero, opened on first use (-1: not there, or it failed once: the fill is used from then on). */
let devZero: number | undefined;

function zeroFromDevice(memory: SharedArrayBuffer, size: number): boolean {
  if (devZero === undefined) {
    try {
      devZero = openSync('/dev/zero', 'r');
    } catch {
      devZero = -1;
    }
  }
  if (devZero < 0) return false;
  const bytes = new Uint8Array(memory, 0, size);
  try {
    for (let at = 0; at < size;) {
      const n = readSync(devZero, bytes, at, size - at, null);
      if (n <= 0) throw new Error('short read');
      at += n;
    }
    return true;
  } catch {
    devZero = -1; // the fill zeroes what this left
    return false;
  }
}
