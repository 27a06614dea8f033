/**
 * perftest's statistics, computed the way perftest computes them (src/perftest_parameters.c:
 * print_report_lat, print_report_lat_duration, print_report_bw), from times in microseconds
 * instead of CPU cycles.
 */

/** Binary megabyte: perftest divides bytes/s by 0x100000 and labels the column MiB/sec. */
export const MIB = 0x100000;

/** perftest drops the two largest latency samples before every statistic (LAT_MEASURE_TAIL). */
export const LATENCY_MEASURE_TAIL = 2;

/** perftest stops measuring the peak above this many iterations (its -N note: "peak up to iters=20000"). */
export const PEAK_MAX_ITERATIONS = 20000;

export interface LatencyStats {
  readonly tMinUs: number;
  readonly tMaxUs: number;
  /** The median, which perftest prints as t_typical. */
  readonly tTypicalUs: number;
  readonly tAvgUs: number;
  readonly tStdevUs: number;
  readonly t99Us: number;
  readonly t999Us: number;
}

/**
 * perftest reports half the round trip for ping-pong tests (send, write), where one sample is a
 * message there and one back, and the whole sample for RDMA read, whose sample is one request and
 * its response (rtt_factor in print_report_lat).
 */
export function roundTripFactor(verb: 'send' | 'read'): 1 | 2 {
  return verb === 'read' ? 1 : 2;
}

/**
 * Latency statistics from per-iteration times in microseconds. perftest's samples are the
 * iters - 1 differences between successive post timestamps; give this function whatever samples
 * the run took, one per iteration. Its rules, kept here:
 * - sort ascending, then forget the 2 largest samples: min, median, average and stdev are over
 *   the remaining n = count - 2;
 * - t_max is sample[n] after sorting, i.e. the largest sample kept in the array (the second
 *   largest of all);
 * - median: sample[n/2] when n is odd, the mean of sample[n/2 - 1] and sample[n/2] when even;
 * - percentile p: sample[ceil(n * p)] (an index into the sorted array, which may reach sample[n]);
 * - every figure is divided by roundTripFactor.
 * One deliberate difference: perftest accumulates each squared deviation in an `int`, which
 * truncates sub-microsecond deviations to zero; this is the plain population standard
 * deviation of the same n samples.
 * The input is not modified.
 */
export function latencyStats(samplesUs: Float64Array, roundTrip: 1 | 2): LatencyStats {
  if (samplesUs.length < LATENCY_MEASURE_TAIL + 1) {
    throw new RangeError(`latencyStats needs at least ${LATENCY_MEASURE_TAIL + 1} samples, got ${samplesUs.length}`);
  }
  const sorted = Float64Array.from(samplesUs).sort();
  const n = sorted.length - LATENCY_MEASURE_TAIL;

  const median = n % 2 === 0 ? (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2 : sorted[(n - 1) / 2]!;

  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]! / roundTrip;
  const average = sum / n;

  let squares = 0;
  for (let i = 0; i < n; i++) {
    const deviation = average - sorted[i]! / roundTrip;
    squares += deviation * deviation;
  }

  // Same double arithmetic as C's ceil(measure_cnt * 0.99), so the index matches perftest's.
  const index99 = Math.ceil(n * 0.99);
  const index999 = Math.ceil(n * 0.999);

  return {
    tMinUs: sorted[0]! / roundTrip,
    tMaxUs: sorted[n]! / roundTrip,
    tTypicalUs: median / roundTrip,
    tAvgUs: average,
    tStdevUs: Math.sqrt(squares / n),
    t99Us: sorted[index99]! / roundTrip,
    t999Us: sorted[index999]! / roundTrip,
  };
}

export interface LatencyDurationStats {
  readonly tAvgUs: number;
  /** Transactions per second (perftest's "tps average"). */
  readonly tpsAverage: number;
}

/** perftest's -D latency report: one average over the sampled period (print_report_lat_duration). */
export function latencyDurationStats(iterations: number, elapsedUs: number, roundTrip: 1 | 2): LatencyDurationStats {
  return {
    tAvgUs: elapsedUs / roundTrip / iterations,
    tpsAverage: iterations / (elapsedUs / 1e6),
  };
}

export interface BandwidthStats {
  /** 0 when the peak was not measured, as perftest prints it. */
  readonly bwPeakMiBps: number;
  readonly bwAverageMiBps: number;
  readonly msgRateMpps: number;
}

/**
 * Bandwidth from per-message timestamps in microseconds, as print_report_bw does:
 * - postedUs[i]: when message i was posted;
 * - completedUs[j]: when the completion covering message j was seen. With CQ moderation only
 *   every cqModeration-th message (j = cqModeration-1, 2*cqModeration-1, ...) and the last one
 *   are signalled, and only those entries are read.
 * Average: all bytes over completedUs[last] - postedUs[0]. Peak: the best per-message time over
 * every window from a post i to a later signalled completion j, (completed[j] - posted[i]) /
 * (j - i + 1). The peak costs n^2 / (2 cqModeration) steps; perftest skips it above
 * PEAK_MAX_ITERATIONS, and so should the caller (use bandwidthStatsWithoutPeak).
 */
export function bandwidthStats(
  sizeBytes: number, postedUs: Float64Array, completedUs: Float64Array, cqModeration = 1,
): BandwidthStats {
  const n = postedUs.length;
  if (n === 0 || completedUs.length !== n) {
    throw new RangeError(
      `bandwidthStats needs equal, non-empty posted/completed arrays (got ${n} and ${completedUs.length})`,
    );
  }
  if (!Number.isInteger(cqModeration) || cqModeration < 1)
    throw new RangeError(`cqModeration must be a positive integer, got ${cqModeration}`);

  let bestPerMessageUs = Infinity;
  for (let i = 0; i < n; i++) {
    for (let j = roundUp(i + 1, cqModeration) - 1; j < n; j += cqModeration) {
      const t = (completedUs[j]! - postedUs[i]!) / (j - i + 1);
      if (t < bestPerMessageUs) bestPerMessageUs = t;
    }
    // The last message is always signalled, even off the moderation grid.
    if (n % cqModeration !== 0) {
      const j = n - 1;
      const t = (completedUs[j]! - postedUs[i]!) / (j - i + 1);
      if (t < bestPerMessageUs) bestPerMessageUs = t;
    }
  }

  const average = bandwidthStatsWithoutPeak(sizeBytes, n, completedUs[n - 1]! - postedUs[0]!);
  return { ...average, bwPeakMiBps: (sizeBytes * 1e6) / (bestPerMessageUs * MIB) };
}

/** Bandwidth over a run whose peak was not measured (-D, or more than PEAK_MAX_ITERATIONS): peak prints as 0. */
export function bandwidthStatsWithoutPeak(sizeBytes: number, iterations: number, elapsedUs: number): BandwidthStats {
  return {
    bwPeakMiBps: 0,
    bwAverageMiBps: (sizeBytes * iterations * 1e6) / (elapsedUs * MIB),
    msgRateMpps: iterations / elapsedUs,
  };
}

/** perftest's ROUND_UP: the smallest multiple of alignment that is >= value. */
function roundUp(value: number, alignment: number): number {
  return value % alignment === 0 ? value : alignment * (Math.floor(value / alignment) + 1);
}
