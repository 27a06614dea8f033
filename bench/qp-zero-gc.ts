/**
 * Garbage collections during 10^6 steady-state data-path operations (issue 13 goal: 0, counted
 * in every thread that runs the data path). One operation is one call of the hot path:
 * Qp.send, Qp.receive, or Qp.waitBytes taking a completion (allocation-free), in batches of
 * 256 messages (4 x 256 operations) between two queue pairs of one software NIC; each run is
 * 10^6 operations (a count, not a time: the same work at any load), at most MAX_RUN_MS. Two
 * NICs: the default (the model inline in this thread, so the collections counted here are the
 * model's too), and one whose model runs in a worker thread, whose collections the worker
 * counts itself (model.collections) and are added to the driver's. Each thread's count starts
 * from an empty young generation (a full collection just before: gcDuring's in the driver's
 * thread, model.collectGarbage's scavenge in the worker).
 *
 * The worker's count also starts after V8 has shrunk the new thread's heap: a thread's start-up
 * arms V8's memory reducer, which collects two or three times once, 8-50 s after the start at
 * loads of 6-14 (model.heapReductions, drivers/emu/host/collections.ts); at a load of 10 those
 * collections fell inside one run in three. The worker's NIC is therefore opened first, in the
 * first round, and kept for the rounds after (as the driver's thread is); its reductions happen
 * while the inline NIC is measured, and the first round's worker run waits for the rest (at
 * most REDUCTION_WAIT_MS after its start; the detail says when they came, or that they never
 * did).
 * They are V8's one-time housekeeping after a start, not the data path's: a program sees them
 * once, in the seconds after it opens a NIC whose model runs in a worker. No V8 flag is set.
 *
 * The worker's young generation's growth during the run (model.youngHeapUsed, read before and
 * after) is what it allocated there when it collected nothing: the detail gives it per
 * operation beside the driver's heap growth. Young only: a scavenge collects it, while the old
 * space grows now and then by the optimizing compiler's finished jobs (100-200 KB at a time).
 *
 * The reference is the same loop taking completions with Qp.wait, which returns a Result
 * object per completion: it shows that an allocation per operation would be seen.
 */
import { gcDuring, type GcRun } from './helpers/gc.ts';
import { atMost, benchResult } from './helpers/result.ts';
import { openBenchPair, type BenchPair } from './helpers/qp-setup.ts';
import { nowNs } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/host/device.ts';

export const name = 'qp-zero-gc';

const MESSAGES = 256;
const OPS_PER_BATCH = 4 * MESSAGES;
const TARGET_OPS = 1_000_000;
/** Calls of `messages` in a run: 10^6 operations. */
const RUN_CALLS = Math.ceil(TARGET_OPS / OPS_PER_BATCH);
/** Calls of `messages` before a run, at least (and the durations' warm-up time). */
const WARMUP_CALLS = 128;
/**
 * A worker warms up in chunks of WARMUP_CALLS calls until one passes without a collection in
 * it and allocating at most SETTLED_BYTES_PER_OP, at most this many: V8's heap reductions also
 * flush compiled code, and at a load of 16 the worker was still compiling its data path again
 * (five scavenges in the warm-up, one more in the run) after the single warm-up that came after
 * them. The worker's code that runs once or twice a batch of 256 messages (a run's end, a
 * sleep) reaches V8's optimizing tier only after some 10^6 operations, and allocates until then
 * (0.3-0.6 B an operation: every double a baseline tier touches is a heap number); the
 * detail says how many chunks that took. A data path that allocated per operation would never
 * settle: the run then goes ahead after the last chunk and shows it.
 */
const SETTLE_CHUNKS = 32;
/** A settled warm-up chunk's worker allocation, at most (steady state measured 0.02-0.1). */
const SETTLED_BYTES_PER_OP = 0.1;
const LIMIT_US = 10e6;
const MAX_RUN_MS = 20_000;
/** Long enough for a worker's event loop to deliver its last collection's entry. */
const WORKER_SETTLE_MS = 100;
/**
 * How long after the worker's start its run waits for V8's heap reductions: the reducer looks
 * every 8 s, and at a load of 10 its first collection came at the second to fourth look (16-33 s).
 */
const REDUCTION_WAIT_MS = 60_000;
/** After the second reduction, how long a third may take to come (0.5 s apart, + V8's 0.1 s slack). */
const THIRD_REDUCTION_MS = 1_500;

/** The worker's NIC, opened in the first round and kept (closed when the process exits). */
let workerNic: { pair: BenchPair; started: number } | undefined;

function openWorkerNic(): { pair: BenchPair; started: number } {
  if (workerNic) return workerNic;
  const pair = openBenchPair({ thread: true }, 1 << 16);
  workerNic = { pair, started: nowNs() };
  modelOf(pair).heapReductions(); // starts the worker's count of collections and reductions
  process.once('exit', () => pair.close());
  return workerNic;
}

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const worker = openWorkerNic();
  const inlinePair = openBenchPair({ thread: false }, 1 << 16);
  let inline: Measured;
  try {
    inline = await measure(inlinePair, undefined, options);
  } finally {
    inlinePair.close();
  }
  const reduced = await heapReduced(modelOf(worker.pair), worker.started);
  const thread = await measure(worker.pair, reduced, options);
  return results(inline, thread);
}

function results(inline: Measured, thread: Measured): BenchResult[] {
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
      detail: `${detail(thread)}; driver ${thread.clean.count}, worker ${thread.worker}; ` +
        `worker young generation growth ${thread.workerGrowth} B ` +
        `(${(thread.workerGrowth / thread.ops).toFixed(3)} B an ` +
        `operation${thread.worker > 0 ? ', less what its collection freed' : ''})`,
    }),
  ];
}

type Model = EmuDevice['emu']['model'];

function modelOf(p: BenchPair): Model {
  return (nicInternals(p.nic).device as EmuDevice).emu.model;
}

/** The worker's heap reductions (see the top): how many, and when the last came, in s after the start. */
interface Reduced { count: number; atS: number; waitedS: number }

/**
 * Waits (asleep: the worker has the cores) until the worker's heap reductions are over: a
 * second one and THIRD_REDUCTION_MS after it, or a third, or REDUCTION_WAIT_MS after `started`.
 */
async function heapReduced(model: Model, started: number): Promise<Reduced> {
  const waitStart = nowNs();
  let count = model.heapReductions();
  let at = count > 0 ? waitStart : 0;
  for (;;) {
    const now = nowNs();
    if (count >= 3 || (count === 2 && now - at >= THIRD_REDUCTION_MS * 1e6)) break;
    if (now - started >= REDUCTION_WAIT_MS * 1e6) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
    const seen = model.heapReductions();
    if (seen !== count) {
      count = seen;
      at = nowNs();
    }
  }
  return { count, atS: at === 0 ? 0 : (at - started) / 1e9, waitedS: (nowNs() - waitStart) / 1e9 };
}

interface Measured {
  clean: GcRun; dirty: GcRun; worker: number; ops: number; runMs: number; reduced: Reduced | undefined;
  /** The worker's young generation's growth during the run, in bytes (its allocation, when it collected none). */
  workerGrowth: number;
  /** Warm-up chunks the worker collected or allocated in before one passed without (settle). */
  settleChunks: number;
  /** The last warm-up chunk's worker allocation, B an operation (NaN: it collected). */
  settleBytesPerOp: number;
}

/** The zero-GC run and its reference on `p`; `reduced` for a worker's NIC. */
async function measure(p: BenchPair, reduced: Reduced | undefined, options: BenchOptions): Promise<Measured> {
  const thread = reduced !== undefined;
  const model = modelOf(p);
  const steady = (batch: number) => { for (let i = 0; i < batch; i++) messages(p, false); };
  const allocating = (batch: number) => { for (let i = 0; i < batch; i++) messages(p, true); };
  const d = { ...options.durations, runMs: MAX_RUN_MS };
  // Warm up by count too: on a loaded machine the warm-up's time made too few calls, and the
  // compiler's late work (optimized code, feedback) grew the counted heap by MBs.
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  for (let i = 0; i < WARMUP_CALLS || nowNs() < warmEnd; i++) messages(p, false);
  // The worker counts its own collections (counting since run() asked for its reductions).
  // Its young generation starts empty, as gcDuring empties the driver's.
  let settleChunks = 0;
  let settleBytesPerOp = NaN;
  if (thread) {
    for (; settleChunks < SETTLE_CHUNKS; settleChunks++) {
      const seen = await settledCollections(model);
      const heap = model.youngHeapUsed();
      for (let i = 0; i < WARMUP_CALLS; i++) messages(p, false);
      settleBytesPerOp = (model.youngHeapUsed() - heap) / (WARMUP_CALLS * OPS_PER_BATCH);
      if (await settledCollections(model) !== seen) settleBytesPerOp = NaN;
      else if (settleBytesPerOp <= SETTLED_BYTES_PER_OP) break;
    }
    model.collectGarbage();
  }
  const before = thread ? await settledCollections(model) : 0;
  // The worker's heap, read just before and after the run (each reading is a control: a few
  // hundred bytes of its own, against the run's ~10^6 operations).
  const heapBefore = thread ? model.youngHeapUsed() : 0;
  const t0 = nowNs();
  const clean = await gcDuring(steady, 1, d, RUN_CALLS);
  const runMs = (nowNs() - t0) / 1e6;
  const workerGrowth = thread ? model.youngHeapUsed() - heapBefore : 0;
  const worker = thread ? (await settledCollections(model)) - before : 0;
  const dirty = await gcDuring(allocating, 1, { ...d, runMs: Math.min(runMs, options.durations.runMs) });
  return {
    clean, dirty, worker, workerGrowth, ops: clean.operations * OPS_PER_BATCH, runMs, reduced, settleChunks,
    settleBytesPerOp,
  };
}

async function settledCollections(model: { collections(): number }): Promise<number> {
  model.collections();
  await new Promise((resolve) => setTimeout(resolve, WORKER_SETTLE_MS));
  return model.collections();
}

function detail(m: Measured): string {
  const short = m.ops < TARGET_OPS ? ` (short of 10^6: the run reached its ${MAX_RUN_MS / 1e3} s bound)` : '';
  const r = m.reduced;
  const reductions = r === undefined ? ''
    : r.count === 0 ? `; no heap reduction in the worker within ${REDUCTION_WAIT_MS / 1e3} s of its start`
    : `; the worker's ${r.count} heap reductions (V8's memory reducer) before the count, the last ` +
      `${r.atS.toFixed(1)} s after its start (waited ${r.waitedS.toFixed(1)} s); warm-up chunks of ` +
      `${WARMUP_CALLS * OPS_PER_BATCH} operations in which the worker collected or allocated more than ` +
      `${SETTLED_BYTES_PER_OP} B an operation before one that did neither: ${m.settleChunks} (the last: ` +
      `${Number.isNaN(m.settleBytesPerOp) ? 'a collection' : `${m.settleBytesPerOp.toFixed(3)} B an operation`})`;
  return `${m.ops.toLocaleString('en-US')} operations (send, receive, waitBytes) in ${(m.runMs / 1e3).toFixed(1)} ` +
    `s${short}; `
    + `heap growth ${m.clean.heapGrowthBytes} B (${(m.clean.heapGrowthBytes / m.ops).toFixed(3)} B an operation)`
    + reductions;
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

function describe(g: GcRun): string {
  return `${g.count} in ${(g.operations * OPS_PER_BATCH).toLocaleString('en-US')} operations`;
}
