/**
 * The software NIC's bus: every MMIO write the driver makes (BAR0 registers, BAR2
 * doorbells) is queued here, in order, for the device to take when it runs, as a real
 * device's posted writes arrive in order. A doorbell write queues work rather than doing it
 * inside the write (as QEMU device models do), so the driver never runs device code.
 *
 * Single producer (the driver's thread; its side is the host's, drivers/emu/host/write-queue-producer.ts),
 * single consumer (the device, here). Lives in a SharedArrayBuffer so the device may run in a
 * worker thread.
 *
 *   header (Int32): [0] head (consumer count), alone in its 64-byte line (the consumer writes it
 *                   at every take; the producer reads it only when the queue looked full)
 *                   [16] tail (producer count) [17] device sleeping flag
 *                   [18] wake eventfd + 1 (0: none; host/wake-fd.ts) [19] producer's thread id + 1
 *                   [20] consumer's thread id + 1 (0: not made yet)
 *   entries: 4 x Int32 each: kind, offset, lo, hi
 *
 * Where the device runs in the driver's thread (inline and stepped hosts: the model, and so the
 * consumer, exists before the producer), both ends see the other's thread id is their own and
 * use plain loads and stores of the counts: one thread's program order is all the ordering
 * they need, and no thread can be asleep on a queue whose consumer is the thread pushing. In
 * Node 20 every Atomics call is a call into a builtin (20-40 ns here, against ~2 ns for a plain
 * store), three of them per push. Across threads the counts stay atomic (the release of the
 * tail publishes the entry and every earlier DMA write).
 */
export const enum WriteKind {
  Bar0Write32 = 0,
  Bar2Write32 = 1,
  Bar2Doorbell64 = 2,
  /** Not a bus write: wakes the device to read its control port (tests, faults). */
  Control = 3,
}

const HEAD = 0;
const TAIL = 16;
const SLEEPING = 17;
const WAKE_FD_WORD = 18;
const PRODUCER_THREAD = 19;
const CONSUMER_THREAD = 20;
const HEADER_WORDS = 32;
const ENTRY_WORDS = 4;

export const WRITE_QUEUE_ENTRIES = 8192; // power of two: index = count & mask
/** The same, unexported: the hot path loads an exported binding from a cell and checks it at every push. */
const ENTRIES = 8192;

/**
 * The layout as the producer (drivers/emu/host/write-queue-producer.ts) checks it: it spells the
 * words out as its own constants and literals (an imported binding is a cell load and a hole
 * check at each use, inside V8's inlining budget of every post), and refuses to load if they
 * differ from these.
 */
export const WRITE_QUEUE_LAYOUT = {
  head: HEAD, tail: TAIL, sleeping: SLEEPING, wakeFd: WAKE_FD_WORD, producerThread: PRODUCER_THREAD,
  consumerThread: CONSUMER_THREAD, headerWords: HEADER_WORDS, entryWords: ENTRY_WORDS, entries: ENTRIES,
} as const;

export function allocWriteQueue(): SharedArrayBuffer {
  return new SharedArrayBuffer((HEADER_WORDS + WRITE_QUEUE_ENTRIES * ENTRY_WORDS) * 4);
}

export class WriteQueueConsumer {
  readonly words: Int32Array;
  private head: number = 0;
  /** The producer runs in this thread (settled at the first look once it exists): plain counts. */
  private local = false;
  private settled = false;
  // The entry last taken, read by the caller after take() returned true.
  kind = 0;
  offset = 0;
  lo = 0;
  hi = 0;

  /** `threadId`: the thread this consumer runs in (worker_threads' threadId: the host knows it, HostServices). */
  constructor(sab: SharedArrayBuffer, private readonly threadId: number) {
    this.words = new Int32Array(sab);
    this.head = Atomics.load(this.words, HEAD);
    Atomics.store(this.words, CONSUMER_THREAD, threadId + 1);
  }

  /** The tail the producer last published. */
  private tailNow(): number {
    if (!this.settled) this.settle();
    return this.local ? this.words[TAIL]! : Atomics.load(this.words, TAIL);
  }

  /** Once a producer exists, whether it is this thread's; until then every look is atomic. */
  private settle(): void {
    const producer = Atomics.load(this.words, PRODUCER_THREAD);
    if (producer === 0) return;
    this.local = producer === this.threadId + 1;
    this.settled = true;
  }

  pending(): boolean {
    return this.tailNow() !== this.head;
  }

  take(): boolean {
    const w = this.words;
    const head = this.head;
    if (this.tailNow() === head) return false;
    const at = HEADER_WORDS + (head & (ENTRIES - 1)) * ENTRY_WORDS;
    this.kind = w[at]!;
    this.offset = w[at + 1]!;
    this.lo = w[at + 2]! >>> 0;
    this.hi = w[at + 3]! >>> 0;
    const next = (head + 1) | 0;
    this.head = next;
    if (this.local) w[HEAD] = next;
    else Atomics.store(w, HEAD, next);
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
