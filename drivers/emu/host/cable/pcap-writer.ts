/**
 * A classic pcap file writer (the libpcap format Wireshark and tshark read): a 24-byte global
 * header, then per frame a 16-byte record header and the frame bytes. Link type Ethernet,
 * microsecond timestamps, host byte order (little-endian: magic bytes d4 c3 b2 a1). Frames go
 * into one preallocated buffer that is written out with synchronous fs writes when it fills,
 * on flush() and on close(), and at least every `flushIntervalMs` (checked at each frame and
 * by a timer that does not hold the process open): a process that dies loses at most the last
 * interval's frames. A write error (disk full, file gone) stops the writer, is kept in `error`
 * and said once as a process warning (the file no longer holds every frame); it never throws
 * into the caller's data path. The host's, as every file is: the model sees a capture only as
 * the file's name and counts (model/cable/port-cable.ts CaptureFile).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Result } from '../../../../firmware-hwrm/result.ts';

const PCAP_MAGIC_MICROSECONDS = 0xa1b2c3d4;
const PCAP_VERSION_MAJOR = 2;
const PCAP_VERSION_MINOR = 4;
export const LINKTYPE_ETHERNET = 1;
const GLOBAL_HEADER_BYTES = 24;
const RECORD_HEADER_BYTES = 16;
const DEFAULT_SNAP_BYTES = 262144;
const DEFAULT_BUFFER_BYTES = 256 * 1024;
const DEFAULT_FLUSH_INTERVAL_MS = 200;

export interface PcapOptions {
  /** Longest frame stored whole; longer ones are cut (their original length is kept). */
  readonly snapBytes?: number;
  /** Bytes buffered before a write to the file. */
  readonly bufferBytes?: number;
  /** Longest time a frame waits in the buffer, in ms. Default 200. */
  readonly flushIntervalMs?: number;
}

/** Microseconds since the Unix epoch, from the process's high-resolution clock. */
export function wallClockUs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

export class PcapWriter {
  private fd: number;
  private readonly buf: Uint8Array;
  private readonly view: DataView;
  private used = 0;
  private lastFlushMs = performance.now();
  private readonly timer: ReturnType<typeof setInterval>;
  framesWritten = 0;
  /** Why writing stopped, if it did. */
  error: string | undefined;

  private constructor(
    fd: number, readonly path: string, readonly snapBytes: number, bufferBytes: number,
    readonly flushIntervalMs: number,
  ) {
    this.fd = fd;
    this.buf = new Uint8Array(Math.max(bufferBytes, GLOBAL_HEADER_BYTES + RECORD_HEADER_BYTES));
    this.view = new DataView(this.buf.buffer);
    // Frames buffered while no more come still reach the file within the interval.
    this.timer = setInterval(this.flushDue, flushIntervalMs);
    this.timer.unref();
  }

  /** Creates (or truncates) `path` and writes the global header. */
  static open(path: string, options: PcapOptions = {}): Result<PcapWriter> {
    const snapBytes = options.snapBytes ?? DEFAULT_SNAP_BYTES;
    const bufferBytes = options.bufferBytes ?? DEFAULT_BUFFER_BYTES;
    const flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    if (!(Number.isInteger(snapBytes) && snapBytes > 0) || !(Number.isInteger(bufferBytes) && bufferBytes > 0)) {
      return {
        ok: false, error: `pcap ${path}: snapBytes ${snapBytes} / bufferBytes ${bufferBytes} must be positive integers`,
      };
    }
    if (!(Number.isFinite(flushIntervalMs) && flushIntervalMs >= 1))
      return { ok: false, error: `pcap ${path}: flushIntervalMs ${flushIntervalMs} must be at least 1` };
    let fd: number;
    try {
      fd = openSync(path, 'w');
    } catch (e) {
      return { ok: false, error: `pcap ${path}: cannot create: ${(e as Error).message}` };
    }
    const w = new PcapWriter(fd, path, snapBytes, bufferBytes, flushIntervalMs);
    const v = w.view;
    v.setUint32(0, PCAP_MAGIC_MICROSECONDS, true);
    v.setUint16(4, PCAP_VERSION_MAJOR, true);
    v.setUint16(6, PCAP_VERSION_MINOR, true);
    v.setInt32(8, 0, true); // thiszone: timestamps are UTC
    v.setUint32(12, 0, true); // sigfigs
    v.setUint32(16, snapBytes, true);
    v.setUint32(20, LINKTYPE_ETHERNET, true);
    w.used = GLOBAL_HEADER_BYTES;
    return { ok: true, value: w };
  }

  get isOpen(): boolean {
    return this.fd >= 0;
  }

  /** Appends frame[0, length) stamped `timeUs` microseconds after the Unix epoch. */
  write(frame: Uint8Array, length: number, timeUs: number): void {
    if (this.fd < 0) return;
    if (!(length >= 0 && length <= frame.length))
      throw new RangeError(`pcap write: length ${length} outside ${frame.length} bytes`);
    const stored = length < this.snapBytes ? length : this.snapBytes;
    if (this.used + RECORD_HEADER_BYTES + stored > this.buf.length) this.flush();
    if (this.fd < 0) return;
    const seconds = Math.floor(timeUs / 1e6);
    const v = this.view;
    v.setUint32(this.used, seconds >>> 0, true);
    v.setUint32(this.used + 4, Math.floor(timeUs - seconds * 1e6), true);
    v.setUint32(this.used + 8, stored, true);
    v.setUint32(this.used + 12, length, true);
    this.used += RECORD_HEADER_BYTES;
    if (this.used + stored <= this.buf.length) {
      this.buf.set(frame.subarray(0, stored), this.used);
      this.used += stored;
    } else {
      // Larger than the whole buffer: write the header, then the frame straight from its bytes.
      this.flush();
      this.writeAll(frame, stored);
    }
    this.framesWritten++;
    if (performance.now() - this.lastFlushMs >= this.flushIntervalMs) this.flush();
  }

  /** Writes the buffered records to the file. */
  flush(): void {
    this.lastFlushMs = performance.now();
    if (this.fd < 0 || this.used === 0) return;
    this.writeAll(this.buf, this.used);
    this.used = 0;
  }

  /** Flushes and closes the file. Safe to call twice. */
  close(): void {
    clearInterval(this.timer);
    if (this.fd < 0) return;
    this.flush();
    try {
      closeSync(this.fd);
    } catch (e) {
      this.error ??= `pcap ${this.path}: close: ${(e as Error).message}`;
    }
    this.fd = -1;
  }

  private writeAll(bytes: Uint8Array, length: number): void {
    try {
      let done = 0;
      while (done < length) done += writeSync(this.fd, bytes, done, length - done);
    } catch (e) {
      this.error = `pcap ${this.path}: write: ${(e as Error).message}`;
      try { closeSync(this.fd); } catch { /* already failing; keep the first error */ }
      this.fd = -1;
      clearInterval(this.timer);
      // The user was told every frame goes to this file: say, once, that from here on none does.
      process.emitWarning(`${this.error}; the capture stops after ${this.framesWritten} frames`, {
        code: 'RIG_BNXT_PCAP',
      });
    }
  }

  private readonly flushDue = (): void => {
    if (performance.now() - this.lastFlushMs >= this.flushIntervalMs) this.flush();
  };
}
