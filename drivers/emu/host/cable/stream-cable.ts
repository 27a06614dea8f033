/**
 * A cable over a unix stream socket, the framing of QEMU's `-netdev stream` (also used by
 * `-netdev socket`): each Ethernet frame travels as a 4-byte big-endian length, then the
 * frame. With `-netdev stream,server=on,addr.type=unix,addr.path=P` QEMU listens and this
 * cable connects ('connect', the default); with server=off QEMU connects and this cable
 * listens ('listen'). Two software NICs can be cabled the same way. No IP is involved, so
 * parallel jobs need no port allocation.
 *
 * Received bytes are reassembled into one preallocated frame buffer, whatever the chunking:
 * a frame split across reads, or many frames in one read. A length above maxFrameBytes is
 * skipped (its bytes are read and dropped, the stream stays in step) and counted.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { Result } from '../../../../firmware-hwrm/result.ts';
import { CableStats, dropAll, type Cable, type FrameReceiver } from '../../model/cable/cable.ts';
import { awaitReady } from './await-ready.ts';

const LENGTH_BYTES = 4;

export interface StreamCableOptions {
  /** Unix socket path. */
  readonly path: string;
  /** 'connect' to a listening QEMU (default), or 'listen' for one peer to connect. */
  readonly mode?: 'connect' | 'listen';
  /** Longest frame sent or taken, in bytes. Default 9216. */
  readonly maxFrameBytes?: number;
  /** Bytes waiting in the socket beyond which new frames are dropped. Default 4 MiB. */
  readonly maxQueuedBytes?: number;
}

export class StreamCable implements Cable {
  readonly stats = new CableStats();
  readonly path: string;
  readonly mode: 'connect' | 'listen';
  readonly maxFrameBytes: number;
  private readonly maxQueuedBytes: number;
  private socket: Socket | null = null;
  private server: Server | null = null;
  private receiver: FrameReceiver;
  private closed = false;
  /** Why the cable stopped working, or the last socket error, if any. */
  error: string | undefined;
  /** 'connect': settles when connected or refused. 'listen': when listening or refused. */
  readonly ready: Promise<Result<void>>;
  // Receive reassembly: the length prefix, then the frame body.
  private readonly body: Buffer;
  private prefix = 0;
  private prefixHave = 0;
  private bodyLength = 0;
  private bodyHave = 0;
  private skipping = false;

  private constructor(options: StreamCableOptions) {
    this.path = options.path;
    this.mode = options.mode ?? 'connect';
    this.maxFrameBytes = options.maxFrameBytes ?? 9216;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 4 * 1024 * 1024;
    this.body = Buffer.alloc(this.maxFrameBytes);
    this.receiver = dropAll(this.stats);
    this.ready = this.mode === 'connect' ? this.connect() : this.listen();
  }

  /** Checks the options and starts connecting or listening; returns at once. */
  static create(options: StreamCableOptions): Result<StreamCable> {
    if (typeof options.path !== 'string' || options.path.length === 0)
      return { ok: false, error: 'stream cable: empty socket path' };
    if (options.mode !== undefined && options.mode !== 'connect' && options.mode !== 'listen') {
      return { ok: false, error: `stream cable: mode ${String(options.mode)} is neither 'connect' nor 'listen'` };
    }
    const max = options.maxFrameBytes ?? 9216;
    if (!(Number.isInteger(max) && max > 0 && max < 2 ** 31))
      return { ok: false, error: `stream cable: maxFrameBytes ${max}` };
    return { ok: true, value: new StreamCable(options) };
  }

  /** create, then wait until connected (or listening). */
  static async open(options: StreamCableOptions): Promise<Result<StreamCable>> {
    return awaitReady(StreamCable.create(options));
  }

  /** True while a peer is attached (frames can leave). */
  get connected(): boolean {
    return this.socket !== null && !this.socket.connecting && !this.socket.destroyed;
  }

  send(frame: Uint8Array, length: number): void {
    if (!(length >= 0 && length <= frame.length))
      throw new RangeError(`StreamCable.send: length ${length} outside ${frame.length} bytes`);
    const s = this.socket;
    if (this.closed || s === null || s.destroyed || length > this.maxFrameBytes ||
      s.writableLength > this.maxQueuedBytes) {
      this.stats.sendDropped++;
      return;
    }
    const out = Buffer.allocUnsafe(LENGTH_BYTES + length);
    out.writeUInt32BE(length, 0);
    out.set(length === frame.length ? frame : frame.subarray(0, length), LENGTH_BYTES);
    s.write(out);
    this.stats.framesSent++;
    this.stats.bytesSent += length;
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.destroy();
    this.socket = null;
    this.server?.close();
    this.server = null;
  }

  private connect(): Promise<Result<void>> {
    return new Promise((resolve) => {
      const s = createConnection({ path: this.path });
      this.attach(s);
      const onError = (e: Error) => {
        this.error = `stream cable: cannot connect to ${this.path}: ${e.message}`;
        resolve({ ok: false, error: this.error });
      };
      s.once('error', onError);
      s.once('connect', () => {
        s.off('error', onError);
        resolve({ ok: true, value: undefined });
      });
    });
  }

  private listen(): Promise<Result<void>> {
    return new Promise((resolve) => {
      const server = createServer((s) => {
        // One peer at a time: a second connection is a second cable plugged into one port.
        if (this.closed || (this.socket !== null && !this.socket.destroyed)) {
          s.destroy();
          return;
        }
        this.resetReassembly();
        this.attach(s);
      });
      this.server = server;
      server.once('error', (e: Error) => {
        this.error = `stream cable: cannot listen on ${this.path}: ${e.message}`;
        resolve({ ok: false, error: this.error });
      });
      server.listen(this.path, () => resolve({ ok: true, value: undefined }));
    });
  }

  private attach(s: Socket): void {
    this.socket = s;
    s.on('data', this.onData);
    s.on('error', (e: Error) => {
      this.error = `stream cable: ${e.message}`;
    });
    s.on('close', () => {
      if (this.socket === s) this.socket = null;
    });
  }

  private resetReassembly(): void {
    this.prefix = 0;
    this.prefixHave = 0;
    this.bodyLength = 0;
    this.bodyHave = 0;
    this.skipping = false;
  }

  private readonly onData = (chunk: Buffer): void => {
    let i = 0;
    const n = chunk.length;
    while (i < n && !this.closed) {
      if (this.prefixHave < LENGTH_BYTES) {
        this.prefix = this.prefix * 256 + chunk[i]!;
        i++;
        if (++this.prefixHave === LENGTH_BYTES) {
          this.bodyLength = this.prefix;
          this.bodyHave = 0;
          this.skipping = this.bodyLength > this.maxFrameBytes;
          if (this.bodyLength === 0) this.endFrame();
        }
        continue;
      }
      const want = this.bodyLength - this.bodyHave;
      const take = want < n - i ? want : n - i;
      if (!this.skipping) chunk.copy(this.body, this.bodyHave, i, i + take);
      this.bodyHave += take;
      i += take;
      if (this.bodyHave === this.bodyLength) this.endFrame();
    }
  };

  private endFrame(): void {
    const length = this.bodyLength;
    const skipped = this.skipping || length === 0;
    this.resetReassembly();
    if (skipped) {
      this.stats.receiveDropped++;
      return;
    }
    this.stats.framesReceived++;
    this.stats.bytesReceived += length;
    this.receiver(this.body, length);
  }
}
