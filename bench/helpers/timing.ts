/**
 * Timing: hrtime-based samples after a warm-up, and their median and percentiles.
 *
 * Two ways to sample. `sampleEach` times every call (for operations of a microsecond or more:
 * HWRM, CMDQ, a round trip through a peer). `sampleBatches` times batches of calls and divides
 * (for operations too short for one timer read each: a post, a poll). Both time consecutive
 * intervals (one timer read per sample, the loop's own cost included) and write into a
 * Float64Array made before the run, so sampling allocates nothing but the clock's reads.
 */

export interface Durations {
  /** Run the operation this long before sampling (JIT, caches, the model's spin state). */
  readonly warmupMs: number;
  /** Sample for this long ... */
  readonly runMs: number;
  /** ... or until this many samples. */
  readonly maxSamples: number;
  /** How long each C reference program measures. */
  readonly referenceSeconds: number;
}

/** Short by default (a few seconds per benchmark on a shared 2-core machine); --quick for a smoke check. */
export function durations(quick: boolean): Durations {
  return quick
    ? { warmupMs: 50, runMs: 300, maxSamples: 50_000, referenceSeconds: 0.2 }
    : { warmupMs: 300, runMs: 2_000, maxSamples: 200_000, referenceSeconds: 1 };
}

const origin = performance.now();

/**
 * Nanoseconds since this module loaded. performance.now() is Node's uv_hrtime in ms as a
 * double (sub-ns resolution at these magnitudes). Every clock read in Node 20 allocates a
 * 16-byte heap number (process.hrtime.bigint() a larger BigInt): zero-GC checks read it once
 * per batch (see gc.ts: gcDuring).
 */
export function nowNs(): number {
  return (performance.now() - origin) * 1e6;
}

/** Times each call of `op`: ns per call, one sample per call. `op` throws to abort the run. */
/**
 * This process's CPU time (user + system, every thread) in ns. On a shared machine a figure in
 * real time also counts the time this process waited for a core; CPU time per operation is the
 * work itself, so the two side by side tell load from cost (an inline model runs in this thread,
 * so its work is in the count too). Allocates (one object per read): read it around runs only.
 */
export function cpuNs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1e3;
}

export function sampleEach(op: () => void, d: Durations): Float64Array {
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) op();
  const samples = new Float64Array(d.maxSamples);
  let count = 0;
  const end = nowNs() + d.runMs * 1e6;
  let last = nowNs();
  while (count < samples.length && last < end) {
    op();
    const t = nowNs();
    samples[count++] = t - last;
    last = t;
  }
  return samples.subarray(0, count);
}

/**
 * Times `op(batch)` calls, each doing `batch` operations: ns per operation, one sample per
 * batch. For operations of tens of nanoseconds, where a timer read per call would dominate.
 */
export function sampleBatches(op: (batch: number) => void, batch: number, d: Durations): Float64Array {
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, not ${batch}`);
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) op(batch);
  const samples = new Float64Array(d.maxSamples);
  let count = 0;
  const end = nowNs() + d.runMs * 1e6;
  let last = nowNs();
  while (count < samples.length && last < end) {
    op(batch);
    const t = nowNs();
    samples[count++] = (t - last) / batch;
    last = t;
  }
  return samples.subarray(0, count);
}

/** Like sampleEach for an operation that completes asynchronously (awaits one promise per call). */
export async function sampleEachAsync(op: () => Promise<void>, d: Durations): Promise<Float64Array> {
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) await op();
  const samples = new Float64Array(d.maxSamples);
  let count = 0;
  const end = nowNs() + d.runMs * 1e6;
  let last = nowNs();
  while (count < samples.length && last < end) {
    await op();
    const t = nowNs();
    samples[count++] = t - last;
    last = t;
  }
  return samples.subarray(0, count);
}

export interface Summary {
  readonly count: number;
  readonly min: number;
  readonly median: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Median and percentiles (nearest rank, as the C references compute them) of samples, in their unit. */
export function summarize(samples: Float64Array): Summary {
  if (samples.length === 0) throw new RangeError('no samples: the run was too short to complete one operation');
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i]!;
  return {
    count: sorted.length,
    min: sorted[0]!,
    median: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    mean: sum / sorted.length,
  };
}

/** The p-th percentile (0..100) of ascending samples, nearest rank. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile ${p} is not in 0..100`);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}
