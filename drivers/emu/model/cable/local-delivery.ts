/**
 * A port's own traffic on a cable to other machines: a frame the port sends to its own MAC
 * (a queue pair connected to another queue pair of the same NIC) never goes onto the cable;
 * it waits in a ring of preallocated slots and comes back to the port in the model's next run,
 * as a NIC switches frames for itself internally. A frame that arrives from the cable claiming
 * to come from this port (its MAC or its IPv4 address as the source) cannot be one of its own,
 * so it is forged: dropped and counted. A peer on the cable therefore never speaks for a queue
 * pair whose peer is on this NIC.
 *
 *   send ──dst MAC = own──> [local ring] ──deliverPending (in run)──> receiver
 *        └─otherwise────────> inner cable ──src = own? drop──────────> receiver
 *
 * Loop cables need none of this: everything on them is the port's own traffic.
 */
import { LoopCable } from './loop-cable.ts';
import type { Cable, FrameReceiver } from './cable.ts';

const ETH_DST = 0;
const ETH_SRC = 6;
const ETH_TYPE = 12;
const ETH_TYPE_IPV4 = 0x0800;
const IPV4_SRC_AT = 14 + 12;
const MAC_BYTES = 6;

export class LocalDelivery implements Cable {
  private readonly local: LoopCable;
  private receiver: FrameReceiver = () => {};
  /** Frames from the cable that claimed this port's MAC or address as their source. */
  forged = 0;
  /** Frames that went to the port itself instead of the cable. */
  delivered = 0;

  constructor(
    readonly inner: Cable,
    private readonly mac: Uint8Array,
    private readonly ipv4: Uint8Array,
    slots: number,
    slotBytes: number,
  ) {
    this.local = new LoopCable({ slots, slotBytes, delivery: 'manual' });
    this.local.setReceiver((frame, length) => this.receiver(frame, length));
    inner.setReceiver(this.onInnerFrame);
  }

  /** Own frames waiting for the next run. */
  get pending(): number {
    return this.local.pending;
  }

  send(frame: Uint8Array, length: number): void {
    if (this.isOwn(frame, length, ETH_DST)) {
      this.delivered++;
      this.local.send(frame, length);
      return;
    }
    this.inner.send(frame, length);
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  /** Hands the port's own frames back to it (from the model's run). */
  deliverPending(): number {
    return this.local.deliverPending();
  }

  /** True if a frame that came from the cable claims to be this port's own (and so is forged). */
  forgedSource(frame: Uint8Array, length: number): boolean {
    if (this.isOwn(frame, length, ETH_SRC)) return true;
    if (length < IPV4_SRC_AT + 4 || ((frame[ETH_TYPE]! << 8) | frame[ETH_TYPE + 1]!) !== ETH_TYPE_IPV4) return false;
    const ip = this.ipv4;
    return frame[IPV4_SRC_AT] === ip[0] && frame[IPV4_SRC_AT + 1] === ip[1] && frame[IPV4_SRC_AT + 2] === ip[2] &&
      frame[IPV4_SRC_AT + 3] === ip[3];
  }

  close(): void {
    this.local.close();
    this.inner.close();
  }

  private isOwn(frame: Uint8Array, length: number, at: number): boolean {
    if (length < at + MAC_BYTES) return false;
    const m = this.mac;
    for (let i = 0; i < MAC_BYTES; i++) if (frame[at + i] !== m[i]) return false;
    return true;
  }

  private readonly onInnerFrame = (frame: Uint8Array, length: number): void => {
    if (this.forgedSource(frame, length)) {
      this.forged++;
      return;
    }
    this.receiver(frame, length);
  };
}
