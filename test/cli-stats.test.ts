import t from 'tap';
import {
  latencyStats, latencyDurationStats, bandwidthStats, bandwidthStatsWithoutPeak, roundTripFactor, MIB,
  PEAK_MAX_ITERATIONS,
} from '../scripts/cli/stats.ts';

// Expected values are worked out by hand from perftest's print_report_lat / print_report_bw rules.
const close = (t: Tap, got: number, want: number, what: string) =>
  t.ok(Math.abs(got - want) < 1e-9, `${what}: ${got} ~ ${want}`);
type Tap = { ok(c: boolean, m: string): void };

const range = (from: number, to: number) => Float64Array.from({ length: to - from + 1 }, (_, i) => from + i);

t.test('1..100 us of send round trips: the two largest dropped, halved as perftest reports send latency', async (t) => {
  const s = latencyStats(range(1, 100), 2);
  // n = 98 kept samples 1..98; t_max is sorted[98] = 99; median of even n = (49 + 50) / 2.
  close(t, s.tMinUs, 0.5, 't_min');
  close(t, s.tMaxUs, 49.5, 't_max');
  close(t, s.tTypicalUs, 24.75, 't_typical');
  close(t, s.tAvgUs, 24.75, 't_avg'); // (98 * 99 / 2) / 98 / 2
  close(t, s.tStdevUs, Math.sqrt((98 * 98 - 1) / 12) / 2, 't_stdev'); // population stdev of 1..98, halved
  // ceil(98 * 0.99) = 98 and ceil(98 * 0.999) = 98: both index sorted[98] = 99.
  close(t, s.t99Us, 49.5, '99%');
  close(t, s.t999Us, 49.5, '99.9%');
});

t.test('1..1000 us shuffled, read latency (whole round trip)', async (t) => {
  const samples = range(1, 1000);
  // A fixed permutation so the function has to sort.
  for (let i = samples.length - 1; i > 0; i--) {
    const j = (i * 7919) % (i + 1);
    [samples[i], samples[j]] = [samples[j]!, samples[i]!];
  }
  const before = Float64Array.from(samples);
  const s = latencyStats(samples, 1);
  t.same([...samples], [...before], 'the input is left as it was');
  close(t, s.tMinUs, 1, 't_min');
  close(t, s.tMaxUs, 999, 't_max');
  close(t, s.tTypicalUs, 499.5, 't_typical');
  close(t, s.tAvgUs, 499.5, 't_avg');
  close(t, s.tStdevUs, Math.sqrt((998 * 998 - 1) / 12), 't_stdev');
  close(t, s.t99Us, 990, '99%: ceil(998 * 0.99) = 989 -> sorted[989] = 990');
  close(t, s.t999Us, 999, '99.9%: ceil(998 * 0.999) = 998 -> sorted[998] = 999');
});

t.test('1..200: the 99% index rounds up past the exact position', async (t) => {
  const s = latencyStats(range(1, 200), 1);
  close(t, s.t99Us, 198, 'ceil(198 * 0.99) = 197 -> 198');
  close(t, s.t999Us, 199, 'ceil(198 * 0.999) = 198 -> 199');
});

t.test('an odd number of kept samples takes the middle one as t_typical', async (t) => {
  const s = latencyStats(Float64Array.from([7, 3, 1, 6, 2, 5, 4]), 1);
  // Sorted 1..7, keep n = 5: 1..5.
  close(t, s.tMinUs, 1, 't_min');
  close(t, s.tMaxUs, 6, 't_max');
  close(t, s.tTypicalUs, 3, 't_typical');
  close(t, s.tAvgUs, 3, 't_avg');
  close(t, s.tStdevUs, Math.SQRT2, 't_stdev: sqrt((4 + 1 + 0 + 1 + 4) / 5)');
  close(t, s.t99Us, 6, '99%: ceil(4.95) = 5');
  close(t, s.t999Us, 6, '99.9%: ceil(4.995) = 5');
});

t.test('too few samples is a programming error, not a wrong number', async (t) => {
  t.throws(() => latencyStats(Float64Array.from([1, 2]), 2), RangeError);
});

t.test('send is halved, read is not', async (t) => {
  t.equal(roundTripFactor('send'), 2);
  t.equal(roundTripFactor('read'), 1);
});

t.test('-D latency: average over the period and transactions per second', async (t) => {
  const s = latencyDurationStats(1000, 2000, 2);
  close(t, s.tAvgUs, 1, 't_avg = 2000 us / 2 / 1000');
  close(t, s.tpsAverage, 500000, 'tps = 1000 / 0.002 s');
});

t.test('bandwidth: average over first post to last completion, peak over the best window', async (t) => {
  const posted = Float64Array.from([0, 1, 2, 3]);
  const completed = Float64Array.from([10, 11, 12, 20]);
  const s = bandwidthStats(65536, posted, completed, 1);
  // 4 * 64 KiB in 20 us = 13107.2 bytes/us = 12500 MiB/s.
  close(t, s.bwAverageMiBps, 12500, 'BW average');
  close(t, s.msgRateMpps, 0.2, '4 messages in 20 us');
  // Best window: posts 0..2 completed at 12 -> 4 us per message -> 64 KiB / 4 us = 15625 MiB/s.
  close(t, s.bwPeakMiBps, 15625, 'BW peak');
});

t.test('bandwidth with CQ moderation reads only the signalled completions', async (t) => {
  const posted = Float64Array.from([0, 1, 2, 3]);
  const s2 = bandwidthStats(65536, posted, Float64Array.from([NaN, 11, NaN, 20]), 2);
  // Signalled j = 1, 3. Windows: (0,1) 11/2, (0,3) 20/4 = 5, (1,1) 10, (1,3) 19/3, (2,3) 9, (3,3) 17 -> 5 us.
  close(t, s2.bwPeakMiBps, 12500, 'peak from 5 us per message');
  // cq_mod 3 with 4 messages: j = 2 on the grid, and j = 3 because the last one is always signalled.
  const s3 = bandwidthStats(65536, posted, Float64Array.from([NaN, NaN, 30, 32]), 3);
  // Windows: (0,2) 30/3 = 10, (0,3) 32/4 = 8, (1,2) 14.5, (1,3) 31/3, (2,2) 28, (2,3) 15, (3,3) 29 -> 8 us.
  close(t, s3.bwPeakMiBps, 65536 * 1e6 / (8 * MIB), 'peak from 8 us per message');
  close(t, s3.bwAverageMiBps, 4 * 65536 * 1e6 / (32 * MIB), 'average over 32 us');
});

t.test('bandwidth without a peak prints the peak as 0', async (t) => {
  const s = bandwidthStatsWithoutPeak(65536, 1000, 5000);
  t.equal(s.bwPeakMiBps, 0);
  close(t, s.bwAverageMiBps, 12500, '65536000 bytes in 5 ms');
  close(t, s.msgRateMpps, 0.2, '1000 messages in 5000 us');
  t.equal(PEAK_MAX_ITERATIONS, 20000, "perftest's -N note: peak up to iters=20000");
});

t.test('bandwidth rejects mismatched timestamp arrays', async (t) => {
  t.throws(() => bandwidthStats(2, new Float64Array(3), new Float64Array(2)), RangeError);
  t.throws(() => bandwidthStats(2, new Float64Array(3), new Float64Array(3), 0), RangeError);
});
