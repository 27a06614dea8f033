/**
 * The in-band DMA fallback of vfio-user (QEMU docs/interop/vfio-user.rst, VFIO_USER_DMA_READ and
 * VFIO_USER_DMA_WRITE): guest memory that came in a DMA_MAP without a file descriptor is reached
 * by asking the client, a request on the socket and its reply, for each access.
 *
 * The model's DMA is synchronous (a firmware answer, a CQE), so an access blocks this thread until
 * the reply, at most `limitMs`. The client keeps sending its own requests meanwhile: QEMU serves
 * ours in its main loop, under the lock a vCPU holds while it waits for one of its trapped reads,
 * so a server that stopped serving would stall both until QEMU's own timeout. Requests that come
 * during the wait go to `onRequest` (the worker answers those that need nothing of the model at
 * once and keeps the rest, in order, for after the access). A missing, erroring, short or
 * mismatched reply fails the access: the model counts it as an IOMMU fault, as any unreachable
 * access, and goes on.
 */
import * as P from './protocol.ts';
import { closeFd, FdReceiver, ReadablePoller, sendAll } from './socket-libc.ts';
import { receiveMessage, type Message } from './receive-message.ts';

/** How long one access waits for the client's reply unless told otherwise. */
export const DMA_REPLY_LIMIT_MS = 2000;

export interface RemoteDmaOptions {
  readonly fd: number;
  /** A request the client sent while an access waited; `fds` are owned by the callee. */
  readonly onRequest: (header: P.Header, body: Uint8Array, fds: number[]) => void;
  /** The stream cannot go on (closed, a header that cannot be resynchronised): the server ends. */
  readonly onBroken: (why: string) => void;
  readonly log: (line: string) => void;
  readonly limitMs?: number;
  /** The largest data of one message (the negotiated max_data_xfer_size). */
  readonly maxTransferBytes: () => number;
}

export class RemoteDma {
  private nextId = 0x8000; // apart from small ids, for reading logs; any u16 is legal
  private readonly header = new FdReceiver(P.HEADER_BYTES);
  private readonly poller: ReadablePoller;
  private broken: string | undefined;
  /** True while an access waits for its reply (the model must not be re-entered). */
  waiting = false;
  /** Accesses that failed, with the last reason (tests, logs). */
  failures = 0;
  lastFailure = '';

  constructor(private readonly o: RemoteDmaOptions) {
    this.poller = new ReadablePoller(o.fd);
  }

  /** DMA_READ: fills into[at, at+length) from guest address `address`; false if the client did not deliver. */
  read(address: number, length: number, into: Uint8Array, at: number): boolean {
    for (let done = 0; done < length;) {
      const n = Math.min(length - done, this.o.maxTransferBytes());
      const reply = this.exchange(P.CMD.DMA_READ, P.encodeDmaAccess(address + done, n));
      if (reply === undefined) return false;
      const r = P.decodeDmaReadReply(reply);
      if (typeof r === 'string') return this.fail(r);
      if (r.address !== address + done || r.data.length !== n)
        return this.fail(`DMA_READ reply for 0x${r.address.toString(16)}+${r.data.length}, asked ` +
          `0x${(address + done).toString(16)}+${n}`);
      into.set(r.data, at + done);
      done += n;
    }
    return true;
  }

  /** DMA_WRITE: src[at, at+length) to guest address `address`; false if the client did not take it. */
  write(address: number, src: Uint8Array, at: number, length: number): boolean {
    for (let done = 0; done < length;) {
      const n = Math.min(length - done, this.o.maxTransferBytes());
      const reply = this.exchange(P.CMD.DMA_WRITE, P.encodeDmaAccess(address + done, n, src.subarray(at + done,
        at + done + n)));
      if (reply === undefined) return false;
      // The reply carries the request's address and count (vfio-user.rst, VFIO_USER_DMA_WRITE).
      if (reply.length < 16) return this.fail(`DMA_WRITE reply of ${reply.length} bytes, needs 16`);
      const dv = new DataView(reply.buffer, reply.byteOffset, 16);
      const gotAddress = dv.getUint32(0, true) + dv.getUint32(4, true) * 2 ** 32;
      const gotCount = dv.getUint32(8, true) + dv.getUint32(12, true) * 2 ** 32;
      if (gotAddress !== address + done || gotCount !== n)
        return this.fail(`DMA_WRITE reply for 0x${gotAddress.toString(16)}+${gotCount}, sent ` +
          `0x${(address + done).toString(16)}+${n}`);
      done += n;
    }
    return true;
  }

  /** Sends one request and waits for its reply's body; undefined (a failure noted) if none came right. */
  private exchange(command: number, body: Uint8Array): Uint8Array | undefined {
    if (this.broken !== undefined) { this.fail(`the connection is gone (${this.broken})`); return undefined; }
    if (this.waiting) { this.fail('an access from inside another access'); return undefined; }
    const id = this.nextId;
    this.nextId = (this.nextId + 1) & 0xffff;
    const sent = sendAll(this.o.fd, P.encodeMessage({ id, command, flags: P.FLAG.COMMAND, error: 0 }, body));
    if (sent < 0) { this.fail(`sending ${P.commandName(command)} failed (${sent})`); return undefined; }
    const limitMs = this.o.limitMs ?? DMA_REPLY_LIMIT_MS;
    const deadline = performance.now() + limitMs;
    this.waiting = true;
    try {
      for (;;) {
        const left = Math.ceil(deadline - performance.now());
        if (left <= 0 || !this.poller.wait(left)) {
          this.fail(`no reply to ${P.commandName(command)} (id ${id}) within ${limitMs} ms`);
          return undefined;
        }
        const m = this.receive();
        if (m === undefined) return undefined;
        const { header: h, body: b, fds } = m;
        if ((h.flags & P.FLAG.TYPE_MASK) === P.FLAG.COMMAND) {
          this.o.onRequest(h, b, fds);
          continue;
        }
        for (const fd of fds) closeFd(fd);
        if (h.id !== id || h.command !== command) {
          this.o.log(`ignored a reply (id ${h.id}, ${P.commandName(h.command)}) that answers nothing we wait for`);
          continue;
        }
        if ((h.flags & P.FLAG.ERROR) !== 0) {
          this.fail(`the client refused ${P.commandName(command)} (errno ${h.error})`);
          return undefined;
        }
        return b;
      }
    } finally {
      this.waiting = false;
    }
  }

  /** One whole message from the socket (blocking: poll said it is readable). */
  private receive(): Message | undefined {
    const m = receiveMessage(this.o.fd, this.header);
    return typeof m === 'string' ? this.lose(m) : m;
  }

  private lose(why: string): undefined {
    this.broken = why;
    this.fail(why);
    this.o.onBroken(why);
    return undefined;
  }

  private fail(why: string): false {
    this.failures++;
    this.lastFailure = why;
    this.o.log(`in-band DMA failed: ${why}`);
    return false;
  }
}
