/**
 * A 64-byte ping-pong between queue pairs of two processes, each with a software NIC cabled
 * over UDP on 127.0.0.1 (issue 13 goal: <= 2x the raw Node dgram ping-pong between two
 * processes, bench/udp-ping-node.ts). This process sends 64 B and waits for the echo from
 * bench/helpers/qp-echo-child.ts; endpoints go over the child's stdin/stdout. Each round trip
 * carries the two messages and their ACKs as RoCEv2 frames in UDP datagrams. The figures are
 * `emu:LOCAL:REMOTE` NICs opened with `thread: false` (model inline in each process's driver
 * thread, socket read through libc: the mode for a program that keeps calling its driver); the
 * same run also measures both NICs with their models in worker threads (UDP's default), for the
 * detail.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint, type Result } from '../lib/index.ts';
import { benchResult, ratioAtMost } from './helpers/result.ts';
import { waitOne } from './helpers/qp-setup.ts';
import { cpuNs, sampleEach, summarize, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';
import { freeUdpPortPair } from '../scripts/interop/free-ports.ts';

export const name = 'qp-udp-pingpong';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const BYTES = 64;
const LIMIT_US = 10e6;
const CHILD_LIMIT_MS = 30_000;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const refMedian = await options.references.figure('udp-ping-node', 'us_median');
  const refP99 = await options.references.figure('udp-ping-node', 'us_p99');
  const s = await pingPong(false, options.durations);
  const thread = await pingPong(true, options.durations);
  const detail =
    `${s.count} round trips between two processes, each NIC's model inline in its driver thread (socket read ` +
    `through libc); min ${s.min / 1e3 | 0} us, p90 ${(s.p90 / 1e3).toFixed(1)} us; CPU time a round trip ` +
    `${cpuUs(s.cpuNs)} in this process, ${cpuUs(s.echoCpuNs)} in the echo process (every thread, after the ` +
    `warm-up); models in worker threads: ` +
    `median ${(thread.median / 1e3).toFixed(0)} us, p99 ${(thread.p99 / 1e3).toFixed(0)} us ` +
    `(${thread.count} round trips), CPU time a round trip ${cpuUs(thread.cpuNs)} and ${cpuUs(thread.echoCpuNs)}`;
  return [
    benchResult({
      label: '64 B ping-pong, two processes over the UDP cable, median', figure: s.median / 1e3, unit: 'us',
      reference: refMedian, goal: ratioAtMost(2), detail,
    }),
    benchResult({
      label: '64 B ping-pong, two processes over the UDP cable, p99', figure: s.p99 / 1e3, unit: 'us',
      reference: refP99,
    }),
    // Issue 13: the tail within 10x the same run's median (no millisecond stalls).
    benchResult({
      label: '64 B ping-pong, two processes over the UDP cable, p99 against its median', figure: s.p99 / 1e3,
      unit: 'us', reference: { name: 'the same run\'s median', figure: s.median / 1e3, unit: 'us' },
      goal: ratioAtMost(10),
    }),
  ];
}

/** CPU time of a round trip (ns) as `N us`. */
const cpuUs = (ns: number): string => `${(ns / 1e3).toFixed(1)} us`;

/**
 * Round trips (ns) with an echo process, both NICs in worker threads if `thread`, else inline
 * (`thread: false`), and each process's CPU time a round trip (ns).
 */
async function pingPong(
  thread: boolean, durations: BenchOptions['durations'],
): Promise<Summary & { cpuNs: number; echoCpuNs: number }> {
  const [local, remote] = await freePorts();
  const child = spawn(process.execPath, [
    '--import', './scripts/register-ts.mjs', 'bench/helpers/qp-echo-child.ts', String(remote), String(local),
    ...(thread ? ['thread'] : []),
  ], {
    cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'],
  });
  let nic: Nic | undefined;
  try {
    nic = must(Nic.open(`emu:${local}:${remote}`, { thread }), 'Nic.open');
    const lines = lineReader(child);
    const qp = must(Qp.make(nic), 'Qp.make');
    const r = must(Region.alloc(nic, 1 << 16), 'Region.alloc');
    const peer = parseEndpoint(await lines.next('its endpoint'));
    child.stdin!.write(`${formatEndpoint(qp.endpoint)}\n`);
    must(qp.connect(peer), 'connect');
    if (await lines.next('ready') !== 'ready') throw new Error('the echo process did not say ready');
    let trips = 0;
    const exchange = (bytes: number) => {
      trips++;
      qp.receive(r, 4096, BYTES);
      qp.send(r, 0, bytes);
      if (waitOne(qp, 'receive', LIMIT_US) !== bytes) throw new Error('the echo has another length');
      waitOne(qp, 'send', LIMIT_US);
    };
    const trip = () => exchange(BYTES);
    // Warm up here, then a message of 1 byte restarts the echo's count of CPU time: both counts
    // cover the sampled round trips only (the workers' and the compiler's start-up made most of
    // the CPU time a round trip of a 1 s run in worker threads).
    const warmEnd = performance.now() + durations.warmupMs;
    while (performance.now() < warmEnd) trip();
    exchange(1);
    trips = 0;
    const cpuStart = cpuNs();
    const s = summarize(sampleEach(trip, { ...durations, warmupMs: 0 }));
    const cpu = (cpuNs() - cpuStart) / trips;
    // A message of 0 bytes ends the echo process, which then says what CPU time it used.
    qp.receive(r, 4096, BYTES);
    qp.send(r, 0, 0);
    waitOne(qp, 'receive', LIMIT_US);
    const [word, us, messages] = (await lines.next('CPU time')).split(' ');
    if (word !== 'cpu' || !(Number(messages) > 0)) throw new Error('the echo process did not say its CPU time');
    return { ...s, cpuNs: cpu, echoCpuNs: (Number(us) * 1e3) / Number(messages) };
  } finally {
    nic?.close();
    await stop(child);
  }
}

function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what}: ${r.error}`);
  return r.value;
}

/** Two UDP ports free on 127.0.0.1 just now. */
const freePorts = freeUdpPortPair;

/** The child's stdout, a line at a time, each awaited with a bound. */
function lineReader(child: ChildProcess): { next(what: string): Promise<string> } {
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const w = waiting.shift();
    if (w) w(line);
    else queued.push(line);
  });
  return {
    next: (what) => new Promise((resolve, reject) => {
      const q = queued.shift();
      if (q !== undefined) return resolve(q);
      const timer = setTimeout(
        () => reject(new Error(`the echo process gave no ${what} within ${CHILD_LIMIT_MS} ms`)), CHILD_LIMIT_MS,
      );
      waiting.push((line) => { clearTimeout(timer); resolve(line); });
    }),
  };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
