/**
 * A cable around a cable that writes every frame it sees to a pcap file (Wireshark and tshark
 * decode UDP port 4791 as RoCEv2 with no configuration). Sent frames are written before they
 * go to the inner cable; received frames before the receiver sees them. Around a LoopCable
 * every frame passes both ways, so record only one direction there ('sent').
 */
import type { Result } from '../../../../firmware-hwrm/result.ts';
import { PcapWriter, wallClockUs, type PcapOptions } from './pcap-writer.ts';
import type { Cable, FrameReceiver } from '../../model/cable/cable.ts';

export interface PcapTapOptions extends PcapOptions {
  /** Which frames to write. Default 'both'. */
  readonly record?: 'both' | 'sent' | 'received';
  /** Timestamp source in microseconds since the Unix epoch (a virtual clock in stepped runs). */
  readonly clockUs?: () => number;
}

export class PcapTap implements Cable {
  private receiver: FrameReceiver = () => {};
  private readonly recordSent: boolean;
  private readonly recordReceived: boolean;
  private readonly clockUs: () => number;

  constructor(readonly inner: Cable, readonly writer: PcapWriter, options: PcapTapOptions = {}) {
    const record = options.record ?? 'both';
    this.recordSent = record !== 'received';
    this.recordReceived = record !== 'sent';
    this.clockUs = options.clockUs ?? wallClockUs;
    inner.setReceiver(this.onInnerFrame);
  }

  /** Opens `path` for writing and wraps `inner`. On failure `inner` is left as it was. */
  static open(inner: Cable, path: string, options: PcapTapOptions = {}): Result<PcapTap> {
    const w = PcapWriter.open(path, options);
    if (!w.ok) return w;
    return { ok: true, value: new PcapTap(inner, w.value, options) };
  }

  send(frame: Uint8Array, length: number): void {
    if (this.recordSent) this.writer.write(frame, length, this.clockUs());
    this.inner.send(frame, length);
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  /** Closes the inner cable, then flushes and closes the file. */
  close(): void {
    this.inner.close();
    this.writer.close();
  }

  private readonly onInnerFrame = (frame: Uint8Array, length: number): void => {
    if (this.recordReceived) this.writer.write(frame, length, this.clockUs());
    this.receiver(frame, length);
  };
}
