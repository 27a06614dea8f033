/**
 * What Qp.waitAsync costs beside Qp.wait (issue 14 item 5): the same 64-byte send/receive round
 * trip between two queue pairs of one software NIC, each side's receive taken with waitAsync
 * (the event loop runs between looks) and, as the reference measured in the same run, with the
 * busy-poll wait. The difference is the price of letting the event loop run. The two are
 * measured in alternating turns, so the machine's load changes land on both, and each pair of
 * turns gives its own ratio. Two NICs: the model inline (as `emu` opens it) and in a worker.
 */
import { loadavg } from 'node:os';
import { benchResult } from './helpers/result.ts';
import { openBenchPair } from './helpers/qp-setup.ts';
import { sampleEach, sampleEachAsync, summarize, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';
import type { Qp, Region } from '../lib/index.ts';

export const name = 'qp-wait-async';

const BYTES = 64;
const LIMIT_US = 10e6;
/** Turns of each kind, interleaved. */
const SLICES = 10;

function concat(parts: readonly Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  // The NIC as `emu` opens it (the model inline: a completion usually lands during the first
  // spin, which both waits share), then one whose model runs in a worker thread (a wait often
  // outlasts the spin, and waitAsync then pays its turns of the event loop).
  const inline = await measure(false, options);
  const thread = await measure(true, options);
  return [row('model inline (loop cable)', inline), row('model in a worker thread', thread)];
}

interface Measured { busy: Summary; asyncTrips: Summary; ratio: number }

function row(mode: string, m: Measured): BenchResult {
  const { busy, asyncTrips } = m;
  return benchResult({
    label: `64 B round trip, receives taken with waitAsync, median, ${mode}`,
    figure: asyncTrips.median / 1e3,
    unit: 'us',
    reference: { name: 'the same round trip with Qp.wait (busy poll), median', figure: busy.median / 1e3, unit: 'us' },
    detail: `${asyncTrips.count} round trips with waitAsync (p90 ${us(asyncTrips.p90)}, p99 ${us(asyncTrips.p99)}), ` +
      `${busy.count} with wait (p90 ${us(busy.p90)}, p99 ${us(busy.p99)}), interleaved in ${SLICES} turns each; ` +
      `median of the ${SLICES} turns' own waitAsync/wait ratios ${m.ratio.toFixed(2)}x; ${mode}; ` +
      `load average ${loadavg()[0]!.toFixed(1)} at the end`,
  });
}

async function measure(thread: boolean, options: BenchOptions): Promise<Measured> {
  const p = openBenchPair({ thread }, 1 << 16);
  try {
    const { a, b, ra, rb } = p;
    a.receive(ra, 4096, BYTES);
    b.receive(rb, 4096, BYTES);
    // Interleaved: SLICES turns of each, alternating which goes first, so a change in the
    // machine's load during the run lands on both alike; each turn pair gives its own ratio.
    const d = options.durations;
    const slice = { ...d, warmupMs: 0, runMs: d.runMs / SLICES, maxSamples: Math.ceil(d.maxSamples / SLICES) };
    const busyParts: Float64Array[] = [];
    const asyncParts: Float64Array[] = [];
    sampleEach(() => tripWait(a, b, ra, rb), { ...slice, warmupMs: d.warmupMs, runMs: 0 });
    await sampleEachAsync(() => tripWaitAsync(a, b, ra, rb), { ...slice, warmupMs: d.warmupMs, runMs: 0 });
    for (let i = 0; i < SLICES; i++) {
      if (i % 2 === 0) busyParts.push(sampleEach(() => tripWait(a, b, ra, rb), slice));
      asyncParts.push(await sampleEachAsync(() => tripWaitAsync(a, b, ra, rb), slice));
      if (i % 2 === 1) busyParts.push(sampleEach(() => tripWait(a, b, ra, rb), slice));
    }
    const ratios = busyParts.map((part, i) => summarize(asyncParts[i]!).median / summarize(part).median);
    ratios.sort((x, y) => x - y);
    return {
      busy: summarize(concat(busyParts)), asyncTrips: summarize(concat(asyncParts)),
      ratio: ratios[Math.floor(ratios.length / 2)]!,
    };
  } finally {
    p.close();
  }
}

function check(r: { ok: boolean } | undefined, what: string): void {
  if (r === undefined || !r.ok) throw new Error(`${what}: ${r === undefined ? 'no completion' : 'failed'}`);
}

function tripWait(a: Qp, b: Qp, ra: Region, rb: Region): void {
  a.send(ra, 0, BYTES);
  check(b.wait('receive', LIMIT_US), 'b receive');
  b.receive(rb, 4096, BYTES);
  b.send(rb, 0, BYTES);
  check(a.wait('receive', LIMIT_US), 'a receive');
  a.receive(ra, 4096, BYTES);
  check(a.wait('send', LIMIT_US), 'a send');
  check(b.wait('send', LIMIT_US), 'b send');
}

async function tripWaitAsync(a: Qp, b: Qp, ra: Region, rb: Region): Promise<void> {
  a.send(ra, 0, BYTES);
  check(await b.waitAsync('receive', LIMIT_US), 'b receive');
  b.receive(rb, 4096, BYTES);
  b.send(rb, 0, BYTES);
  check(await a.waitAsync('receive', LIMIT_US), 'a receive');
  a.receive(ra, 4096, BYTES);
  check(await a.waitAsync('send', LIMIT_US), 'a send');
  check(await b.waitAsync('send', LIMIT_US), 'b send');
}

const us = (ns: number) => `${(ns / 1e3).toFixed(1)} us`;
