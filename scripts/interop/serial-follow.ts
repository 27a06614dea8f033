/**
 * Follows QEMU's serial log file (-serial file:...) as it grows, feeding whole lines to a
 * SerialTranscript, and waits on conditions over it with a bound on every wait.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { Limits } from './guest-config.ts';
import { SerialTranscript } from './serial-transcript.ts';

export type WaitOutcome = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export class SerialFollower {
  private fd: number | null = null;
  private offset = 0;
  private partial = '';
  private readonly chunk = Buffer.alloc(64 * 1024);

  constructor(private readonly path: string, readonly transcript = new SerialTranscript()) {}

  /** Reads whatever was appended since the last call. */
  poll(): void {
    if (this.fd === null) {
      try { this.fd = openSync(this.path, 'r'); } catch { return; } // QEMU has not created it yet
    }
    for (;;) {
      const n = readSync(this.fd, this.chunk, 0, this.chunk.length, this.offset);
      if (n <= 0) break;
      this.offset += n;
      const text = this.partial + this.chunk.toString('latin1', 0, n);
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const line of lines) this.transcript.push(line);
    }
  }

  /** Flushes a last unterminated line and closes the file. */
  close(): void {
    this.poll();
    if (this.partial.length > 0) this.transcript.push(this.partial);
    this.partial = '';
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /**
   * Polls until `done(transcript)` holds; gives up after `limitMs`, or as soon as `abort()`
   * returns a reason (QEMU exited, a guest failure, a failed host command).
   */
  async waitFor(
    done: (t: SerialTranscript) => boolean, limitMs: number, what: string, abort: () => string | null,
  ): Promise<WaitOutcome> {
    const start = Date.now();
    for (;;) {
      this.poll();
      if (done(this.transcript)) return { ok: true };
      const reason = abort();
      if (reason !== null) {
        this.poll();
        if (done(this.transcript)) return { ok: true };
        return { ok: false, reason: `${reason} (while waiting for ${what})` };
      }
      if (Date.now() - start > limitMs) return { ok: false, reason: `gave up after ${limitMs} ms waiting for ${what}` };
      await new Promise((resolve) => setTimeout(resolve, Limits.serialPollMs));
    }
  }
}
