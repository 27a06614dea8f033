/**
 * A cable carries whole Ethernet frames (no FCS) between a port and whatever is at the other
 * end: itself, another process, a QEMU guest. The RoCE engine sends through it and receives
 * from it; wrappers (the pcap tap, the fault injector) are cables around a cable.
 *
 * Buffer ownership, for every implementation:
 *   - send(frame, length): the cable is done with frame[0, length) when send returns (it copies
 *     what it must keep), so the caller may reuse the buffer at once. send never calls the
 *     receiver, of this cable or any other, before it returns: a sender is never re-entered.
 *     A frame the cable cannot take (closed, queue full, not connected) is dropped and counted,
 *     as a full transmit queue would drop it; send does not throw for that.
 *   - onFrame(frame, length): frame[0, length) is valid only during the call; the cable reuses
 *     the buffer afterwards, so the receiver copies what it keeps. Receivers are called from
 *     the event loop (or from LoopCable.deliverPending), one frame at a time.
 *   - close(): stops both directions and frees the cable's resources; safe to call twice.
 */
export type FrameReceiver = (frame: Uint8Array, length: number) => void;

export interface Cable {
  send(frame: Uint8Array, length: number): void;
  /** Replaces the receiver; frames that arrive while none is set are dropped and counted. */
  setReceiver(onFrame: FrameReceiver): void;
  close(): void;
}

/** Counters every cable in this folder keeps (numbers only; read them at any time). */
export class CableStats {
  framesSent = 0;
  bytesSent = 0;
  framesReceived = 0;
  bytesReceived = 0;
  /** Frames given to send that did not leave: closed, queue full, too long, not connected. */
  sendDropped = 0;
  /** Frames that arrived but reached no receiver: no receiver set, too long, wrong source. */
  receiveDropped = 0;
}

/** The receiver a cable starts with: counts what it drops. */
export function dropAll(stats: CableStats): FrameReceiver {
  return () => {
    stats.receiveDropped++;
  };
}
