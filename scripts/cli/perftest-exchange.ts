/**
 * perftest's out-of-band exchange, so `rig-bnxt perf` pairs with a real ib_send_lat/ib_send_bw in
 * either role (and with itself). perftest's "Ethernet" data-exchange method (no -R), as
 * linux-rdma/perftest src/perftest_communication.c does it:
 *
 * - TCP; every block has a fixed size; for each block the client writes then reads, the server
 *   reads then writes (ctx_xchg_data_ethernet, ctx_hand_shake).
 * - version: 16 bytes, ASCII, NUL-padded (exchange_versions). A peer below 5.70 is refused, as
 *   check_version_compatibility refuses it. The versions also choose the later formats: each side
 *   looks at the *peer's* version. We announce 6.06 (the perftest of Debian 12, perftest package
 *   4.5-0.17): at or above 5.70, 5.31 and 5.32, below 6.28, so a newer perftest does not start
 *   negotiate_params with us, whose block carries build-dependent device attributes.
 * - cycle_buffer and cache_line_size: 4 bytes each, big-endian ints (check_sys_data).
 * - MTU: 2 bytes, the enum ibv_mtu value as decimal text and a NUL (check_mtu, peer >= 5.31);
 *   the path MTU is the smaller of the two.
 * - keys: 108 bytes, KEY_PRINT_FMT_GID "%04x:%04x:%06x:%06x:%08x:%016llx:" then 16 x "%02x:" then
 *   "%08x:" and the NUL: lid, out_reads, qpn, psn, rkey, vaddr, the 16 GID bytes, srqn. The
 *   handshakes that follow (barriers) exchange the same blocks again.
 * - the end: one more handshake (ctx_close_connection), then "done" and its NUL, which the peer does
 *   not read, and the socket closes.
 * Which handshakes a test makes, and when, is in run-perf.ts beside the runs.
 */
import { type Result, ok, err } from './result.ts';
import { SocketChannel, acceptOne, connectWithRetry } from './exchange-socket.ts';
import {
  ACCEPT_TIMEOUT_MS, CONNECT_RETRY_MS, CONNECT_RETRY_INTERVAL_MS, CONNECT_ATTEMPT_TIMEOUT_MS, IO_TIMEOUT_MS,
} from './exchange.ts';

/** What we announce (see the header). */
export const PERFTEST_VERSION = '6.06';
/** check_version_compatibility's floor. */
export const PERFTEST_MIN_VERSION = 5.7;
export const VERSION_BYTES = 16;
/** KEY_MSG_SIZE_GID. */
export const KEY_BYTES = 108;
/** What perftest's defaults are for cycle_buffer (the page size) and cache_line_size. */
export const CYCLE_BUFFER = 4096;
export const CACHE_LINE_SIZE = 64;
export const DONE = Uint8Array.from([0x64, 0x6f, 0x6e, 0x65, 0x00]);
/** A barrier waits at most this long for the peer (a run of -n iterations sits between two). */
export const BARRIER_TIMEOUT_MS = 600_000;

/** perftest's struct pingpong_dest as it travels. */
export interface PerftestKeys {
  readonly lid: number;
  /** The reads this side accepts as responder (1 in the send tests). */
  readonly outReads: number;
  readonly qpn: number;
  readonly psn: number;
  readonly rkey: number;
  /** The buffer a peer may read: a 64-bit address as 16 hex digits. */
  readonly vaddr: bigint;
  /** 16 bytes. */
  readonly gid: Uint8Array;
  readonly srqn: number;
}

const MTU_ENUM: ReadonlyMap<number, number> = new Map([[256, 1], [512, 2], [1024, 3], [2048, 4], [4096, 5]]);

export function mtuEnum(pathMtuBytes: number): number {
  const e = MTU_ENUM.get(pathMtuBytes);
  if (e === undefined) throw new RangeError(`${pathMtuBytes} is not an IB path MTU`);
  return e;
}

export function mtuBytes(enumValue: number): number | undefined {
  for (const [bytes, e] of MTU_ENUM) if (e === enumValue) return bytes;
  return undefined;
}

export function formatVersion(version: string = PERFTEST_VERSION): Uint8Array {
  const out = new Uint8Array(VERSION_BYTES);
  for (let i = 0; i < version.length && i < VERSION_BYTES - 1; i++) out[i] = version.charCodeAt(i);
  return out;
}

/** The text before the first NUL, and its value as C's atof reads a leading number (0 if none). */
export function parseVersion(block: Uint8Array): { text: string; value: number } {
  let end = block.indexOf(0);
  if (end < 0) end = block.length;
  const text = String.fromCharCode(...block.subarray(0, end));
  const m = /^\s*[+-]?(\d+\.?\d*|\.\d+)/.exec(text);
  return { text, value: m ? Number(m[1]) : 0 };
}

export function formatInt(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setInt32(0, value, false);
  return out;
}

export function parseInt32(block: Uint8Array): number {
  return new DataView(block.buffer, block.byteOffset, 4).getInt32(0, false);
}

/** sprintf("%d", mtu) into a 2-byte block: one digit and the NUL. */
export function formatMtu(enumValue: number): Uint8Array {
  return Uint8Array.from([0x30 + enumValue, 0]);
}

/** strtol of the block's text, base 10; undefined unless it names an IB MTU (valid_mtu_size). */
export function parseMtu(block: Uint8Array): number | undefined {
  const { text } = parseVersion(block);
  const n = /^\d+/.exec(text);
  return n ? mtuBytes(Number(n[0])) : undefined;
}

const hex = (value: number | bigint, width: number) => value.toString(16).padStart(width, '0');

export function formatKeys(k: PerftestKeys): Uint8Array {
  if (!(k.gid instanceof Uint8Array) || k.gid.length !== 16) throw new RangeError('gid must be 16 bytes');
  const text =
    `${hex(k.lid, 4)}:${hex(k.outReads, 4)}:${hex(k.qpn, 6)}:${hex(k.psn, 6)}:${hex(k.rkey >>> 0, 8)}:` +
    `${hex(BigInt.asUintN(64, k.vaddr), 16)}:` +
    [...k.gid].map((b) => `${hex(b, 2)}:`).join('') + `${hex(k.srqn >>> 0, 8)}:`;
  if (text.length !== KEY_BYTES - 1) throw new RangeError(`a field is too wide for perftest's keys: ${text}`);
  const out = new Uint8Array(KEY_BYTES);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** The peer's 108 bytes, read field by field as ethernet_read_keys does (hex fields between colons). */
export function parseKeys(block: Uint8Array): Result<PerftestKeys> {
  if (block.length !== KEY_BYTES) return err(`perftest's keys are ${KEY_BYTES} bytes, got ${block.length}`);
  let end = block.indexOf(0);
  if (end < 0) end = block.length;
  const text = String.fromCharCode(...block.subarray(0, end));
  const fields = text.split(':');
  // lid, out_reads, qpn, psn, rkey, vaddr, 16 GID bytes, srqn, and the empty text after the last colon.
  if (fields.length !== 24 || !fields.slice(0, 23).every((f) => /^[0-9a-fA-F]+$/.test(f))) {
    return err(`malformed perftest keys from the peer: ${JSON.stringify(text.slice(0, 120))}`);
  }
  const n = (i: number) => parseInt(fields[i]!, 16);
  return ok({
    lid: n(0), outReads: n(1), qpn: n(2) & 0xffffff, psn: n(3) & 0xffffff, rkey: n(4) >>> 0,
    vaddr: BigInt(`0x${fields[5]}`), gid: Uint8Array.from(fields.slice(6, 22), (f) => parseInt(f, 16)),
    srqn: n(22) >>> 0,
  });
}

/** Both GIDs IPv4-mapped, or neither (ctx_check_gid_compatibility). */
export function gidsCompatible(a: Uint8Array, b: Uint8Array): boolean {
  const mapped = (g: Uint8Array) => g.subarray(0, 10).every((x) => x === 0) && g[10] === 0xff && g[11] === 0xff;
  return mapped(a) === mapped(b);
}

export interface PerftestPeer {
  /** The peer's version text and value. */
  readonly version: { text: string; value: number };
  /** The path MTU both sides use: the smaller of the two. */
  readonly pathMtu: number;
  /** The peer's keys, one per queue pair, from the first exchange. */
  readonly keys: readonly PerftestKeys[];
}

export interface PerftestSession {
  readonly peer: PerftestPeer;
  /** One handshake: our keys of `qp` out, the peer's back (a barrier). */
  handshake(qp?: number, timeoutMs?: number): Promise<Result<PerftestKeys>>;
  /** The close: a last handshake, then "done", then the socket closes. */
  finish(): Promise<Result<void>>;
  close(): void;
}

export interface PerftestExchangeOptions {
  /** Our keys, one per queue pair. */
  readonly keys: readonly PerftestKeys[];
  /** Our path MTU in bytes. */
  readonly pathMtu: number;
  readonly ioTimeoutMs?: number;
  readonly listenHost?: string;
  readonly onListening?: (port: number) => void;
  readonly acceptTimeoutMs?: number;
  readonly connectRetryMs?: number;
}

/** perftest's server: accept one client, then the exchange up to the first handshake of every QP. */
export async function perftestServer(port: number, options: PerftestExchangeOptions): Promise<Result<PerftestSession>> {
  const accepted = await acceptOne(port, {
    host: options.listenHost, timeoutMs: options.acceptTimeoutMs ?? ACCEPT_TIMEOUT_MS, onListening: options.onListening,
  });
  if (!accepted.ok) return accepted;
  return start(new SocketChannel(accepted.value), 'server', options);
}

/** perftest's client: connect (retrying while refused), then the same exchange. */
export async function perftestClient(
  host: string, port: number, options: PerftestExchangeOptions,
): Promise<Result<PerftestSession>> {
  const connected = await connectWithRetry(host, port, {
    retryMs: options.connectRetryMs ?? CONNECT_RETRY_MS, retryIntervalMs: CONNECT_RETRY_INTERVAL_MS,
    attemptTimeoutMs: CONNECT_ATTEMPT_TIMEOUT_MS,
  });
  if (!connected.ok) return connected;
  return start(new SocketChannel(connected.value), 'client', options);
}

async function start(
  channel: SocketChannel, role: 'server' | 'client', options: PerftestExchangeOptions,
): Promise<Result<PerftestSession>> {
  const io = options.ioTimeoutMs ?? IO_TIMEOUT_MS;
  const peerName = role === 'server' ? 'the client' : 'the server';
  const xchg = async (mine: Uint8Array, what: string, timeoutMs = io): Promise<Result<Uint8Array>> => {
    if (role === 'client') {
      const sent = await channel.write(mine, timeoutMs, what);
      if (!sent.ok) return sent;
      return channel.readExactly(mine.length, timeoutMs, `${peerName}'s ${what}`);
    }
    const got = await channel.readExactly(mine.length, timeoutMs, `${peerName}'s ${what}`);
    if (!got.ok) return got;
    const sent = await channel.write(mine, timeoutMs, what);
    return sent.ok ? got : sent;
  };
  const fail = (message: string): Result<PerftestSession> => {
    channel.close();
    return err(message);
  };

  const v = await xchg(formatVersion(), 'version');
  if (!v.ok) return fail(v.error);
  const version = parseVersion(v.value);
  if (version.value < PERFTEST_MIN_VERSION) {
    return fail(`${peerName} announced version ${JSON.stringify(version.text.slice(0, 16))}: perftest's exchange ` +
      'needs 5.70 or later (perftest refuses older peers the same way)');
  }
  for (const [value, what] of [[CYCLE_BUFFER, 'cycle buffer size'], [CACHE_LINE_SIZE, 'cache line size']] as const) {
    const r = await xchg(formatInt(value), what);
    if (!r.ok) return fail(r.error);
  }
  const m = await xchg(formatMtu(mtuEnum(options.pathMtu)), 'MTU');
  if (!m.ok) return fail(m.error);
  const peerMtu = parseMtu(m.value);
  const pathMtu = peerMtu !== undefined && peerMtu < options.pathMtu ? peerMtu : options.pathMtu;

  const handshake = async (qp = 0, timeoutMs = BARRIER_TIMEOUT_MS): Promise<Result<PerftestKeys>> => {
    const mine = options.keys[qp];
    if (mine === undefined) throw new RangeError(`no queue pair ${qp}`);
    const r = await xchg(formatKeys(mine), `keys of QP ${qp}`, timeoutMs);
    if (!r.ok) return r;
    const keys = parseKeys(r.value);
    if (keys.ok && !gidsCompatible(mine.gid, keys.value.gid)) {
      return err(`${peerName}'s GID type differs from ours (one IPv4-mapped, one not): use the same IP version on ` +
        'both sides');
    }
    return keys;
  };
  const keys: PerftestKeys[] = [];
  for (let qp = 0; qp < options.keys.length; qp++) {
    const k = await handshake(qp, io);
    if (!k.ok) return fail(k.error);
    keys.push(k.value);
  }
  return ok({
    peer: { version, pathMtu, keys },
    handshake,
    async finish(): Promise<Result<void>> {
      const last = await handshake(0, io);
      if (!last.ok) { channel.close(); return err(last.error); }
      // "done" is written and not read back: the peer may have closed already, which is fine.
      await channel.write(DONE, io, '"done"');
      channel.close();
      return ok(undefined);
    },
    close: () => channel.close(),
  });
}
