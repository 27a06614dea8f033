/**
 * How two rig-bnxt processes learn each other's QP before connecting it, over TCP:
 *
 * (a) `perf` speaks perftest's own exchange: perftest-exchange.ts.
 *
 * (b) `pingpong`, byte-exact with rdma-core's ibv_rc_pingpong (libibverbs/examples/rc_pingpong.c,
 *     pingpong.c), so either side can be the real tool:
 *       client -> server  "%04x:%06x:%06x:%s" lid:qpn:psn:gid + NUL       (52 bytes)
 *       server            connects its QP to the client's
 *       server -> client  the same message with the server's values       (52 bytes)
 *       client -> server  "done" + NUL                                     (5 bytes)
 *     The gid is gid_to_wire_gid's text: the 16 raw bytes as four big-endian 32-bit words, each
 *     "%08x", which is the same as the bytes in order, two lowercase hex digits each.
 */
import { type Result, ok, err } from './result.ts';
import { SocketChannel, acceptOne, connectWithRetry } from './exchange-socket.ts';

/** The spec's endpoint, as lib/ will define it: what a peer needs to connect to a QP. */
export interface Endpoint {
  readonly qp: number;
  readonly psn: number;
  /** 16 bytes. */
  readonly gid: Uint8Array;
  /** 6 bytes. */
  readonly mac: Uint8Array;
}

// Every wait is bounded; callers may pass their own limits.
/** A client keeps retrying a refused connection for this long (the server may be starting). */
export const CONNECT_RETRY_MS = 5_000;
export const CONNECT_RETRY_INTERVAL_MS = 100;
export const CONNECT_ATTEMPT_TIMEOUT_MS = 3_000;
/** A server waits this long for its client. */
export const ACCEPT_TIMEOUT_MS = 120_000;
/** Once connected, each message of the exchange must arrive within this. */
export const IO_TIMEOUT_MS = 10_000;
/** A PerfSession.sync waits this long by default for the peer to reach the same point. */
export const SYNC_TIMEOUT_MS = 60_000;

export interface ServerOptions {
  /** Interface to listen on; default all, as perftest and ibv_rc_pingpong. */
  readonly listenHost?: string;
  /** Called with the bound port once listening (port 0 picks a free one). */
  readonly onListening?: (port: number) => void;
  readonly acceptTimeoutMs?: number;
  readonly ioTimeoutMs?: number;
}

export interface ClientOptions {
  readonly connectRetryMs?: number;
  readonly ioTimeoutMs?: number;
}

// ---- (b) ibv_rc_pingpong -------------------------------------------------------------------

/** What ibv_rc_pingpong exchanges: no MAC (a real peer resolves it from the GID). */
export interface PingpongDest {
  readonly lid: number;
  readonly qpn: number;
  readonly psn: number;
  /** 16 bytes. */
  readonly gid: Uint8Array;
}

/** sizeof "0000:000000:000000:00000000000000000000000000000000": 51 characters and the NUL. */
export const PINGPONG_MESSAGE_BYTES = 52;
/** sizeof "done": the 4 letters and the NUL. */
export const PINGPONG_DONE = Uint8Array.from([0x64, 0x6f, 0x6e, 0x65, 0x00]);

/** sprintf(msg, "%04x:%06x:%06x:%s", lid, qpn, psn, wire_gid), sent with its NUL. */
export function formatPingpongMessage(d: PingpongDest): Uint8Array {
  checkField('lid', d.lid, 0xffff);
  checkField('qpn', d.qpn, 0xffffff);
  checkField('psn', d.psn, 0xffffff);
  checkBytes('gid', d.gid, 16);
  const text = `${hex(d.lid, 4)}:${hex(d.qpn, 6)}:${hex(d.psn, 6)}:${bytesHex(d.gid)}`;
  const bytes = new Uint8Array(PINGPONG_MESSAGE_BYTES);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes; // the last byte stays 0: the NUL
}

/**
 * The peer's 52 bytes. ibv_rc_pingpong reads them with sscanf("%x:%x:%x:%s"); every real peer
 * writes the exact layout, so anything else is rejected with a description.
 */
export function parsePingpongMessage(bytes: Uint8Array): Result<PingpongDest> {
  if (bytes.length !== PINGPONG_MESSAGE_BYTES)
    return err(`an ibv_rc_pingpong address is ${PINGPONG_MESSAGE_BYTES} bytes, got ${bytes.length}`);
  if (bytes[PINGPONG_MESSAGE_BYTES - 1] !== 0) return err('the ibv_rc_pingpong address does not end with a NUL byte');
  const text = String.fromCharCode(...bytes.subarray(0, PINGPONG_MESSAGE_BYTES - 1));
  const m = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{6}):([0-9a-fA-F]{6}):([0-9a-fA-F]{32})$/.exec(text);
  if (!m) return err(`malformed ibv_rc_pingpong address: ${JSON.stringify(text.replace(/\0.*$/, ''))}`);
  return ok({ lid: parseInt(m[1]!, 16), qpn: parseInt(m[2]!, 16), psn: parseInt(m[3]!, 16), gid: hexBytes(m[4]!) });
}

export interface PingpongServerOptions extends ServerOptions {
  /**
   * Runs between reading the client's address and answering, as ibv_rc_pingpong's server connects
   * its QP there (so the client cannot send before the server's QP is ready). A failure ends the
   * exchange without an answer.
   */
  readonly connect?: (peer: PingpongDest) => Result<void> | Promise<Result<void>>;
}

/** The server side of (b). Returns the client's address. */
export async function pingpongServerExchange(
  port: number, local: PingpongDest, options: PingpongServerOptions = {},
): Promise<Result<PingpongDest>> {
  const message = formatPingpongMessage(local);
  const io = options.ioTimeoutMs ?? IO_TIMEOUT_MS;
  const accepted = await acceptOne(port, {
    host: options.listenHost, timeoutMs: options.acceptTimeoutMs ?? ACCEPT_TIMEOUT_MS, onListening: options.onListening,
  });
  if (!accepted.ok) return accepted;
  const channel = new SocketChannel(accepted.value);

  const received = await channel.readExactly(PINGPONG_MESSAGE_BYTES, io, "the client's address");
  if (!received.ok) return closing(channel, received.error);
  const peer = parsePingpongMessage(received.value);
  if (!peer.ok) return closing(channel, peer.error);
  if (options.connect) {
    const connected = await options.connect(peer.value);
    if (!connected.ok) return closing(channel, `cannot connect to the client's QP: ${connected.error}`);
  }
  const sent = await channel.write(message, io, 'our address');
  if (!sent.ok) return closing(channel, sent.error);
  const done = await channel.readExactly(PINGPONG_DONE.length, io, '"done" from the client');
  if (!done.ok) return closing(channel, done.error);
  if (!PINGPONG_DONE.every((b, i) => done.value[i] === b))
    return closing(
      channel, `expected "done" from the client, got ${JSON.stringify(String.fromCharCode(...done.value))}`,
    );
  return closing(channel, undefined, peer.value);
}

/** The client side of (b). Returns the server's address. */
export async function pingpongClientExchange(
  host: string, port: number, local: PingpongDest, options: ClientOptions = {},
): Promise<Result<PingpongDest>> {
  const message = formatPingpongMessage(local);
  const io = options.ioTimeoutMs ?? IO_TIMEOUT_MS;
  const connected = await connectWithRetry(host, port, connectLimits(options));
  if (!connected.ok) return connected;
  const channel = new SocketChannel(connected.value);

  const sent = await channel.write(message, io, 'our address');
  if (!sent.ok) return closing(channel, sent.error);
  const received = await channel.readExactly(PINGPONG_MESSAGE_BYTES, io, "the server's address");
  if (!received.ok) return closing(channel, received.error);
  const peer = parsePingpongMessage(received.value);
  if (!peer.ok) return closing(channel, peer.error);
  const done = await channel.write(PINGPONG_DONE, io, '"done"');
  if (!done.ok) return closing(channel, done.error);
  return closing(channel, undefined, peer.value);
}

/**
 * The MAC inside a link-local GID made from it (fe80::/64 with a modified EUI-64 interface id:
 * MAC[0] with bit 1 flipped, MAC[1..2], ff, fe, MAC[3..5]). Other GIDs (IPv4-mapped, global)
 * do not carry the MAC; then undefined, and the user passes --mac.
 */
export function macFromGid(gid: Uint8Array): Uint8Array | undefined {
  checkBytes('gid', gid, 16);
  const linkLocal = gid[0] === 0xfe && gid[1] === 0x80 && gid.subarray(2, 8).every((b) => b === 0);
  if (!linkLocal || gid[11] !== 0xff || gid[12] !== 0xfe) return undefined;
  return Uint8Array.from([gid[8]! ^ 0x02, gid[9]!, gid[10]!, gid[13]!, gid[14]!, gid[15]!]);
}

/** An ibv_rc_pingpong address plus the MAC it lacks, as the spec's endpoint. */
export function endpointFromPingpong(d: PingpongDest, mac: Uint8Array): Endpoint {
  checkBytes('mac', mac, 6);
  return { qp: d.qpn, psn: d.psn, gid: d.gid, mac };
}

// ---- Helpers -------------------------------------------------------------------------------

function connectLimits(options: ClientOptions) {
  return {
    retryMs: options.connectRetryMs ?? CONNECT_RETRY_MS,
    retryIntervalMs: CONNECT_RETRY_INTERVAL_MS,
    attemptTimeoutMs: CONNECT_ATTEMPT_TIMEOUT_MS,
  };
}

/** Closes the connection and returns the error, or the value when error is undefined. */
function closing<A>(channel: SocketChannel, error: string | undefined, value?: A): Result<A> {
  channel.close();
  return error === undefined ? ok(value as A) : err(error);
}

function checkEndpoint(e: Endpoint): void {
  checkField('qp', e.qp, 0xffffff);
  checkField('psn', e.psn, 0xffffff);
  checkBytes('gid', e.gid, 16);
  checkBytes('mac', e.mac, 6);
}

function checkField(name: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max)
    throw new RangeError(`${name} must be an integer in 0..0x${max.toString(16)}, got ${value}`);
}

function checkBytes(name: string, bytes: Uint8Array, length: number): void {
  if (!(bytes instanceof Uint8Array) || bytes.length !== length)
    throw new RangeError(`${name} must be ${length} bytes`);
}

function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

function bytesHex(bytes: Uint8Array): string {
  let text = '';
  for (const b of bytes) text += hex(b, 2);
  return text;
}

function hexBytes(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

function macText(mac: Uint8Array): string {
  return Array.from(mac, (b) => hex(b, 2)).join(':');
}
