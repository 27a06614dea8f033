/**
 * `rig-bnxt perf --histogram`: the latency samples in log-scaled buckets (each bucket twice as
 * wide as the one before, from 0.25 us), with counts, a bar, and percentiles. Samples are
 * perftest's (each divided by the round-trip factor), so the figures match the table's.
 */

export interface Histogram {
  /** Bucket i holds samples in [lowUs, highUs). */
  readonly buckets: readonly { readonly lowUs: number; readonly highUs: number; readonly count: number }[];
  readonly percentiles: Readonly<Record<'50' | '90' | '99' | '99.9', number>>;
  readonly count: number;
}

const FIRST_EDGE_US = 0.25;

export function histogram(samplesUs: Float64Array, roundTrip: 1 | 2): Histogram {
  const sorted = Float64Array.from(samplesUs, (s) => s / roundTrip).sort();
  const n = sorted.length;
  const counts = new Map<number, number>();
  for (const v of sorted) {
    const i = v < FIRST_EDGE_US ? 0 : Math.floor(Math.log2(v / FIRST_EDGE_US)) + 1;
    counts.set(i, (counts.get(i) ?? 0) + 1);
  }
  const top = n === 0 ? 0 : Math.max(...counts.keys());
  const buckets = [];
  for (let i = 0; i <= top; i++) {
    const lowUs = i === 0 ? 0 : FIRST_EDGE_US * 2 ** (i - 1);
    buckets.push({ lowUs, highUs: FIRST_EDGE_US * 2 ** i, count: counts.get(i) ?? 0 });
  }
  // Trim empty buckets below the first sample.
  while (buckets.length > 1 && buckets[0]!.count === 0) buckets.shift();
  const at = (p: number) => (n === 0 ? 0 : sorted[Math.min(n - 1, Math.ceil(n * p) - 1)]!);
  return { buckets, percentiles: { '50': at(0.5), '90': at(0.9), '99': at(0.99), '99.9': at(0.999) }, count: n };
}

const BAR = 40;

export function histogramLines(h: Histogram): string[] {
  const max = Math.max(1, ...h.buckets.map((b) => b.count));
  const lines = [' latency histogram [usec]   count'];
  for (const b of h.buckets) {
    const bar = '#'.repeat(Math.round((b.count / max) * BAR));
    lines.push(
      ` ${formatUs(b.lowUs).padStart(9)} - ${formatUs(b.highUs).padEnd(9)} ${String(b.count).padStart(8)} ${bar}`,
    );
  }
  lines.push(
    ` percentiles [usec]: 50% ${formatUs(h.percentiles['50'])}  90% ${formatUs(h.percentiles['90'])}  99% ` +
      `${formatUs(h.percentiles['99'])}  99.9% ${formatUs(h.percentiles['99.9'])}`,
  );
  return lines;
}

function formatUs(us: number): string {
  return us < 10 ? us.toFixed(2) : us < 1000 ? us.toFixed(1) : us.toFixed(0);
}
