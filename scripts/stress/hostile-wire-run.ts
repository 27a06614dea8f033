/**
 * The hostile wire (issue 15): two software NICs (thread mode, each its own worker) cabled
 * over UDP through a fault-injecting relay process (hostile-relay.ts) that adds, on
 * around a third of the frames, hostile frames of kinds its seed chose. Queue pairs between
 * the NICs stream sends both ways; each message carries its stream's sequence number and a
 * seeded pattern. What must hold, whatever the wire does:
 *
 *   - a receive that completes Ok holds exactly its message's bytes, in sequence, once
 *     (never wrong bytes, never a message twice);
 *   - no frame a NIC sends carries a READ response or an atomic ACK (no queue pair across the
 *     NICs grants remote reads) or a byte of the secret regions; no region the relay knows the
 *     key of is written (the secret regions keep their marker);
 *   - with harmless kinds only (frames IBA has a NIC drop or answer), such frames never count
 *     toward a queue pair's retries: every retry a NIC made was an ACK timeout or a sequence NAK
 *     its peer sent (countingProblems), and no queue pair fails but by running out of those
 *     retries (each one that did has none left in the model: unspentRetries); with none failed,
 *     every message arrives. (The spec gives a send 7 retries of
 *     67 ms: a host too loaded to carry a frame through the relay and back in that time fails
 *     a queue pair by the rule, whatever the wire carried; seen at load 16 on 2 cores, with no
 *     hostile frame at all.)
 *
 * The first stream's receiver posts each receive late, so its sender also waits on RNR NAKs
 * under the hostile wire (a send is retried without end while the peer has no receive).
 *
 * With disruptive kinds (valid frames an attacker forges) a queue pair may fail; its entries
 * then complete with an Error, and the rest must still hold.
 */
import { readFileSync } from 'node:fs';
import { Nic, Qp, Region, type Result } from '../../lib/index.ts';
import { nicInternals } from '../../lib/nic.ts';
import type { EmuDevice } from '../../drivers/emu/host/device.ts';
import { freeUdpPortPair } from '../interop/free-ports.ts';
import { spawnLineChild } from './line-child.ts';
import { seeded } from './seeded.ts';
import { fillPattern, firstDifference } from './pattern.ts';
import { must } from './pairs.ts';
import { SECRET_MARKER, type HostilePlan } from './hostile-plan.ts';

export interface HostileOptions {
  readonly seed: number;
  /** Messages each stream sends (two streams per queue-pair pair: one each way). */
  readonly messages: number;
  readonly pairs?: number;
  /** Largest message; sizes are 8..maxBytes, seeded. */
  readonly maxBytes?: number;
  /** Give up (a problem) after this long without finishing, in ms. */
  readonly timeoutMs?: number;
  /** These kinds instead of the seed's (comma-separated names of hostile-plan.ts). */
  readonly kinds?: string;
  /**
   * Once a third of the messages arrived, the path carries nothing for this long, then every
   * frame it held (a slow path, not a lossy one: as a host too busy to run the relay).
   */
  readonly holdPathMs?: number;
}

export interface HostileResult {
  readonly seed: number;
  readonly plan: HostilePlan;
  readonly delivered: number;
  readonly expected: number;
  /** Why queue pairs failed (allowed only with disruptive kinds). */
  readonly failures: readonly string[];
  /** Broken rules: empty when the run held. */
  readonly problems: readonly string[];
  readonly relay: Record<string, unknown>;
  readonly counters: readonly Record<string, number>[];
  /**
   * Datagrams the kernel dropped at each socket (NIC A, NIC B, the relay's two ends), from /proc/net/udp; -1 where
   * unknown.
   */
  readonly socketDrops: readonly number[];
  readonly wallMs: number;
}

const SLOTS = 16;
const WINDOW = 8;
const LATE_RECEIVE_MS = 3;

interface Stream {
  readonly name: string;
  readonly from: Qp;
  readonly to: Qp;
  readonly send: Region;
  readonly recv: Region;
  readonly id: number;
  sent: number;
  sendsDone: number;
  recvPosted: number;
  received: number;
  lastReceiveMs: number;
  failed: string | undefined;
}

/** Size of message `seq` of stream `id`: both ends compute it. */
function sizeOf(id: number, seq: number, max: number): number {
  const r = seeded((id * 1_000_003 + seq) >>> 0);
  const v = r() / 4294967296;
  return 8 + Math.floor(v < 0.6 ? v * 200 : (v < 0.9 ? v * 5000 : v * max)) % (max - 7);
}

function patternSeed(id: number, seq: number): number {
  return (id * 7919 + seq * 104_729 + 1) >>> 0;
}

/** What a run keeps: the options it runs with, the broken rules and the queue pairs' failures. */
interface Run {
  readonly o: HostileOptions;
  readonly maxBytes: number;
  readonly problems: string[];
  readonly failures: string[];
}

export async function runHostileWire(o: HostileOptions): Promise<HostileResult> {
  const started = performance.now();
  const run: Run = { o, maxBytes: o.maxBytes ?? 20_000, problems: [], failures: [] };
  const { problems, failures } = run;
  const [portA, portB] = await freeUdpPortPair();
  const relay = spawnLineChild('scripts/stress/hostile-relay.ts', [
    String(o.seed), String(portA), String(portB), ...(o.kinds ? [o.kinds] : [])
  ]);
  const nics: Nic[] = [];
  try {
    const [, ra, rb] = (await relay.nextLine('ports')).split(' ').map(Number);
    const plan = JSON.parse((await relay.nextLine('plan')).slice(5)) as HostilePlan;
    nics.push(must(Nic.open(`emu:${portA}:${ra}`), 'Nic.open A'));
    nics.push(must(Nic.open(`emu:${portB}:${rb}`), 'Nic.open B'));
    const secrets = nics.map(secretRegion);
    const { streams, regions } = makeStreams(run, nics[0]!, nics[1]!, secrets);
    // The attacker knows every region's key and address (as if it had watched them being set up).
    relay.child.stdin!.write(
      `keys ${JSON.stringify(regions.map(({ nic, r }) => ({
        nic, key: r.key, vaHi: r.vaHi, vaLo: r.vaLo, length: r.length,
      })))}\n`,
    );
    await relay.nextLine('keys taken');
    let holding = o.holdPathMs !== undefined;
    await driveStreams(run, streams, plan, (delivered) => {
      if (!holding || delivered < (streams.length * o.messages) / 3) return;
      holding = false;
      relay.child.stdin!.write(`hold ${o.holdPathMs}\n`);
    });
    // The held frames reach the NICs before their counters are read.
    if (o.holdPathMs !== undefined && !holding) await relay.nextLine('released');
    problems.push(...unspentRetries(streams, nics));
    checkSecrets(secrets, problems);
    const drops = socketDrops([portA, portB, ra!, rb!]);
    const counters = nics.map(
      (nic) => (nicInternals(nic).device as EmuDevice).emu.engine.counters() as unknown as Record<string, number>,
    );
    relay.child.stdin!.write('stats\n');
    const stats =
      JSON.parse((await relay.nextLine('stats'))
      .slice(6)) as Record<string,
      unknown> & { readResponsesFromNics: number; atomicAcksFromNics: number; markerSeen: number };
    checkWire(stats, counters, problems);
    const delivered = streams.reduce((n, s) => n + s.received, 0);
    checkHarmless(run, plan, counters, delivered, streams.length * o.messages);
    return {
      seed: o.seed, plan, delivered, expected: streams.length * o.messages, failures, problems, relay: stats, counters,
      socketDrops: drops, wallMs: performance.now() - started,
    };
  } finally {
    for (const nic of nics.reverse()) nic.close();
    relay.kill();
  }
}

/** A region filled with the secret marker: no frame may carry its bytes, nothing may write it. */
function secretRegion(nic: Nic): Region {
  const r = must(Region.alloc(nic, 1 << 16), 'secret region');
  for (let i = 0; i < r.length; i += SECRET_MARKER.length) {
    r.bytes.set(SECRET_MARKER.subarray(0, Math.min(SECRET_MARKER.length, r.length - i)), i);
  }
  return r;
}

/** `pairs` queue pairs between the NICs, a stream each way on each; every region, the attacker to be told. */
function makeStreams(run: Run, nicA: Nic, nicB: Nic, secrets: Region[]): {
  streams: Stream[]; regions: { nic: 'A' | 'B'; r: Region }[];
} {
  const { maxBytes } = run;
  const streams: Stream[] = [];
  const regions: { nic: 'A' | 'B'; r: Region }[] = secrets.map((r, i) => ({ nic: i === 0 ? 'A' : 'B', r }));
  for (let p = 0; p < (run.o.pairs ?? 3); p++) {
    const a = must(Qp.make(nicA), 'Qp.make a');
    const b = must(Qp.make(nicB), 'Qp.make b');
    must(a.connect(b.endpoint), 'connect a');
    must(b.connect(a.endpoint), 'connect b');
    for (const [from, to, fromNic, toNic, dir] of [[a, b, nicA, nicB, 'A>B'], [b, a, nicB, nicA, 'B>A']] as const) {
      const send = must(Region.alloc(fromNic, SLOTS * maxBytes), 'send region');
      const recv = must(Region.alloc(toNic, SLOTS * maxBytes), 'receive region');
      regions.push({ nic: fromNic === nicA ? 'A' : 'B', r: send }, { nic: toNic === nicA ? 'A' : 'B', r: recv });
      streams.push({
        name: `pair ${p} ${dir}`, from, to, send, recv, id: streams.length + 1, sent: 0, sendsDone: 0, recvPosted: 0,
        received: 0, lastReceiveMs: 0, failed: undefined,
      });
    }
  }
  return { streams, regions };
}

function fail(run: Run, s: Stream, why: string): void {
  if (s.failed === undefined) {
    s.failed = why;
    run.failures.push(`${s.name}: ${why}`);
  }
}

/** A send's completion: Ok with its message's length, or the stream fails (false). */
function takeSend(run: Run, s: Stream, c: Result<number>): boolean {
  if (!c.ok) {
    fail(run, s, `send ${s.sendsDone}: ${c.error}`);
    return false;
  }
  const want = sizeOf(s.id, s.sendsDone, run.maxBytes);
  if (c.value !== want) {
    run.problems.push(`${s.name}: send ${s.sendsDone} completed Ok with ${c.value} bytes, not ${want}`);
  }
  s.sendsDone++;
  return true;
}

/** Every stream runs until it has sent and received every message, or failed, or the run's time is up. */
async function driveStreams(
  run: Run, streams: Stream[], plan: HostilePlan, onDelivered: (messages: number) => void,
): Promise<void> {
  const { o } = run;
  const deadline = Date.now() + (o.timeoutMs ?? 300_000);
  const done = (s: Stream) => s.failed !== undefined || (s.received === o.messages && s.sendsDone === o.messages);
  const forgedEnds = plan.disruptive.includes('opcodeAtEpsn');
  let turns = 0;
  while (!streams.every(done)) {
    if (Date.now() > deadline) {
      run.problems.push(
        `stalled: ${streams.filter((s) => !done(s))
          .map((s) => `${s.name} sent ${s.sendsDone}/${o.messages}, received ${s.received}`).join('; ')}`,
      );
      break;
    }
    let moved = false;
    for (const s of streams) if (s.failed === undefined && pumpStream(run, s, forgedEnds)) moved = true;
    onDelivered(streams.reduce((n, s) => n + s.received, 0));
    if (!moved) {
      // Nothing came: let the workers and the relay run (a short sleep on the oldest due entry).
      const s = streams.find((x) => x.failed === undefined && x.sendsDone < x.sent);
      const c = s && (turns++ & 1) === 0 ? s.from.wait('send', 500) : undefined;
      if (s && c !== undefined) takeSend(run, s, c);
      else await new Promise((res) => setTimeout(res, 0));
    }
  }
}

/** One turn of a stream: receives posted, sends posted within the window, completions taken. True if anything moved. */
function pumpStream(run: Run, s: Stream, forgedEnds: boolean): boolean {
  const { o, maxBytes } = run;
  let moved = false;
  // The first stream's receiver is late: one receive at a time, each a few ms after the last
  // came, so its sender waits on RNR NAKs under the same wire.
  const late = s.id === 1;
  while (s.recvPosted < o.messages && s.recvPosted - s.received < (late ? 1 : SLOTS) &&
    s.to.room('receive') > 0 && s.to.failure === undefined) {
    if (late && performance.now() - s.lastReceiveMs < LATE_RECEIVE_MS) break;
    s.to.receive(s.recv, (s.recvPosted % SLOTS) * maxBytes, maxBytes);
    s.recvPosted++;
    moved = true;
  }
  while (s.sent < o.messages && s.sent - s.sendsDone < WINDOW && s.from.room('send') > 0 &&
    s.from.failure === undefined) {
    const n = sizeOf(s.id, s.sent, maxBytes);
    const at = (s.sent % SLOTS) * maxBytes;
    fillPattern(s.send.bytes, at, n, patternSeed(s.id, s.sent));
    s.send.bytes[at] = s.sent & 0xff; s.send.bytes[at + 1] = (s.sent >>> 8) & 0xff; s.send.bytes[at + 2] =
      (s.sent >>> 16) & 0xff; s.send.bytes[at + 3] = s.id;
    s.from.send(s.send, at, n);
    s.sent++;
    moved = true;
  }
  for (let c = s.from.poll('send'); c !== undefined; c = s.from.poll('send')) {
    moved = true;
    if (!takeSend(run, s, c)) break;
  }
  if (s.failed !== undefined) return moved;
  for (let c = s.to.poll('receive'); c !== undefined; c = s.to.poll('receive')) {
    moved = true;
    if (!c.ok) { fail(run, s, `receive ${s.received}: ${c.error}`); break; }
    checkReceive(s, c, maxBytes, forgedEnds, run.problems, run.failures);
    s.received++;
    s.lastReceiveMs = performance.now();
  }
  return moved;
}

/**
 * A queue pair that failed "retry exceeded" spent every one of its 7 retries first: the model's
 * own count of its retries left (engine.qp) is 0. One failed with that error by anything else (a
 * frame that ended it directly, a retry count cut short) shows here.
 */
function unspentRetries(streams: readonly Stream[], nics: readonly Nic[]): string[] {
  const problems: string[] = [];
  const seen = new Set<Qp>();
  for (const s of streams) {
    const [fromNic, toNic] = s.name.endsWith('A>B') ? [0, 1] : [1, 0];
    for (const [qp, nic] of [[s.from, fromNic], [s.to, toNic]] as const) {
      if (seen.has(qp) || !qp.failure?.endsWith('(TRANSPORT_RETRY_CNT_ERR)')) continue;
      seen.add(qp);
      const qpn = qp.endpoint.qp;
      const left = (nicInternals(nics[nic]!).device as EmuDevice).emu.engine.qp(qpn)?.retryLeft;
      if (left !== 0) {
        problems.push(`QP ${qpn} of NIC ${nic === 0 ? 'A' : 'B'}: retry exceeded with ${left} retries left`);
      }
    }
  }
  return problems;
}

/** The secret regions: never written. */
function checkSecrets(secrets: readonly Region[], problems: string[]): void {
  secrets.forEach((r, i) => {
    for (let at = 0; at < r.length; at++) {
      if (r.bytes[at] !== SECRET_MARKER[at % SECRET_MARKER.length]) {
        problems.push(`NIC ${i === 0 ? 'A' : 'B'}: the secret region was written at byte ${at}`);
        break;
      }
    }
  });
}

/** What the relay saw the NICs send: no READ response, no atomic ACK, no secret byte; no internal error. */
function checkWire(
  stats: { readResponsesFromNics: number; atomicAcksFromNics: number; markerSeen: number },
  counters: readonly Record<string, number>[], problems: string[],
): void {
  if (stats.readResponsesFromNics > 0) {
    problems.push(
      `the NICs sent ${stats.readResponsesFromNics} READ responses across the wire: memory was read for a crafted ` +
        `request`,
    );
  }
  if (stats.atomicAcksFromNics > 0) {
    problems.push(`the NICs sent ${stats.atomicAcksFromNics} atomic ACKs: an atomic ran`);
  }
  if (stats.markerSeen > 0) problems.push(`${stats.markerSeen} frames on the wire carried secret bytes`);
  counters.forEach((c, i) => {
    if (c['internalErrors']! > 0) problems.push(`NIC ${i === 0 ? 'A' : 'B'}: ${c['internalErrors']} internal errors`);
  });
}

/**
 * On a wire of harmless kinds only: nothing else counted toward a retry, no queue pair failed
 * but by running out of retries, and with none failed every message arrived.
 */
function checkHarmless(
  run: Run, plan: HostilePlan, counters: readonly Record<string, number>[], delivered: number, expected: number,
): void {
  const { problems, failures } = run;
  const harmless = plan.disruptive.length === 0;
  const counting = harmless ? countingProblems(counters, plan) : [];
  problems.push(...counting);
  // On a harmless wire a queue pair may still fail one way: its retries, every one an ACK
  // timeout or a sequence NAK its peer sent (checked above), ran out because the path did not
  // answer within 7 x 67 ms (the spec's retry rule). The path is three processes' threads on
  // a shared host: a loaded 2-core machine delays a frame through the relay by hundreds of ms.
  const stalled = (f: string) => f.endsWith('(TRANSPORT_RETRY_CNT_ERR)');
  const refused = harmless ? failures.filter((f) => counting.length > 0 || !stalled(f)) : [];
  if (refused.length > 0) {
    problems.push(
      `queue pairs failed on a wire of harmless kinds only (${plan.harmless.join(', ')}): ${refused.join('; ')}`,
    );
  }
  if (harmless && failures.length === 0 && delivered !== expected && problems.length === 0) {
    problems.push(`${delivered} of ${expected} messages arrived`);
  }
}

/**
 * What IBTA lets a requester count toward retry_cnt: its ACK timeouts and the sequence NAKs its
 * responder sent (IBA 9.7.5.2.8, o9-37; rxe_comp.c). On a wire of harmless kinds, frames that
 * fail the ICRC, name another QP, are garbage or lie outside the window must count for nothing:
 *   - every go-back-N a NIC made (retransmitEvents) was an ACK timeout or a sequence NAK taken;
 *   - no NAK but RNR and sequence NAKs was taken (the peer sends none; forged ones are outside
 *     the window);
 *   - without replays (a replayed real NAK may be taken again), no NIC took more sequence or RNR
 *     NAKs than its peer sent.
 */
function countingProblems(counters: readonly Record<string, number>[], plan: HostilePlan): string[] {
  const problems: string[] = [];
  const name = (i: number) => `NIC ${i === 0 ? 'A' : 'B'}`;
  counters.forEach((c, i) => {
    const peer = counters[1 - i]!;
    if (c['retransmitEvents']! > c['ackTimeouts']! + c['seqNaksReceived']!)
      problems.push(
        `${name(i)}: ${c['retransmitEvents']} retries, but only ${c['ackTimeouts']} ACK timeouts and ` +
          `${c['seqNaksReceived']} sequence NAKs: something else counted toward retry_cnt`,
      );
    if (c['naksReceived']! > 0)
      problems.push(`${name(i)}: took ${c['naksReceived']} NAKs its peer never sends on a harmless wire`);
    if (plan.harmless.includes('replay')) return;
    for (const [taken, sent] of [['seqNaksReceived', 'seqNaksSent'], ['rnrNaksReceived', 'rnrNaksSent']] as const) {
      if (c[taken]! > peer[sent]!)
        problems.push(`${name(i)}: took ${c[taken]} ${taken} but its peer sent ${peer[sent]}: a forged NAK counted`);
    }
  });
  return problems;
}

/** The kernel's drop count of the 127.0.0.1 UDP socket bound to each port (Linux /proc/net/udp), -1 where not found. */
function socketDrops(ports: readonly number[]): number[] {
  let table = '';
  try {
    table = readFileSync('/proc/net/udp', 'utf8');
  } catch {
    return ports.map(() => -1);
  }
  const byPort = new Map<number, number>();
  for (const line of table.split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 13) continue;
    const [ip, port] = cols[1]!.split(':');
    if (ip !== '0100007F') continue; // 127.0.0.1, little-endian hex
    byPort.set(parseInt(port!, 16), Number(cols[cols.length - 1]));
  }
  return ports.map((p) => byPort.get(p) ?? -1);
}

/** The path MTU of the NICs' 1500-byte Ethernet MTU: the payload of every packet but a message's last. */
const PATH_MTU = 1024;

/**
 * A receive that completed Ok: its message's length and bytes, the next in its stream's sequence.
 * Where the attacker forges request opcodes at the expected PSN (opcodeAtEpsn), a SEND LAST or
 * ONLY made from a real packet of a longer message is a valid frame no NIC can tell from the
 * sender's (IBA has no integrity beyond the ICRC): the receive then ends early with the real
 * bytes of the packets before, in whole path-MTU packets. That is allowed there (and named in
 * `failures`); any byte that was not sent, or a length that is not such a prefix, never is.
 */
function checkReceive(
  s: Stream, c: Result<number> & { ok: true }, maxBytes: number, forgedEnds: boolean, problems: string[],
  failures: string[],
): void {
  const at = (s.received % SLOTS) * maxBytes;
  const b = s.recv.bytes;
  const seq = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
  const want = sizeOf(s.id, s.received, maxBytes);
  if (b[at + 3] !== s.id || seq !== (s.received & 0xffffff)) {
    problems.push(
      `${s.name}: receive ${s.received} holds message ${seq} of stream ${b[at + 3]} (a message twice, lost or out of ` +
        `order)`,
    );
    return;
  }
  const forgedEnd = forgedEnds && c.value < want && c.value > 0 && c.value % PATH_MTU === 0;
  if (c.value !== want && !forgedEnd) {
    problems.push(`${s.name}: receive ${s.received} completed Ok with ${c.value} bytes, not ${want}`);
    return;
  }
  if (forgedEnd) failures.push(`${s.name}: receive ${s.received} ended by a forged SEND LAST after ${c.value} bytes`);
  // The bytes after the sequence header, against a copy of the pattern.
  const expect = new Uint8Array(want);
  fillPattern(expect, 0, want, patternSeed(s.id, s.received));
  const diff = firstDifference(b, at + 4, expect, 4, c.value - 4);
  if (diff !== -1)
    problems.push(`${s.name}: receive ${s.received} completed Ok with wrong bytes from byte ${diff + 4}`);
}
