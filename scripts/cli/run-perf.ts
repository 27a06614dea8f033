/**
 * `rig-bnxt perf`: perftest's ib_send_lat / ib_send_bw / ib_read_lat / ib_read_bw on rig-bnxt.
 * Without SERVER and -d, both sides run here on one software NIC; otherwise a server and a
 * client pair over TCP and exchange endpoints there. read_* needs both queue pairs on one
 * NIC (the spec serves reads only to queue pairs of the same NIC): without SERVER it runs both
 * sides here, on the NIC -d names (a PCI function through VFIO too), and with one it is refused.
 */
import { Qp, Region, pathMtuFor, type Nic } from '../../lib/index.ts';
import type { PerfCommand } from './commands.ts';
import { openNic } from './nic-open.ts';
import {
  latencyStats, roundTripFactor, bandwidthStats, bandwidthStatsWithoutPeak, PEAK_MAX_ITERATIONS, latencyDurationStats,
  MIB, type BandwidthStats, type LatencyStats, type LatencyDurationStats,
} from './stats.ts';
import { cFixed } from './printf.ts';
import { histogram, histogramLines } from './histogram.ts';
import {
  RESULT_LINE, tableHeaderLines, latencyRow, bandwidthRow, testInfoLines, addressLines, latencyJson, bandwidthJson,
  perfJsonDocument, latencyDurationRow, latencyDurationJson, BANDWIDTH_HEADER, BANDWIDTH_HEADER_GBITS, type TestInfo,
} from './tables.ts';
import { perftestServer, perftestClient, type PerftestKeys, type PerftestSession } from './perftest-exchange.ts';
import { publishOwnAddress, resolvePeerMac } from './neighbours.ts';
import { ok } from './result.ts';
import { createProgress } from './progress.ts';
import * as L from './perf-loops.ts';
import * as B from './perf-loops-bw.ts';

export interface PerfOutput {
  log(line: string): void;
}

/**
 * The run's queue pairs: `a` on this side (-q of them), `b` their peers when both sides run
 * here; one region per side, its outgoing bytes at 0 and each QP's incoming slice after them
 * (perf-loops-bw.ts incomingOffset).
 */
interface Queues {
  readonly a: readonly Qp[];
  readonly b: readonly Qp[] | undefined;
  readonly ra: Region;
  readonly rb: Region;
}

/** Runs the command; returns the exit code. Errors are printed as one line, no stack. */
export async function runPerf(cmd: PerfCommand, out: PerfOutput = { log: (l) => console.log(l) }): Promise<number> {
  // A read test has no server side of its own: both sides on the one NIC, whichever -d names.
  const local = cmd.server === undefined && (!cmd.deviceGiven || cmd.verb === 'read');
  if (cmd.verb === 'read' && !local) {
    console.error(
      `rig-bnxt perf ${cmd.test}: reads are served only to queue pairs of the same NIC; run it without SERVER ` +
        `(both sides on the NIC -d names, the software NIC by default)`,
    );
    return 1;
  }
  if (!local && cmd.durationSeconds !== undefined) {
    console.error(
      `rig-bnxt perf ${cmd.test}: -D is supported when both sides run here (no SERVER, no -d); use -n with a server ` +
        `and a client`,
    );
    return 1;
  }
  const nic = openNic(cmd.device, cmd, cmd.pcapFile);
  if (!nic.ok) {
    console.error(`rig-bnxt perf: cannot open ${cmd.device}: ${nic.error}`);
    return 1;
  }
  try {
    return local ? runLocal(cmd, nic.value, out) : await runPaired(cmd, nic.value, out);
  } catch (e) {
    console.error(`rig-bnxt perf ${cmd.test}: ${(e as Error).message}`);
    return 1;
  } finally {
    nic.value.close();
  }
}

/** Messages outstanding: -t in bandwidth tests (reads also within the QP's read depth), 1 in latency tests. */
function txWindow(cmd: PerfCommand): number {
  if (cmd.kind === 'latency') return 1;
  return cmd.verb === 'read' ? Math.min(cmd.txDepth, L.READ_WINDOW) : cmd.txDepth;
}

function maxSize(cmd: PerfCommand): number {
  return Math.max(...cmd.sizes);
}

function makeQps(nic: Nic, count: number): Qp[] {
  const qps: Qp[] = [];
  for (let i = 0; i < count; i++) {
    const qp = Qp.make(nic);
    if (!qp.ok) throw new Error(count > 1 ? `queue pair ${i + 1} of ${count}: ${qp.error}` : qp.error);
    qps.push(qp.value);
  }
  return qps;
}

/**
 * Every byte this side's messages carry (its region's outgoing part): a peer, or a capture of the
 * cable, can check them byte for byte. PERF_SEND_FILL_B is the second side's when both run here.
 */
export const PERF_SEND_FILL = 0xa5;
export const PERF_SEND_FILL_B = 0x5a;

function makeQueues(nic: Nic, size: number, qps: number, both: boolean): Queues {
  const a = makeQps(nic, qps);
  const b = both ? makeQps(nic, qps) : undefined;
  // Outgoing bytes at 0, each QP's incoming slice after them (replies never overwrite what is sent).
  const bytes = B.regionBytesFor(qps, size);
  const ra = Region.alloc(nic, bytes);
  if (!ra.ok) throw new Error(ra.error);
  const rb = Region.alloc(nic, bytes);
  if (!rb.ok) throw new Error(rb.error);
  ra.value.bytes.fill(PERF_SEND_FILL, 0, size);
  rb.value.bytes.fill(PERF_SEND_FILL_B, 0, size);
  return { a, b, ra: ra.value, rb: rb.value };
}

function info(cmd: PerfCommand, nic: Nic, machine: 'server' | 'client'): TestInfo {
  return {
    test: cmd.test, device: cmd.device, machine, qps: cmd.qps, txDepth: txWindow(cmd),
    ...(cmd.gidIndex !== undefined ? { gidIndex: cmd.gidIndex } : {}), rxDepth: cmd.kind === 'latency' ? 1 : 512,
    mtuBytes: pathMtuFor(nic.info.mtu), linkType: 'Ethernet', ...(cmd.kind === 'bandwidth' ? { cqModeration: 1 } : {}),
    ...(cmd.verb === 'read' ? { outstandingReads: L.READ_WINDOW } : { maxInlineBytes: 0 }),
  };
}

function progressFor(cmd: PerfCommand, size: number, iterations: number) {
  // Rough expected time: ~5 us per message plus the bytes at ~1 GB/s on the software NIC.
  const expectedMs = cmd.durationSeconds ? cmd.durationSeconds * 1000 : iterations * (0.005 + size / 1e6);
  const p = createProgress(`${cmd.test} ${size} B`, iterations, expectedMs);
  return { tick: (i: number) => p.update(i + 1), finish: () => p.finish() };
}

/** The test information, then every local address and every remote one, as perftest prints them (one per QP). */
function printHeader(
  cmd: PerfCommand, nic: Nic, machine: 'server' | 'client', queues: Queues,
  peers: readonly { qp: number; psn: number; gid: Uint8Array }[] | undefined, out: PerfOutput, pathMtu?: number,
  warmUp?: string,
): void {
  if (!fullOutput(cmd)) return;
  for (const l of testInfoLines({ ...info(cmd, nic, machine), ...(warmUp !== undefined ? { warmUp } : {}),
    ...(pathMtu !== undefined ? { mtuBytes: pathMtu } : {}) })) out.log(l);
  for (const qp of queues.a) {
    const e = qp.endpoint;
    for (const l of addressLines('local', { lid: 0, qpn: e.qp, psn: e.psn, gid: e.gid })) out.log(l);
  }
  const remotes = peers ?? queues.b?.map((qp) => qp.endpoint) ?? [];
  for (const remote of remotes)
    for (const l of addressLines('remote', { lid: 0, qpn: remote.qp, psn: remote.psn, gid: remote.gid })) out.log(l);
  for (const l of tableHeaderLines(cmd.test, cmd.durationSeconds !== undefined))
    out.log(l === BANDWIDTH_HEADER && cmd.reportGbits ? BANDWIDTH_HEADER_GBITS : l);
}

/** --histogram: print the buckets after the row, and put buckets and percentiles in the JSON record. */
function withHistogram(
  cmd: PerfCommand, out: PerfOutput, samples: Float64Array, record: Record<string, number>,
): Record<string, number> {
  if (!cmd.histogram) return record;
  const h = histogram(samples, roundTripFactor(cmd.verb));
  if (fullOutput(cmd)) for (const l of histogramLines(h)) out.log(l);
  const json = record as Record<string, unknown>;
  json['percentiles'] = Object.fromEntries(Object.entries(h.percentiles).map(([k, v]) => [k, Number(cFixed(v, 2))]));
  json['histogram'] = h.buckets.map((b) => ({ low_usec: b.lowUs, high_usec: b.highUs, count: b.count }));
  return record;
}

/** The tables perftest prints by default; --json and --output print something else instead. */
function fullOutput(cmd: PerfCommand): boolean {
  return !cmd.json && cmd.output === 'full';
}

/** perftest's --report_gbits unit: 1 Gb/s = 125,000,000 bytes/s (format_factor in print_report_bw). */
const GBIT_BYTES = 125_000_000;

function inReportUnit(cmd: PerfCommand, st: BandwidthStats): BandwidthStats {
  if (!cmd.reportGbits) return st;
  const k = MIB / GBIT_BYTES;
  return { ...st, bwPeakMiBps: st.bwPeakMiBps * k, bwAverageMiBps: st.bwAverageMiBps * k };
}

/** --output prints one number as perftest's printf("%lf\n") does. */
const lf = (value: number) => cFixed(value, 6);

function printLatency(cmd: PerfCommand, out: PerfOutput, size: number, iterations: number, st: LatencyStats): void {
  if (cmd.json) return;
  out.log(cmd.output === 'latency' ? lf(st.tAvgUs) : latencyRow(size, iterations, st));
}

function printLatencyDuration(
  cmd: PerfCommand, out: PerfOutput, size: number, iterations: number, st: LatencyDurationStats,
): void {
  if (cmd.json) return;
  out.log(cmd.output === 'latency' ? lf(st.tAvgUs) : latencyDurationRow(size, iterations, st));
}

function printBandwidth(
  cmd: PerfCommand, out: PerfOutput, size: number, iterations: number, raw: BandwidthStats,
): void {
  if (cmd.json) return;
  const st = inReportUnit(cmd, raw);
  if (cmd.output === 'bandwidth') out.log(lf(st.bwAverageMiBps));
  else if (cmd.output === 'message_rate') out.log(lf(st.msgRateMpps));
  else out.log(bandwidthRow(size, iterations, st));
}

function runLocal(cmd: PerfCommand, nic: Nic, out: PerfOutput): number {
  const queues = makeQueues(nic, maxSize(cmd), cmd.qps, true);
  const { a, ra, rb } = queues;
  const b = queues.b!;
  for (let i = 0; i < a.length; i++) {
    const c1 = a[i]!.connect(b[i]!.endpoint);
    if (!c1.ok) throw new Error(c1.error);
    const c2 = b[i]!.connect(a[i]!.endpoint);
    if (!c2.ok) throw new Error(c2.error);
  }
  printHeader(cmd, nic, 'client', queues, undefined, out, undefined, warmUpText(cmd));
  const results: Record<string, number>[] = [];
  for (const size of cmd.sizes) {
    const loop: Loop = (iterations, samples, posted, completed, tick) => {
      if (cmd.test === 'send_lat') L.sendLatencyLocal(a[0]!, b[0]!, ra, rb, size, samples!, tick);
      else if (cmd.test === 'read_lat') L.readLatency(a[0]!, ra, rb, size, samples!, tick);
      else if (cmd.test === 'send_bw')
        B.sendBandwidthLocal(a, b, ra, rb, size, posted!, completed!, tick, txWindow(cmd));
      else B.readBandwidth(a, ra, rb, size, posted!, completed!, tick, txWindow(cmd));
      return iterations * (cmd.kind === 'bandwidth' ? a.length : 1);
    };
    warmUp(loop, cmd, size === cmd.sizes[0] ? firstWarmUpMs(cmd) : 0);
    results.push(measure(cmd, size, out, loop));
  }
  finish(cmd, nic, 'client', results, out, warmUpText(cmd));
  return 0;
}

/**
 * Both sides are here, so the measured run can follow unmeasured ones of the same loop (up to
 * WARM_UP_ITERATIONS each): otherwise a default run of 1000 iterations mostly measures the JIT
 * compiling the loop (perftest's --perform_warm_up does the same for its bandwidth tests). Paired
 * runs do not: both sides must count the same messages as the peer does.
 *
 * Before the first size the loop repeats for at least WARM_UP_FIRST_MS: V8's optimizing compiler
 * runs on a thread of its own, and on a loaded 2-core machine the optimized code of the driver and
 * the model came in only 0.5-1 s after the loop started (medians of successive windows of 1000
 * round trips: 50, 17, 14, 13, 12, then 8-10 us). One pass of 1000 iterations left a default
 * send_lat's t_typical at 5-8 us against 3.1 us at -n 100000; after 1 s, 3.1-4.3 us (load 3-6).
 * Later sizes run the code already compiled: one pass each. A run asked for fewer iterations than
 * the default (a smoke check) warms up for fewer ms, one per iteration.
 */
const WARM_UP_ITERATIONS = 1000;
const WARM_UP_FIRST_MS = 1000;

function firstWarmUpMs(cmd: PerfCommand): number {
  return Math.min(WARM_UP_FIRST_MS, cmd.iterations);
}

function warmUp(loop: Loop, cmd: PerfCommand, atLeastMs: number): void {
  const n = Math.min(cmd.iterations, WARM_UP_ITERATIONS);
  const timestamps = n * timestampsPerIteration(cmd);
  const samples = new Float64Array(n);
  const posted = new Float64Array(timestamps);
  const completed = new Float64Array(timestamps);
  const end = performance.now() + atLeastMs;
  do loop(n, samples, posted, completed, () => {});
  while (performance.now() < end);
}

/** What the header says of the warm-up (perftest has no such line: its runs are C, compiled before they start). */
function warmUpText(cmd: PerfCommand): string {
  const n = Math.min(cmd.iterations, WARM_UP_ITERATIONS);
  return `ON, unmeasured: ${firstWarmUpMs(cmd)} ms before the first size, ${n} iterations before each`;
}

/**
 * One size's loop: `iterations` per queue pair; latency loops fill `samples` (one per
 * iteration), bandwidth loops `posted` and `completed` (one per message of every QP). Returns
 * the messages it ran.
 */
type Loop = (iterations: number, samples: Float64Array | undefined, posted: Float64Array | undefined,
  completed: Float64Array | undefined, tick: (i: number) => void) => number;

/** A bandwidth test's timestamps per iteration: one per queue pair (a latency test runs one QP). */
function timestampsPerIteration(cmd: PerfCommand): number {
  return cmd.kind === 'bandwidth' ? cmd.qps : 1;
}

/** Runs one size (by iterations, or for -D seconds) and prints its row; returns its JSON record. */
function measure(cmd: PerfCommand, size: number, out: PerfOutput, loop: Loop): Record<string, number> {
  const latency = cmd.kind === 'latency';
  if (cmd.durationSeconds !== undefined) {
    // Duration mode: run batches until the time is up.
    const t0 = performance.now();
    let iterations = 0;
    const batch = 1000;
    const samples = new Float64Array(batch);
    const posted = new Float64Array(batch * timestampsPerIteration(cmd));
    const completed = new Float64Array(batch * timestampsPerIteration(cmd));
    while (performance.now() - t0 < cmd.durationSeconds * 1000)
      iterations += loop(batch, samples, posted, completed, () => {});
    const elapsedUs = (performance.now() - t0) * 1000;
    if (latency) {
      const s = latencyDurationStats(iterations, elapsedUs, roundTripFactor(cmd.verb));
      printLatencyDuration(cmd, out, size, iterations, s);
      return latencyDurationJson(size, iterations, s);
    }
    const s = bandwidthStatsWithoutPeak(size, iterations, elapsedUs);
    printBandwidth(cmd, out, size, iterations, s);
    return bandwidthJson(size, iterations, s);
  }
  const iterations = cmd.iterations;
  const messages = iterations * timestampsPerIteration(cmd);
  const progress = progressFor(cmd, size, messages);
  if (latency) {
    const samples = new Float64Array(iterations);
    loop(iterations, samples, undefined, undefined, progress.tick);
    progress.finish();
    const s = latencyStats(samples, roundTripFactor(cmd.verb));
    printLatency(cmd, out, size, iterations, s);
    return withHistogram(cmd, out, samples, latencyJson(size, iterations, s));
  }
  const posted = new Float64Array(messages);
  const completed = new Float64Array(messages);
  loop(iterations, undefined, posted, completed, progress.tick);
  progress.finish();
  // perftest measures the peak unless a QP runs more than 20,000 iterations (force_dependecies),
  // over the messages of every QP (print_report_bw).
  const s = iterations > PEAK_MAX_ITERATIONS
    ? bandwidthStatsWithoutPeak(size, messages, completed[messages - 1]! - posted[0]!)
    : bandwidthStats(size, posted, completed);
  printBandwidth(cmd, out, size, messages, s);
  return bandwidthJson(size, messages, s);
}

function finish(
  cmd: PerfCommand, nic: Nic, machine: 'server' | 'client', results: Record<string, number>[], out: PerfOutput,
  warmUp?: string,
): void {
  if (cmd.json) out.log(perfJsonDocument({ ...info(cmd, nic, machine), ...(warmUp !== undefined ? { warmUp } : {}) },
    results));
  else if (fullOutput(cmd)) out.log(RESULT_LINE);
}

/**
 * A server and a client in two processes (or with a real perftest on the other side), paired
 * over perftest's exchange (perftest-exchange.ts) in the order send_lat.c and send_bw.c make
 * their handshakes: the first keys (one per QP), connect, a handshake, a handshake whose keys
 * are printed as the remote address, then per size: the server posts its receives, a handshake
 * (the client must not send before they are up), the run, its row (send_bw with -a: one more
 * handshake after each size); at the end the closing handshake and "done".
 */
/** What perftest's server prints before it waits (a blank line first). */
export const SERVER_BANNER = [
  '', '************************************', '* Waiting for client to connect... *',
  '************************************',
];

/** One key block per QP, each naming that QP's receive buffer (perftest set_up_connection's my_dest[i]). */
function keyBlocks(a: readonly Qp[], ra: Region, size: number): PerftestKeys[] {
  const base = (BigInt(ra.vaHi) << 32n) | BigInt(ra.vaLo);
  return a.map((qp, i) => {
    const e = qp.endpoint;
    return {
      lid: 0, outReads: 1, qpn: e.qp, psn: e.psn, rkey: ra.key, vaddr: base + BigInt(B.incomingOffset(i, size)),
      gid: e.gid, srqn: 0,
    };
  });
}

/** QP i connects to the peer's QP i (perftest ctx_connect with rem_dest[i]); a refusal throws, naming the QP. */
function connectToPeer(cmd: PerfCommand, a: readonly Qp[], s: PerftestSession): void {
  for (let i = 0; i < a.length; i++) {
    const peer = s.peer.keys[i]!;
    const mac = cmd.peerMac !== undefined ? ok(cmd.peerMac) : resolvePeerMac(peer.gid);
    if (!mac.ok) throw new Error(mac.error);
    const c = a[i]!.connect({ qp: peer.qpn, psn: peer.psn, gid: peer.gid, mac: mac.value }, {
      pathMtu: s.peer.pathMtu,
    });
    if (!c.ok) throw new Error(a.length > 1 ? `queue pair ${i + 1} of ${a.length}: ${c.error}` : c.error);
  }
}

async function runPaired(cmd: PerfCommand, nic: Nic, out: PerfOutput): Promise<number> {
  const queues = makeQueues(nic, maxSize(cmd), cmd.qps, false);
  const { a, ra } = queues;
  const machine = cmd.server === undefined ? 'server' : 'client';
  // A rig-bnxt peer on this machine finds our MAC by our IPv4 (perftest's keys carry only the GID).
  const withdraw = publishOwnAddress(nic.info.ipv4, a[0]!.endpoint.mac);
  const keys = keyBlocks(a, ra, maxSize(cmd));
  const pathMtu = pathMtuFor(nic.info.mtu);
  // perftest's server banner (send_lat.c, send_bw.c), before it waits for its client.
  if (machine === 'server' && fullOutput(cmd)) for (const l of SERVER_BANNER) out.log(l);
  const opened = machine === 'server'
    ? await perftestServer(cmd.port, { keys, pathMtu })
    : await perftestClient(cmd.server!, cmd.port, { keys, pathMtu });
  if (!opened.ok) {
    withdraw();
    console.error(`rig-bnxt perf: ${opened.error}`);
    return 1;
  }
  const s: PerftestSession = opened.value;
  const step = async (what: string, qp = 0): Promise<PerftestKeys> => {
    const r = await s.handshake(qp);
    if (!r.ok) throw new Error(`${what}: ${r.error}`);
    return r.value;
  };
  try {
    connectToPeer(cmd, a, s);
    await step('after connecting');
    // Then one handshake per QP, whose keys are printed as that QP's remote address.
    const remotes: { qp: number; psn: number; gid: Uint8Array }[] = [];
    for (let i = 0; i < a.length; i++) {
      const remote = await step(a.length > 1 ? `the remote address of QP ${i}` : 'the remote address', i);
      remotes.push({ qp: remote.qpn, psn: remote.psn, gid: remote.gid });
    }
    printHeader(cmd, nic, machine, queues, remotes, out, s.peer.pathMtu);
    const results: Record<string, number>[] = [];
    for (const size of cmd.sizes) {
      const preposted = machine === 'server'
        ? (cmd.test === 'send_lat' ? 1 : Math.min(cmd.iterations, B.SERVER_RX_DEPTH)) : 0;
      if (machine === 'server') B.prepostReceives(a, ra, size, preposted);
      await step(`before the run of ${size} B`);
      if (machine === 'server') results.push(serveOne(cmd, queues, size, preposted, out));
      else {
        results.push(measure(cmd, size, out, (iterations, samples, posted, completed, tick) => {
          if (cmd.test === 'send_lat') L.sendLatencyClient(a[0]!, ra, size, samples!, tick);
          else B.sendBandwidthClient(a, ra, size, posted!, completed!, tick, txWindow(cmd));
          return iterations * timestampsPerIteration(cmd);
        }));
      }
      if (cmd.test === 'send_bw' && cmd.all) await step(`after the run of ${size} B`);
    }
    const closed = await s.finish();
    if (!closed.ok) throw new Error(`closing: ${closed.error}`);
    finish(cmd, nic, machine, results, out);
    return 0;
  } finally {
    withdraw();
    s.close();
  }
}

/** The server's side of one size, and the row perftest's server prints for it. */
function serveOne(cmd: PerfCommand, queues: Queues, size: number, preposted: number, out: PerfOutput): Record<string,
number> {
  const { a, ra } = queues;
  if (cmd.test === 'send_lat') {
    // One sample per round trip between successive receives (iterations >= 5, so >= 4 samples).
    const samples = new Float64Array(cmd.iterations - 1);
    L.sendLatencyServer(a[0]!, ra, size, cmd.iterations, samples);
    const st = latencyStats(samples, roundTripFactor(cmd.verb));
    printLatency(cmd, out, size, cmd.iterations, st);
    return withHistogram(cmd, out, samples, latencyJson(size, cmd.iterations, st));
  }
  // The messages of every QP, over the time from the first receive to the last (run_iter_bw_server).
  const messages = cmd.iterations * a.length;
  const elapsedUs = B.sendBandwidthServer(a, ra, size, cmd.iterations, preposted);
  const st = bandwidthStatsWithoutPeak(size, messages, elapsedUs);
  printBandwidth(cmd, out, size, messages, st);
  return bandwidthJson(size, messages, st);
}
