/**
 * The TCP plumbing under the endpoint exchanges: connect with a bounded retry, accept exactly one
 * client with a bounded wait, and reads/writes that each carry their own timeout. Every failure is
 * a Result with a sentence a user can act on; sockets and listeners are always released.
 */
import * as net from 'node:net';
import { type Result, ok, err } from './result.ts';

/** "127.0.0.1:18515", "[::1]:18515". */
export function hostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Short, lowercase descriptions of the socket errors a user meets. */
export function describeSocketError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  switch (code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': return 'connection reset by the peer';
    case 'EPIPE': return 'the peer closed the connection';
    case 'ETIMEDOUT': return 'timed out';
    case 'EHOSTUNREACH': return 'host unreachable';
    case 'ENETUNREACH': return 'network unreachable';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME': return 'unknown host';
    case 'EADDRINUSE': return 'address already in use';
    case 'EACCES': return 'permission denied';
    case 'EADDRNOTAVAIL': return 'address not available on this machine';
    default: return e instanceof Error ? e.message : String(e);
  }
}

export interface ConnectLimits {
  /** Keep retrying a refused connection (server not up yet) for this long in all. */
  readonly retryMs: number;
  readonly retryIntervalMs: number;
  /** Give up on one attempt that neither connects nor fails after this long. */
  readonly attemptTimeoutMs: number;
}

/** Connects to host:port, retrying while the connection is refused, within limits.retryMs. */
export async function connectWithRetry(host: string, port: number, limits: ConnectLimits): Promise<Result<net.Socket>> {
  const deadline = Date.now() + limits.retryMs;
  for (;;) {
    const attempt = await connectOnce(host, port, limits.attemptTimeoutMs);
    if (attempt.ok) return ok(attempt.socket);
    const retryable = attempt.code === 'ECONNREFUSED' && Date.now() + limits.retryIntervalMs <= deadline;
    if (!retryable) return err(`cannot reach ${hostPort(host, port)}: ${attempt.error}`);
    await delay(limits.retryIntervalMs);
  }
}

type Attempt = { ok: true; socket: net.Socket } | { ok: false; error: string; code: unknown };

function connectOnce(host: string, port: number, timeoutMs: number): Promise<Attempt> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ok: false, error: `no answer within ${seconds(timeoutMs)}`, code: 'ETIMEDOUT' });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      socket.setNoDelay(true);
      resolve({ ok: true, socket });
    });
    socket.once('error', (e) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ ok: false, error: describeSocketError(e), code: (e as { code?: unknown }).code });
    });
  });
}

export interface AcceptOptions {
  /** Interface to listen on; undefined listens on all, as perftest and ibv_rc_pingpong do. */
  readonly host?: string | undefined;
  readonly timeoutMs: number;
  /** Called once listening, with the bound port (useful when port 0 asked for any free port). */
  readonly onListening?: ((port: number) => void) | undefined;
}

/** Listens on port, accepts one client, and stops listening (as ibv_rc_pingpong's server does). */
export function acceptOne(port: number, options: AcceptOptions): Promise<Result<net.Socket>> {
  return new Promise((resolve) => {
    const server = net.createServer();
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    const finish = (r: Result<net.Socket>): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      server.close();
      resolve(r);
    };
    server.on('connection', (socket) => {
      if (settled) { socket.destroy(); return; }
      socket.setNoDelay(true);
      finish(ok(socket));
    });
    server.once('error', (e) => finish(err(`cannot listen on port ${port}: ${describeSocketError(e)}`)));
    server.listen({ port, host: options.host, exclusive: true }, () => {
      const bound = (server.address() as net.AddressInfo).port;
      timer = setTimeout(
        () => finish(err(`no client connected to port ${bound} within ${seconds(options.timeoutMs)}`)),
        options.timeoutMs,
      );
      options.onListening?.(bound);
    });
  });
}

/**
 * One connected socket seen as a byte stream with bounded reads. Bytes that arrive before a read
 * asks for them are kept; one read may be pending at a time.
 */
export class SocketChannel {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** Why no more bytes will come, once the stream ended or failed. */
  private closedReason: string | undefined;
  private pending: PendingRead | undefined;

  constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      this.serve();
    });
    socket.on('end', () => this.stop('the peer closed the connection'));
    socket.on('close', () => this.stop('the connection closed'));
    socket.on('error', (e) => this.stop(describeSocketError(e)));
  }

  /** Exactly n bytes, or an error naming `what` was awaited (e.g. "the client's address"). */
  readExactly(n: number, timeoutMs: number, what: string): Promise<Result<Uint8Array>> {
    return this.read({ kind: 'bytes', n }, timeoutMs, what) as Promise<Result<Uint8Array>>;
  }

  /** One '\n'-terminated line without its terminator; longer than maxBytes is an error. */
  readLine(maxBytes: number, timeoutMs: number, what: string): Promise<Result<string>> {
    return this.read({ kind: 'line', maxBytes }, timeoutMs, what) as Promise<Result<string>>;
  }

  write(bytes: Uint8Array | string, timeoutMs: number, what: string): Promise<Result<void>> {
    if (this.closedReason !== undefined) return Promise.resolve(err(`cannot send ${what}: ${this.closedReason}`));
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => resolve(err(`cannot send ${what}: not accepted within ${seconds(timeoutMs)}`)), timeoutMs,
      );
      this.socket.write(bytes, (e) => {
        clearTimeout(timer);
        resolve(e ? err(`cannot send ${what}: ${describeSocketError(e)}`) : ok(undefined));
      });
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private read(want: Want, timeoutMs: number, what: string): Promise<Result<Uint8Array | string>> {
    if (this.pending !== undefined)
      throw new Error('rig-bnxt internal assertion failed: one read at a time on a SocketChannel');
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending = undefined;
        resolve(err(`timed out after ${seconds(timeoutMs)} waiting for ${what}`));
      }, timeoutMs);
      this.pending = { want, what, timer, resolve };
      this.serve();
    });
  }

  private stop(reason: string): void {
    if (this.closedReason === undefined) this.closedReason = reason;
    this.serve();
  }

  /** Completes the pending read if the buffered bytes (or the end of the stream) decide it. */
  private serve(): void {
    const p = this.pending;
    if (p === undefined) return;
    const outcome = this.take(p.want);
    if (outcome === undefined && this.closedReason === undefined) return;
    clearTimeout(p.timer);
    this.pending = undefined;
    if (outcome === undefined) p.resolve(err(`${this.closedReason} while waiting for ${p.what}`));
    else if (typeof outcome === 'object' && 'tooLong' in outcome)
      p.resolve(err(`${p.what} is longer than ${outcome.tooLong} bytes`));
    else p.resolve(ok(outcome));
  }

  private take(want: Want): Uint8Array | string | { tooLong: number } | undefined {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    if (want.kind === 'bytes') {
      if (this.buffered < want.n) return undefined;
      this.keep(all.subarray(want.n));
      return Uint8Array.from(all.subarray(0, want.n));
    }
    const newline = all.indexOf(0x0a);
    if (newline < 0) return this.buffered > want.maxBytes ? { tooLong: want.maxBytes } : undefined;
    if (newline > want.maxBytes) return { tooLong: want.maxBytes };
    this.keep(all.subarray(newline + 1));
    return all.subarray(0, newline).toString('latin1').replace(/\r$/, '');
  }

  private keep(rest: Buffer): void {
    this.chunks.length = 0;
    if (rest.length > 0) this.chunks.push(rest);
    this.buffered = rest.length;
  }
}

type Want = { kind: 'bytes'; n: number } | { kind: 'line'; maxBytes: number };

interface PendingRead {
  readonly want: Want;
  readonly what: string;
  readonly timer: NodeJS.Timeout;
  readonly resolve: (r: Result<Uint8Array | string>) => void;
}

export function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
