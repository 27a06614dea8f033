/**
 * The software NIC's bus: every MMIO write the driver makes (BAR0 registers, BAR2
 * doorbells) is queued here, in order, for the device to take when it runs, as a real
 * device's posted writes arrive in order. A doorbell write queues work rather than doing it
 * inside the write (as QEMU device models do), so the driver never runs device code.
 *
 * Single producer (the driver's thread), single consumer (the device). Lives in a
 * SharedArrayBuffer so the device may run in a worker thread.
 *
 *   header (Int32): [0] head (consumer count) [1] tail (producer count)
 *                   [2] device sleeping flag  [3] wake eventfd + 1 (0: none; wake-fd.ts)
 *   entries: 4 x Int32 each: kind, offset, lo, hi
 */
import { signalWakeFd } from './wake-fd.ts';

export const enum WriteKind {
  Bar0Write32 = 0,
  Bar2Write32 = 1,
  Bar2Doorbell64 = 2,
  /** Not a bus write: wakes the device to read its control port (tests, faults). */
  Control = 3,
}

const HEAD = 0;
const TAIL = 1;
const SLEEPING = 2;
const WAKE_FD_WORD = 3;
const HEADER_WORDS = 4;
const ENTRY_WORDS = 4;

export const WRITE_QUEUE_ENTRIES = 8192; // power of two: index = count & mask

export function allocWriteQueue(): SharedArrayBuffer {
  return new SharedArrayBuffer((HEADER_WORDS + WRITE_QUEUE_ENTRIES * ENTRY_WORDS) * 4);
}

/** Records the eventfd a device sleeping in poll(2) is woken by (wake-fd.ts); before the device starts. */
export function setWriteQueueWakeFd(sab: SharedArrayBuffer, fd: number): void {
  Atomics.store(new Int32Array(sab), WAKE_FD_WORD, fd + 1);
}

/** The eventfd recorded by setWriteQueueWakeFd, or -1. */
export function writeQueueWakeFd(sab: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(sab), WAKE_FD_WORD) - 1;
}

export class WriteQueueProducer {
  private readonly words: Int32Array;
  private tail: number;
  /** A device that sleeps in poll(2) is woken through this eventfd too (-1: none). */
  private readonly wakeFd: number;

  constructor(
    sab: SharedArrayBuffer,
    /** Called while the queue is full (lets a stepped device drain it). */
    private readonly whileFull: () => void,
  ) {
    this.words = new Int32Array(sab);
    this.tail = Atomics.load(this.words, TAIL);
    this.wakeFd = Atomics.load(this.words, WAKE_FD_WORD) - 1;
  }

  push(kind: number, offset: number, lo: number, hi: number): void {
    const w = this.words;
    const tail = this.tail;
    while (((tail - Atomics.load(w, HEAD)) | 0) >= WRITE_QUEUE_ENTRIES) this.whileFull();
    const at = HEADER_WORDS + (tail & (WRITE_QUEUE_ENTRIES - 1)) * ENTRY_WORDS;
    w[at] = kind;
    w[at + 1] = offset;
    w[at + 2] = lo;
    w[at + 3] = hi;
    // The release store publishes the entry (and every earlier DMA write) to the device.
    this.tail = (tail + 1) | 0;
    Atomics.store(w, TAIL, this.tail);
    if (Atomics.load(w, SLEEPING) !== 0) {
      Atomics.notify(w, TAIL);
      if (this.wakeFd >= 0) signalWakeFd(this.wakeFd);
    }
  }
}

export class WriteQueueConsumer {
  readonly words: Int32Array;
  private head: number;
  // The entry last taken, read by the caller after take() returned true.
  kind = 0;
  offset = 0;
  lo = 0;
  hi = 0;

  constructor(sab: SharedArrayBuffer) {
    this.words = new Int32Array(sab);
    this.head = Atomics.load(this.words, HEAD);
  }

  pending(): boolean {
    return Atomics.load(this.words, TAIL) !== this.head;
  }

  take(): boolean {
    const w = this.words;
    if (Atomics.load(w, TAIL) === this.head) return false;
    const at = HEADER_WORDS + (this.head & (WRITE_QUEUE_ENTRIES - 1)) * ENTRY_WORDS;
    this.kind = w[at]!;
    this.offset = w[at + 1]!;
    this.lo = w[at + 2]! >>> 0;
    this.hi = w[at + 3]! >>> 0;
    this.head = (this.head + 1) | 0;
    Atomics.store(w, HEAD, this.head);
    return true;
  }

  /** Marks the device asleep; returns the tail to wait on, or undefined if work arrived meanwhile. */
  prepareSleep(): number | undefined {
    Atomics.store(this.words, SLEEPING, 1);
    const tail = Atomics.load(this.words, TAIL);
    if (tail !== this.head) {
      Atomics.store(this.words, SLEEPING, 0);
      return undefined;
    }
    return tail;
  }

  awake(): void {
    Atomics.store(this.words, SLEEPING, 0);
  }

  tailIndex(): number {
    return TAIL;
  }
}
