/**
 * The Device boundary. Everything above it (lib/, lib/bnxt/) reaches a NIC only through
 * these interfaces; drivers/vfio implements them on real hardware, drivers/emu on the
 * software NIC. Nothing above this boundary may know which one it has.
 */
import type { Result } from '../firmware-hwrm/result.ts';

/** One memory-mapped BAR. Offsets are bytes from the BAR's start. */
export interface Mmio {
  readonly size: number;
  /** 32-bit aligned read. */
  read32(offset: number): number;
  /** 32-bit aligned write; ordered after every earlier write to DMA memory. */
  write32(offset: number, value: number): void;
  /**
   * One 64-bit doorbell store of (hi << 32 | lo), ordered after every earlier write to DMA
   * memory. Takes two 32-bit halves so the hot path never creates a BigInt.
   */
  doorbell64(offset: number, lo: number, hi: number): void;
}

/** A DMA-able buffer: host memory the device reaches at `iova`. Views are made once. */
export interface DmaBuffer {
  /** Bus address the device uses (IOVA under VFIO). A Number: IOVAs stay below 2^53. */
  readonly iova: number;
  readonly length: number;
  readonly bytes: Uint8Array;
  /** Little-endian 32-bit view; `length` is a multiple of 4 for every buffer handed out. */
  readonly u32: Uint32Array;
  readonly view: DataView;
  /**
   * Largest power of two (>= 4096) that the buffer's IOVA and length are aligned to, capped at the page size backing
   * it.
   */
  readonly pageBytes: number;
}

export interface DmaMemory {
  /** Allocates zeroed DMA memory of at least `length` bytes, aligned to 4096 at least. */
  alloc(length: number): Result<DmaBuffer>;
  /** Unmaps and frees a buffer. The device must no longer name it. */
  free(buffer: DmaBuffer): void;
  /** Bytes currently allocated (for accounting and tests). */
  readonly allocatedBytes: number;
  readonly allocatedBuffers: number;
}

/**
 * Time, as the device sees it. `sleep` is where a driver waiting on the device gives up
 * the CPU: it returns after `us` microseconds or earlier if the device may have written
 * something (a device may wake it). A stepped software NIC advances its virtual time here.
 */
export interface Clock {
  nowNs(): number;
  /**
   * Writes nowNs() into `into[0]`: the clock read for hot loops. A time in ns is a double, and
   * a double returned from a call that is not inlined is a new heap object (an allocation per
   * look at the clock); one stored into a Float64Array is not.
   */
  readNs(into: Float64Array): void;
  /**
   * Gives up the CPU for up to `us` microseconds; a device may cut the sleep short. True if it
   * slept the whole time (at least `us` passed), false if it was cut short: a waiting loop then
   * counts a full sleep's time without reading the clock, and reads it only after a short one.
   */
  sleep(us: number): boolean;
  /** Called in spin loops between looks at DMA memory (lets a stepped device run). */
  relax(): void;
  /**
   * Whether one more look may find something the device wrote without the caller giving up the
   * CPU: true on hardware (it runs by itself); a device run in the caller's thread says whether
   * its last run did work; one in another thread whether that thread was seen running lately.
   * A spin that continues when this is false only delays a device waiting for the CPU.
   */
  deviceRunning(): boolean;
}

/**
 * Random numbers for the choices the protocol leaves to chance (a queue pair's first PSN: IBA
 * wants it unpredictable; Linux's bnxt_re and rdma-core's rc_pingpong draw it at random).
 * Crypto-random on hardware; the software NIC can draw from a seed so a run replays.
 */
export interface RandomSource {
  /** A uniform 32-bit unsigned integer. */
  u32(): number;
}

export interface PciIdentity {
  readonly address: string;
  readonly vendorId: number;
  readonly deviceId: number;
}

export interface Device {
  readonly identity: PciIdentity;
  bar(index: 0 | 2): Mmio;
  readonly dma: DmaMemory;
  readonly clock: Clock;
  readonly random: RandomSource;
  /**
   * True if every write the device makes to DMA memory is made by the caller's own thread (a
   * software NIC whose model runs inside the caller's calls: its clock's relax and sleep). The
   * thread's program order then puts each such write before every later load, so the driver
   * reads the words that say an entry is written (a CQE's toggle, a CREQ entry's valid bit) with
   * plain loads. Absent or false (hardware; a model in a worker thread): acquire loads
   * (Atomics.load), which see a write made elsewhere together with every write before it.
   */
  readonly writesInCallerThread?: boolean;
  /** Releases the device. After close, no DMA reaches host memory. */
  close(): void;
}
