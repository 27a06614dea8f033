/**
 * A vfio-user client for tests, in the role QEMU plays: connects to the server's socket and
 * sends one command at a time, blocking until its reply (the server runs in its own thread).
 * Messages are built here by hand from the spec's layouts, not with the server's encoder.
 */
import {
  connectUnix, FdReceiver, ReadablePoller, receiveAll, sendAll, shutdownAndClose,
} from '../../drivers/emu/host/vfio-user/socket-libc.ts';

export interface Reply {
  readonly id: number;
  readonly command: number;
  readonly flags: number;
  readonly error: number;
  readonly body: Uint8Array;
}

export function header(id: number, command: number, bodyBytes: number, flags = 0): Uint8Array {
  const h = new Uint8Array(16);
  const dv = new DataView(h.buffer);
  dv.setUint16(0, id, true);
  dv.setUint16(2, command, true);
  dv.setUint32(4, 16 + bodyBytes, true);
  dv.setUint32(8, flags, true);
  return h;
}

/** Little-endian fields into bytes: [bytes, value] pairs, value a number (or bigint for u64). */
export function fields(...parts: [1 | 2 | 4 | 8, number | bigint][]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, [b]) => n + b, 0));
  const dv = new DataView(out.buffer);
  let at = 0;
  for (const [bytes, v] of parts) {
    if (bytes === 1) dv.setUint8(at, Number(v));
    else if (bytes === 2) dv.setUint16(at, Number(v), true);
    else if (bytes === 4) dv.setUint32(at, Number(v), true);
    else dv.setBigUint64(at, BigInt(v), true);
    at += bytes;
  }
  return out;
}

export class TestClient {
  private nextId = 1;
  private readonly head = new FdReceiver(16);
  /**
   * A request the server sends while we wait for a reply (DMA_READ, DMA_WRITE: the in-band DMA
   * fallback): returns the whole message to answer it with, or null to send nothing. Without it
   * such a request is returned by receive() like a reply.
   */
  onServerRequest: ((request: Reply) => Uint8Array | null) | undefined;
  /** The server's requests seen while waiting (answered or not). */
  readonly serverRequests: Reply[] = [];

  private readonly poller: ReadablePoller;

  private constructor(readonly fd: number) {
    this.poller = new ReadablePoller(fd);
  }

  static connect(path: string): TestClient {
    const fd = connectUnix(path);
    if (fd < 0) throw new Error(`connect ${path}: ${fd}`);
    return new TestClient(fd);
  }

  /** Sends raw bytes (a message built by the caller) with fds. */
  sendRaw(bytes: Uint8Array, fds: readonly number[] = []): void {
    const r = sendAll(this.fd, bytes, fds);
    if (r < 0) throw new Error(`send: ${r}`);
  }

  /** One command and its reply. */
  call(command: number, body: Uint8Array = new Uint8Array(0), fds: readonly number[] = []): Reply {
    const id = this.nextId++;
    const msg = new Uint8Array(16 + body.length);
    msg.set(header(id, command, body.length), 0);
    msg.set(body, 16);
    this.sendRaw(msg, fds);
    return this.receive();
  }

  /** A posted command (NO_REPLY): nothing comes back. */
  post(command: number, body: Uint8Array): void {
    const msg = new Uint8Array(16 + body.length);
    msg.set(header(this.nextId++, command, body.length, 0x10), 0);
    msg.set(body, 16);
    this.sendRaw(msg);
  }

  receive(): Reply {
    for (;;) {
      const m = this.receiveOne();
      if ((m.flags & 0xf) !== 0 || this.onServerRequest === undefined) return m;
      this.serverRequests.push(m);
      const answer = this.onServerRequest(m);
      if (answer !== null) this.sendRaw(answer);
    }
  }

  /** Answers the server's requests that are already waiting (onServerRequest), without blocking; how many. */
  serveRequests(): number {
    let n = 0;
    while (this.poller.wait(0)) {
      const m = this.receiveOne();
      if ((m.flags & 0xf) !== 0) throw new Error(`a reply (id ${m.id}) while no call waits`);
      this.serverRequests.push(m);
      const answer = this.onServerRequest?.(m) ?? null;
      if (answer !== null) this.sendRaw(answer);
      n++;
    }
    return n;
  }

  private receiveOne(): Reply {
    const n = this.head.receive(this.fd);
    if (n !== 16) throw new Error(`reply header: ${n} bytes`);
    const dv = new DataView(this.head.data.buffer, this.head.data.byteOffset, 16);
    const size = dv.getUint32(4, true);
    const body = new Uint8Array(size - 16);
    if (receiveAll(this.fd, body) !== body.length) throw new Error('short reply body');
    return {
      id: dv.getUint16(0, true), command: dv.getUint16(2, true), flags: dv.getUint32(8, true),
      error: dv.getUint32(12, true), body,
    };
  }

  close(): void {
    shutdownAndClose(this.fd);
  }
}
