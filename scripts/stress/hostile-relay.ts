/**
 * A hostile wire (issue 15): a man in the middle on the UDP cable between two software NICs,
 * run as its own process. It forwards every frame unchanged and, on a share of them chosen
 * by its seed (around a third), adds a hostile frame of a kind the seed chose, before or
 * after the real one:
 *
 *   harmless by IBA (a NIC must drop or answer them without failing a queue pair)
 *     garbage      random bytes, or real Ethernet/IP/UDP headers over random bytes
 *     truncated    a real frame cut short
 *     badIcrc      a real frame with one covered byte flipped (ICRC not recomputed)
 *     replay       an exact copy of an earlier frame of the same direction
 *     wrongQpn     a real frame to another QP number (a random one, or another live QP)
 *     futurePsn    a real frame 2^20..3x2^20 PSNs ahead (requests: one sequence NAK)
 *     oldPsn       a real frame as far behind (requests: duplicates, answered again)
 *     ghostAck     an ACK or NAK of any kind far outside the window
 *     ghostRead    a READ response far outside the window
 *     randomOpcode a real frame with any opcode, far behind in PSN
 *   disruptive (valid frames an attacker can forge: they may end a connection, never leak)
 *     craftedRequest  READ, WRITE or atomic with a real key and address of the victim's
 *                     regions, at the PSN the victim expects next
 *     opcodeAtEpsn    a real request with another request opcode, at the PSN expected next
 *     readInWindow    a READ response for a PSN the requester has outstanding
 *
 * Usage: node hostile-relay.ts SEED NIC_A_PORT NIC_B_PORT [KINDS]. Prints `ports RA RB` (open NIC A
 * as emu:PA:RA and NIC B as emu:PB:RB) and `plan {...}`. Reads lines on stdin: `keys JSON`
 * ([{nic: 'A' | 'B', key, vaHi, vaLo, length}]: what the attacker knows of each NIC's
 * regions), `hold MS` (the path carries nothing for MS ms, then every frame it held, in order;
 * prints `released`) and `stats`, which prints `stats {...}` and exits. It watches what the NICs send
 * for bytes they must never send: READ responses and atomic ACKs (no queue pair across the
 * NICs grants remote reads) and the secret marker.
 */
import { createSocket, type Socket } from 'node:dgram';
import { createInterface } from 'node:readline';
import {
  OPCODE_FLAGS, OpFlag, ParseStatus, RoceFrame, buildFrame, parseFrame,
} from '../../drivers/emu/model/wire/index.ts';
import { seeded } from './seeded.ts';
import {
  DISRUPTIVE_KINDS, HARMLESS_KINDS, SECRET_MARKER, planFor, type HostilePlan, type Kind,
} from './hostile-plan.ts';

const seed = Number(process.argv[2]) >>> 0;
const nicPort = [Number(process.argv[3]), Number(process.argv[4])] as const;
// An optional fifth argument names the kinds to use instead of the seed's (to study one kind).
const only = process.argv[5] ? (process.argv[5].split(',') as Kind[]) : undefined;
const seeded0 = planFor(seed);
const plan: HostilePlan = only !== undefined && (only as string[])[0] === 'none'
  ? { ...seeded0, rate: 0, harmless: [], disruptive: [] } : only
  ? {
    ...seeded0, harmless: only.filter((k) => (HARMLESS_KINDS as readonly string[]).includes(k)),
    disruptive: only.filter((k) => (DISRUPTIVE_KINDS as readonly string[]).includes(k)),
  } : seeded0;
const rnd = seeded(seed ^ 0x5eed);
const random = (): number => rnd() / 4294967296;
const randomInt = (n: number): number => Math.floor(random() * n);

const BTH_AT = 42;
const HISTORY = 256;
const MAX_FRAME = 9216;

interface Side {
  readonly socket: Socket;
  /** Frames that came from this side's NIC, for replays (a ring). */
  readonly history: Uint8Array[];
  historyNext: number;
  /** Per QP number of this side's NIC: the PSN its responder expects next (from the requests to it). */
  readonly ePsn: Map<number, number>;
  readonly keys: { key: number; vaHi: number; vaLo: number; length: number }[];
  received: number;
  sentTo: number;
}

const stats = {
  injected: {} as Record<string, number>,
  forwarded: [0, 0],
  fromNic: [0, 0],
  readResponsesFromNics: 0,
  atomicAcksFromNics: 0,
  markerSeen: 0,
  sendErrors: 0,
};

const sides: Side[] = [0, 1].map(() => ({
  socket: createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 }),
  history: [], historyNext: 0, ePsn: new Map(), keys: [], received: 0, sentTo: 0,
}));
const parsed = new RoceFrame();
const out = new RoceFrame();
const scratch = new Uint8Array(MAX_FRAME);
const payload = new Uint8Array(MAX_FRAME);

function psnAdd(p: number, d: number): number {
  return (((p + d) % 0x1000000) + 0x1000000) % 0x1000000;
}

/** A frame from NIC `from` (0 = A, 1 = B): watched, forwarded to the other NIC, maybe with company. */
function onFrame(from: 0 | 1, msg: Buffer): void {
  const to = (from ^ 1) as 0 | 1;
  stats.fromNic[from]++;
  watch(msg);
  const ok = parseFrame(msg, msg.length, parsed, null) === ParseStatus.OK;
  if (ok) learn(to);
  const hostile = random() < plan.rate ? make(from, to, msg, ok) : null;
  const before = hostile !== null && random() < 0.5;
  if (before) send(to, hostile);
  send(to, msg);
  stats.forwarded[to]++;
  if (hostile !== null && !before) send(to, hostile);
  remember(from, msg);
}

/** What the NICs send must never hold a READ response, an atomic ACK or the secret marker. */
function watch(msg: Uint8Array): void {
  const op = msg.length > BTH_AT ? msg[BTH_AT]! : -1;
  if (op >= 0x0d && op <= 0x10) stats.readResponsesFromNics++;
  if (op === 0x12) stats.atomicAcksFromNics++;
  const m = SECRET_MARKER;
  for (let i = BTH_AT; i + m.length <= msg.length; i++) {
    if (msg[i] !== m[0]) continue;
    let j = 1;
    while (j < m.length && msg[i + j] === m[j]) j++;
    if (j === m.length) { stats.markerSeen++; return; }
  }
}

/** The QP numbers of NIC `to` that take requests, and the PSN each expects next. */
function learn(to: 0 | 1): void {
  const f = parsed;
  if ((OPCODE_FLAGS[f.opcode]! & OpFlag.REQUEST) === 0) return;
  sides[to]!.ePsn.set(f.destQp, psnAdd(f.psn, 1));
}

function remember(from: 0 | 1, msg: Uint8Array): void {
  const s = sides[from]!;
  const copy = Uint8Array.from(msg);
  if (s.history.length < HISTORY) s.history.push(copy);
  else s.history[s.historyNext] = copy;
  s.historyNext = (s.historyNext + 1) % HISTORY;
}

/** While the path is held (`hold MS`): the frames it would have carried, in order, with their NIC. */
const held: { to: 0 | 1; frame: Uint8Array }[] = [];
let holdUntilMs = 0;

function send(to: 0 | 1, frame: Uint8Array): void {
  if (holdUntilMs > 0) {
    held.push({ to, frame: Uint8Array.from(frame) });
    return;
  }
  const s = sides[to]!;
  s.sentTo++;
  s.socket.send(frame, 0, frame.length, nicPort[to], '127.0.0.1', onSent);
}

/**
 * The path stops carrying frames for `ms` and then delivers every one it held, in order: a
 * path that is only slow (a host too busy to run the relay), losing nothing and adding nothing.
 */
function hold(ms: number): void {
  holdUntilMs = Date.now() + ms;
  setTimeout(() => {
    holdUntilMs = 0;
    for (const h of held.splice(0)) send(h.to, h.frame);
    console.log('released');
  }, ms);
}

function onSent(e: Error | null): void {
  if (e) stats.sendErrors++;
}

function count(kind: Kind): void {
  stats.injected[kind] = (stats.injected[kind] ?? 0) + 1;
}

/**
 * A hostile frame to NIC `to`, shaped by the frame `msg` now passing (parsed if `ok`); null if this kind cannot be made
 * from it.
 */
function make(from: 0 | 1, to: 0 | 1, msg: Buffer, ok: boolean): Uint8Array | null {
  const kinds = plan.disruptive.length > 0 && random() < plan.disruptiveShare ? plan.disruptive : plan.harmless;
  const kind = kinds[randomInt(kinds.length)]!;
  const frame = makeKind(kind, from, to, msg, ok);
  if (frame !== null) count(kind);
  return frame;
}

function makeKind(kind: Kind, from: 0 | 1, to: 0 | 1, msg: Buffer, ok: boolean): Uint8Array | null {
  switch (kind) {
    case 'garbage': {
      const n = 1 + randomInt(1500);
      const g = new Uint8Array(n);
      for (let i = 0; i < n; i++) g[i] = randomInt(256);
      // real headers, random BTH on
      if (random() < 0.5 && n > BTH_AT) g.set(msg.subarray(0, Math.min(BTH_AT, msg.length)));
      return g;
    }
    case 'truncated':
      return msg.length > 1 ? Uint8Array.from(msg.subarray(0, 1 + randomInt(msg.length - 1))) : null;
    case 'badIcrc': {
      if (msg.length <= BTH_AT + 1) return null;
      const c = Uint8Array.from(msg);
      let at = BTH_AT + randomInt(c.length - BTH_AT);
      if (at === BTH_AT + 4) at++; // resv8a is masked out of the ICRC: a flip there would leave it valid
      c[at] ^= 1 + randomInt(255);
      return c;
    }
    case 'replay': {
      const h = sides[from]!.history;
      return h.length > 0 ? Uint8Array.from(h[randomInt(h.length)]!) : null;
    }
    case 'wrongQpn': {
      if (!ok) return null;
      const others = [...sides[to]!.ePsn.keys()].filter((q) => q !== parsed.destQp);
      const qpn = others.length > 0 && random() < 0.5 ? others[randomInt(others.length)]! : randomInt(0x1000000);
      return rebuild(msg, (f) => { f.destQp = qpn; });
    }
    case 'futurePsn':
      return ok ? rebuild(msg, (f) => { f.psn = psnAdd(f.psn, (1 << 20) + randomInt(1 << 21)); }) : null;
    case 'oldPsn':
      return ok ? rebuild(msg, (f) => { f.psn = psnAdd(f.psn, -((1 << 20) + randomInt(1 << 21))); }) : null;
    case 'ghostAck':
      if (!ok) return null;
      return rebuild(msg, (f) => {
        f.opcode = 0x11; // RC ACKNOWLEDGE
        f.payloadLength = 0;
        // ACK, RNR NAK, NAKs, anything
        const kinds = [0x1f, 0x20 | randomInt(32), 0x60, 0x61, 0x62, 0x63, randomInt(256)];
        f.aethSyndrome = kinds[randomInt(kinds.length)]!;
        f.aethMsn = randomInt(0x1000000);
        f.psn = psnAdd(f.psn, (random() < 0.5 ? 1 : -1) * ((1 << 20) + randomInt(1 << 21)));
      });
    case 'ghostRead':
      if (!ok) return null;
      return rebuild(msg, (f) => {
        f.opcode = 0x0d + randomInt(4); // READ RESPONSE First, Middle, Last, Only
        f.aethSyndrome = 0x1f;
        f.aethMsn = 0;
        f.payloadLength = f.opcode === 0x0e || f.opcode === 0x0d ? 1024 : randomInt(1025);
        f.psn = psnAdd(f.psn, (random() < 0.5 ? 1 : -1) * ((1 << 20) + randomInt(1 << 21)));
      }, true);
    case 'randomOpcode':
      if (!ok) return null;
      return rebuild(msg, (f) => {
        f.opcode = randomInt(256);
        f.psn = psnAdd(f.psn, -((1 << 20) + randomInt(1 << 21)));
        if (f.payloadLength > 0 && (OPCODE_FLAGS[f.opcode]! & OpFlag.PAYLOAD) === 0) f.payloadLength = 0;
      });
    case 'craftedRequest': {
      if (!ok || (OPCODE_FLAGS[parsed.opcode]! & OpFlag.REQUEST) === 0) return null;
      const keys = sides[to]!.keys;
      if (keys.length === 0) return null;
      const k = keys[randomInt(keys.length)]!;
      const which = randomInt(4);
      return rebuild(msg, (f) => {
        // The PSN of the request now passing: sent just before it, it is the one the victim expects.
        const at = k.vaLo + randomInt(Math.max(1, k.length - 64));
        const lo = at >>> 0;
        const hi = (k.vaHi + Math.floor(at / 4294967296)) >>> 0;
        if (which === 0 || which === 1) {
          f.opcode = which === 0 ? 0x0c : 0x0a; // RDMA READ Request, RDMA WRITE Only
          f.rethVaHi = hi;
          f.rethVaLo = lo;
          f.rethRkey = k.key;
          f.rethDmaLength = which === 0 ? 64 + randomInt(4096) : 64;
          f.payloadLength = which === 0 ? 0 : 64;
        } else {
          f.opcode = which === 2 ? 0x13 : 0x14; // CmpSwap, FetchAdd
          f.atomicVaHi = hi;
          f.atomicVaLo = lo & ~7;
          f.atomicRkey = k.key;
          f.atomicSwapHi = f.atomicSwapLo = 0xeeeeeeee;
          f.atomicCompareHi = f.atomicCompareLo = 0;
          f.payloadLength = 0;
        }
      }, true, 0xee);
    }
    case 'opcodeAtEpsn':
      if (!ok || (OPCODE_FLAGS[parsed.opcode]! & OpFlag.REQUEST) === 0) return null;
      return rebuild(msg, (f) => {
        const requests = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b];
        f.opcode = requests[randomInt(requests.length)]!;
        if ((OPCODE_FLAGS[f.opcode]! & OpFlag.PAYLOAD) === 0) f.payloadLength = 0;
        if ((OPCODE_FLAGS[f.opcode]! & OpFlag.RETH) !== 0) {
          f.rethRkey = randomInt(0x100000000);
          f.rethDmaLength = f.payloadLength;
        }
      });
    case 'readInWindow':
      if (!ok || parsed.opcode !== 0x11) return null; // an ACK to a requester: the PSN after it is likely outstanding
      return rebuild(msg, (f) => {
        f.opcode = 0x10; // READ RESPONSE Only
        f.aethSyndrome = 0x1f;
        f.payloadLength = 64;
        f.psn = psnAdd(f.psn, 1);
      }, true);
  }
}

/**
 * The frame now passing with its fields changed by `change`, built again whole (lengths, IPv4
 * checksum, ICRC valid). Payload: the original's, or `fill` bytes / random ones when `fresh`.
 */
function rebuild(msg: Uint8Array, change: (f: RoceFrame) => void, fresh = false, fill = -1): Uint8Array | null {
  copyFrame(out, parsed);
  change(out);
  const n = out.payloadLength;
  if (fresh) {
    for (let i = 0; i < n; i++) payload[i] = fill >= 0 ? fill : randomInt(256);
  } else if (n > 0) {
    payload.set(msg.subarray(parsed.payloadOffset, parsed.payloadOffset + Math.min(n, parsed.payloadLength)));
  }
  try {
    const length = buildFrame(scratch, out, payload, 0);
    return Uint8Array.from(scratch.subarray(0, length));
  } catch {
    return null; // a field the builder refuses: no frame of this kind now
  }
}

function copyFrame(dst: RoceFrame, src: RoceFrame): void {
  for (const k of Object.keys(src) as (keyof RoceFrame)[]) {
    const v = src[k];
    if (v instanceof Uint8Array) (dst[k] as Uint8Array).set(v);
    else (dst as unknown as Record<string, unknown>)[k] = v;
  }
}

let bound = 0;
for (const i of [0, 1] as const) {
  const s = sides[i]!;
  s.socket.on('message', (msg, rinfo) => {
    if (rinfo.port !== nicPort[i]) return;
    s.received++;
    onFrame(i, msg);
  });
  s.socket.bind(0, '127.0.0.1', () => {
    if (++bound === 2) {
      console.log(`ports ${sides[0]!.socket.address().port} ${sides[1]!.socket.address().port}`);
      console.log(`plan ${JSON.stringify(plan)}`);
    }
  });
}

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.startsWith('keys ')) {
    const keys =
      JSON.parse(line.slice(5)) as { nic: 'A' | 'B'; key: number; vaHi: number; vaLo: number; length: number }[];
    for (const k of keys) sides[k.nic === 'A' ? 0 : 1]!.keys.push(k);
    console.log('keys taken');
  } else if (line.startsWith('hold ')) {
    hold(Number(line.slice(5)));
  } else if (line === 'stats') {
    console.log(`stats ${JSON.stringify({ ...stats, sentToNic: [sides[0]!.sentTo, sides[1]!.sentTo] })}`);
    for (const s of sides) s.socket.close();
    process.stdin.destroy();
  }
});
