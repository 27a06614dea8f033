/**
 * Garbage collections during 10^6 steady-state data-path operations (issue 13 goal: 0, counted
 * in every thread that runs the data path). One operation is one call of the hot path:
 * Qp.send, Qp.receive, or Qp.waitBytes taking a completion (allocation-free), in batches of
 * 256 messages (4 x 256 operations) between two queue pairs of one software NIC; the run is
 * long enough for 10^6 operations. Two NICs: the default (the model inline in this thread, so
 * the collections counted here are the model's too), and one whose model runs in a worker
 * thread, whose collections the worker counts itself (model.collections) and are added to the
 * driver's. Each thread's count starts from an empty young generation (a full collection just
 * before: gcDuring's in the driver's thread, model.collectGarbage's scavenge in the worker). The reference
 * is the same loop taking completions with Qp.wait, which returns a Result object per
 * completion: it shows that an allocation per operation would be seen.
 */
import { gcDuring, type GcRun } from './helpers/gc.ts';
import { atMost, benchResult } from './helpers/result.ts';
import { openBenchPair, type BenchPair } from './helpers/qp-setup.ts';
import { nowNs, type Durations } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/device.ts';

export const name = 'qp-zero-gc';

const MESSAGES = 256;
const OPS_PER_BATCH = 4 * MESSAGES;
const TARGET_OPS = 1_000_000;
const LIMIT_US = 10e6;
const MAX_RUN_MS = 20_000;
/** Long enough for a worker's event loop to deliver its last collection's entry. */
const WORKER_SETTLE_MS = 100;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const inline = await measure(false, options);
  const thread = await measure(true, options);
  const reference = {
    name: `same loop with Qp.wait (a Result per completion), model inline: ${describe(inline.dirty)}`,
    figure: inline.dirty.count, unit: 'GCs',
  };
  return [
    benchResult({
      label: 'garbage collections during 10^6 data-path operations, model inline (one thread)',
      figure: inline.clean.count, unit: 'GCs', reference, goal: atMost(0), detail: detail(inline),
    }),
    benchResult({
      label: 'garbage collections during 10^6 data-path operations, model in a worker (driver + worker)',
      figure: thread.clean.count + thread.worker, unit: 'GCs', reference, goal: atMost(0),
      detail: `${detail(thread)}; driver ${thread.clean.count}, worker ${thread.worker}`,
    }),
  ];
}

interface Measured { clean: GcRun; dirty: GcRun; worker: number; ops: number; runMs: number }

async function measure(thread: boolean, options: BenchOptions): Promise<Measured> {
  const p = openBenchPair({ thread }, 1 << 16);
  try {
    const model = (nicInternals(p.nic).device as EmuDevice).emu.model;
    const steady = (batch: number) => { for (let i = 0; i < batch; i++) messages(p, false); };
    const allocating = (batch: number) => { for (let i = 0; i < batch; i++) messages(p, true); };
    const d = runLongEnough(p, options.durations);
    // The worker counts its own collections; the first call starts the count. Its young
    // generation starts empty, as gcDuring empties the driver's.
    if (thread) model.collectGarbage();
    const before = thread ? await settledCollections(model) : 0;
    const clean = await gcDuring(steady, 1, d);
    const worker = thread ? (await settledCollections(model)) - before : 0;
    const dirty = await gcDuring(allocating, 1, { ...d, runMs: Math.min(d.runMs, options.durations.runMs) });
    return { clean, dirty, worker, ops: clean.operations * OPS_PER_BATCH, runMs: d.runMs };
  } finally {
    p.close();
  }
}

async function settledCollections(model: { collections(): number }): Promise<number> {
  model.collections();
  await new Promise((resolve) => setTimeout(resolve, WORKER_SETTLE_MS));
  return model.collections();
}

function detail(m: Measured): string {
  const short = m.ops < TARGET_OPS ? ' (short of 10^6: the machine was slower than the trial said)' : '';
  return `${m.ops.toLocaleString('en-US')} operations (send, receive, waitBytes) in ${(m.runMs / 1e3).toFixed(1)} ` +
    `s${short}; `
    + `heap growth ${m.clean.heapGrowthBytes} B (${(m.clean.heapGrowthBytes / m.ops).toFixed(3)} B an operation)`;
}

/** MESSAGES messages a -> b: post every receive and send, then take every completion. */
function messages(p: BenchPair, withResults: boolean): void {
  const { a, b, ra, rb } = p;
  for (let i = 0; i < MESSAGES; i++) b.receive(rb, 0, 64);
  for (let i = 0; i < MESSAGES; i++) a.send(ra, 0, 64);
  for (let i = 0; i < MESSAGES; i++) {
    if (withResults) {
      if (b.wait('receive', LIMIT_US)?.ok !== true || a.wait('send', LIMIT_US)?.ok !== true)
        throw new Error('a message failed');
    } else if (b.waitBytes('receive', LIMIT_US) !== 64 || a.waitBytes('send', LIMIT_US) !== 64) {
      throw new Error(`a message failed: ${a.lastError || b.lastError}`);
    }
  }
}

/** Durations whose run covers TARGET_OPS operations at the rate a trial after a warm-up shows (x 1.3, at most 20 s). */
function runLongEnough(p: BenchPair, d: Durations): Durations {
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) messages(p, false);
  const trials = 32;
  const t0 = nowNs();
  for (let i = 0; i < trials; i++) messages(p, false);
  const msPerBatch = (nowNs() - t0) / 1e6 / trials;
  const runMs = Math.min(MAX_RUN_MS, Math.max(d.runMs, (TARGET_OPS / OPS_PER_BATCH) * msPerBatch * 1.3));
  return { ...d, runMs };
}

function describe(g: GcRun): string {
  return `${g.count} in ${(g.operations * OPS_PER_BATCH).toLocaleString('en-US')} operations`;
}
