/**
 * A cable from a port back to itself: every frame sent is delivered to the same receiver,
 * later. Frames wait in a ring of preallocated slots (copied in at send, handed to the
 * receiver from the slot), so the data path allocates nothing.
 *
 *   slots:  [ 0 ][ 1 ][ 2 ][ 3 ] ... [ n-1 ]     n is a power of two: slot = index & (n - 1)
 *                 ^head (next to deliver)  ^tail (next free)     queued = tail - head
 *
 * Delivery happens off the sender's stack: on a setImmediate after a send ('auto', default),
 * or only when the owner calls deliverPending() ('manual', for a model stepped by its caller).
 * A pass delivers the frames queued when it starts; frames sent by the receiver during the
 * pass wait for the next one, so a ping-pong between sender and receiver cannot spin forever
 * inside one pass. A full ring drops the new frame, as a NIC's full receive ring would.
 *
 * A sender that builds its frames in one of the cable's own buffers (spareBuffer) may hand the
 * buffer over instead of having it copied (sendBuffer): the buffer becomes the slot, and the
 * slot's old buffer, delivered and done with, is handed back for the next frame. A port on a
 * loop thus copies each frame's bytes once (host memory into the frame) instead of twice.
 * Such a frame's bytes are the sender's own, untouched on the way: while it is being delivered,
 * handedOver(frame) says so (the port then need not check the ICRC it computed itself).
 */
import { copyBytes, frameSlots } from '../wire/frame-memory.ts';
import { CableStats, dropAll, type Cable, type FrameReceiver } from './cable.ts';

export interface LoopCableOptions {
  /** Frames the ring holds; a power of two. Default 256. */
  readonly slots?: number;
  /** Longest frame a slot holds, in bytes. Default 9216 (a 9000-byte MTU frame fits). */
  readonly slotBytes?: number;
  /** 'auto' delivers on setImmediate after a send; 'manual' only in deliverPending(). */
  readonly delivery?: 'auto' | 'manual';
}

export class LoopCable implements Cable {
  readonly stats = new CableStats();
  readonly slotBytes: number;
  /** Each slot's buffer; sendBuffer moves buffers between slots that hold no frame waiting. */
  private readonly slotViews: Uint8Array[];
  /**
   * The slot buffers (and the spare), all in one block of memory: sendBuffer takes only these.
   * A set of the views themselves: reading a view's `buffer` to compare blocks cost 30-40 ns.
   */
  private readonly own = new WeakSet<Uint8Array>();
  private spare: Uint8Array | null;
  /** The buffer spareBuffer or sendBuffer gave out last: one of `own`. */
  private handedBack: Uint8Array | null = null;
  private readonly slotLengths: Uint32Array;
  /** 1: the slot's frame came by sendBuffer (the sender's buffer itself), 0: copied in by send. */
  private readonly slotHanded: Uint8Array;
  /** The frame being delivered now if it came by sendBuffer (null otherwise, and between deliveries). */
  private handedFrame: Uint8Array | null = null;
  private readonly mask: number;
  private head = 0;
  private tail = 0;
  /** The slot (free-running) whose buffer sendBuffer hands back next: head - 1 after each delivery. */
  private backCursor = -1;
  private receiver: FrameReceiver;
  private delivering = false;
  private scheduled = false;
  private closed = false;
  private readonly auto: boolean;
  private readonly onImmediate = (): void => {
    this.scheduled = false;
    this.deliverPending();
  };

  constructor(options: LoopCableOptions = {}) {
    const slots = options.slots ?? 256;
    const slotBytes = options.slotBytes ?? 9216;
    if (!(Number.isInteger(slots) && slots > 0 && (slots & (slots - 1)) === 0)) {
      throw new RangeError(`LoopCable: slots ${slots} must be a power of two`);
    }
    if (!(Number.isInteger(slotBytes) && slotBytes > 0)) throw new RangeError(`LoopCable: slotBytes ${slotBytes}`);
    this.slotBytes = slotBytes;
    this.mask = slots - 1;
    // Each slot keeps the 8-byte payload alignment its frames were built with (frame-memory.ts).
    this.slotViews = frameSlots(slots + 1, slotBytes);
    for (const v of this.slotViews) this.own.add(v);
    this.spare = this.slotViews.pop()!;
    this.slotLengths = new Uint32Array(slots);
    this.slotHanded = new Uint8Array(slots);
    this.auto = (options.delivery ?? 'auto') === 'auto';
    this.receiver = dropAll(this.stats);
  }

  /** Frames sent and not yet delivered. */
  get pending(): number {
    return this.tail - this.head;
  }

  send(frame: Uint8Array, length: number): void {
    if (!(length >= 0 && length <= frame.length))
      throw new RangeError(`LoopCable.send: length ${length} outside ${frame.length} bytes`);
    if (this.closed || length > this.slotBytes || this.tail - this.head > this.mask) {
      this.stats.sendDropped++;
      return;
    }
    const slot = this.tail & this.mask;
    const view = this.slotViews[slot]!;
    if (length === frame.length) view.set(frame);
    else copyBytes(frame, 0, view, 0, length); // no subarray view: nothing allocated
    this.slotHanded[slot] = 0;
    this.filled(slot, length);
  }

  /**
   * The cable's one spare frame buffer (slotBytes, aligned as the slots are), for a sender that
   * builds frames in place and hands them over with sendBuffer; null once taken.
   */
  spareBuffer(): Uint8Array | null {
    const b = this.spare;
    this.spare = null;
    this.handedBack = b;
    return b;
  }

  /**
   * As send(frame, length), but a buffer of this cable's (from spareBuffer or an earlier
   * sendBuffer) is taken over as the slot instead of copied: returns the buffer the caller
   * builds its next frame in (the slot's old one when the frame was taken, else `frame` itself).
   * The caller must not touch `frame` after a call that returned another buffer.
   */
  sendBuffer(frame: Uint8Array, length: number): Uint8Array {
    // The sender builds in the buffer handed back last (or the spare): known without the set.
    if ((frame !== this.handedBack && !this.own.has(frame)) || this.closed ||
      !(length >= 0 && length <= frame.length) || this.tail - this.head > this.mask) {
      this.send(frame, length);
      return frame;
    }
    const slots = this.slotViews;
    const slot = this.tail & this.mask;
    // Handed back: the buffer of a frame delivered lately (its bytes were just read, so it is in
    // the cache), whose slot takes this slot's old buffer instead: the slot delivered last for the
    // first frame after a delivery, then the one before it, and so on back (backCursor), so a burst
    // of frames sent between two deliveries is built in the buffers the last ones were delivered
    // from, not in the cold buffers the tail slots park one after another in the slot delivered
    // last. Neither slot holds a frame waiting for delivery (the one handed back lies among the
    // empty slots other than this one: head - 1 down to tail - slots + 1), and the slot being
    // delivered now (head) is neither. The frames in flight thus stay in a few cache-warm buffers
    // instead of cycling through all of the ring's memory (512 x 9 KiB).
    let from = this.backCursor;
    const behind = this.head - 1 - from;
    if (!(behind >= 0 && behind <= this.mask - (this.tail - this.head) - 1)) from = this.head - 1;
    this.backCursor = from - 1;
    const last = from & this.mask;
    const back = slots[last]!;
    slots[last] = slots[slot]!;
    slots[slot] = frame;
    this.slotHanded[slot] = 1;
    this.filled(slot, length);
    this.handedBack = back;
    return back;
  }

  /** A frame of `length` bytes is in `slot`: it is sent, and delivery is scheduled if the loop delivers by itself. */
  private filled(slot: number, length: number): void {
    this.slotLengths[slot] = length;
    this.tail++;
    this.stats.framesSent++;
    this.stats.bytesSent += length;
    if (this.auto && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.onImmediate);
    }
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  /**
   * True while `frame` is being delivered and is the very buffer its sender handed over with
   * sendBuffer: nothing but the sender wrote it (a fault injector or a tap between the loop and
   * the receiver that changed or copied the frame hands the receiver another buffer).
   */
  handedOver(frame: Uint8Array): boolean {
    return frame === this.handedFrame;
  }

  /**
   * Delivers the frames queued when called, oldest first, and returns how many. Returns 0 when
   * called from inside a receiver (no re-entry). In 'auto' mode, schedules another pass if
   * the receiver queued more.
   */
  deliverPending(): number {
    if (this.delivering || this.closed) return 0;
    this.delivering = true;
    const stop = this.tail;
    let n = 0;
    try {
      while (this.head !== stop && !this.closed) {
        const slot = this.head & this.mask;
        const length = this.slotLengths[slot]!;
        // Free the slot only after the receiver returns: it reads the frame from the slot.
        this.stats.framesReceived++;
        this.stats.bytesReceived += length;
        n++;
        const view = this.slotViews[slot]!;
        this.handedFrame = this.slotHanded[slot] === 1 ? view : null;
        try {
          this.receiver(view, length);
        } finally {
          this.handedFrame = null;
          this.head++;
          this.backCursor = this.head - 1;
        }
      }
    } finally {
      this.delivering = false;
    }
    if (this.auto && this.head !== this.tail && !this.scheduled && !this.closed) {
      this.scheduled = true;
      setImmediate(this.onImmediate);
    }
    return n;
  }

  close(): void {
    this.closed = true;
    this.head = this.tail;
  }
}
