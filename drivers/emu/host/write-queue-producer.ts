/**
 * The driver's side of the software NIC's write queue (drivers/emu/model/write-queue.ts has the
 * layout and the device's side): every BAR write and doorbell pushed in order, the tail published
 * to a consumer in another thread with a release store and a wake if it sleeps, and the eventfd
 * of a device asleep in poll(2) (wake-fd.ts) signalled too. The host's, not the model's: it knows
 * which thread it runs in and holds the eventfd.
 */
import { threadId } from 'node:worker_threads';
import { signalWakeFd } from './wake-fd.ts';
import { WRITE_QUEUE_LAYOUT as L } from '../model/write-queue.ts';

// push and publish spell the layout out as literals (HEADER_WORDS 32, ENTRY_WORDS 4, ENTRIES 8192,
// TAIL 16, SLEEPING 17): an imported binding is a cell load and a hole check at each use, inside
// V8's inlining budget of every post. The model's layout must be these numbers.
if (L.headerWords !== 32 || L.entryWords !== 4 || L.entries !== 8192 || L.tail !== 16 || L.sleeping !== 17) {
  throw new Error('write-queue layout');
}

/** Records the eventfd a device sleeping in poll(2) is woken by (wake-fd.ts); before the device starts. */
export function setWriteQueueWakeFd(sab: SharedArrayBuffer, fd: number): void {
  Atomics.store(new Int32Array(sab), L.wakeFd, fd + 1);
}

/** The eventfd recorded by setWriteQueueWakeFd, or -1. */
export function writeQueueWakeFd(sab: SharedArrayBuffer): number {
  return Atomics.load(new Int32Array(sab), L.wakeFd) - 1;
}

export class WriteQueueProducer {
  private readonly words: Int32Array;
  private tail: number = 0;
  /** The tail at which the queue is full by the head last read: the head is read again only there. */
  private full: number = 0;
  /** The consumer runs in this thread: plain loads and stores of the counts (see the top). */
  private readonly local: boolean = false;
  /** A device that sleeps in poll(2) is woken through this eventfd too (-1: none). */
  private readonly wakeFd: number = -1;

  constructor(
    sab: SharedArrayBuffer,
    /** Called while the queue is full (lets a stepped device drain it). */
    private readonly whileFull: () => void,
  ) {
    const w = new Int32Array(sab);
    this.words = w;
    this.tail = Atomics.load(w, L.tail);
    this.full = (Atomics.load(w, L.head) + L.entries) | 0;
    this.wakeFd = Atomics.load(w, L.wakeFd) - 1;
    Atomics.store(w, L.producerThread, threadId + 1);
    this.local = Atomics.load(w, L.consumerThread) === threadId + 1;
  }

  /**
   * The layout's numbers are literals here: each module constant a function reads is 6 bytes
   * of bytecode (a context load and its TDZ check), and this function is inlined into every
   * doorbell of the driver's posts, where V8's inlining budget (920 bytes for a whole tree)
   * is what decides whether all of a post compiles into one function.
   */
  push(kind: number, offset: number, lo: number, hi: number): void {
    const w = this.words;
    const tail = this.tail;
    if (tail === this.full) this.waitForRoom(tail);
    const at = ((tail & 8191) << 2) + 32; // HEADER_WORDS + (tail & (ENTRIES - 1)) * ENTRY_WORDS
    w[at] = kind;
    w[at + 1] = offset;
    w[at + 2] = lo;
    w[at + 3] = hi;
    const next = (tail + 1) | 0;
    this.tail = next;
    if (this.local === true) w[16] = next; // TAIL (a boolean: one compare, where `if (x)` tests every falsy value)
    else this.publish(next);
  }

  /** To a consumer in another thread: the tail as a release store, then a wake if it sleeps. */
  private publish(next: number): void {
    const w = this.words;
    // The release store publishes the entry (and every earlier DMA write) to the device.
    Atomics.store(w, 16, next); // TAIL
    if (Atomics.load(w, 17) !== 0) { // SLEEPING
      Atomics.notify(w, 16);
      if (this.wakeFd >= 0) signalWakeFd(this.wakeFd);
    }
  }

  /** The queue looked full at `tail`: reads the head until the consumer made room. */
  private waitForRoom(tail: number): void {
    for (;;) {
      const head = this.local ? this.words[L.head]! : Atomics.load(this.words, L.head);
      this.full = (head + L.entries) | 0;
      if (tail !== this.full) return;
      this.whileFull();
    }
  }
}
