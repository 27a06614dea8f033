/**
 * How fast the host ran just before a benchmark: a fixed piece of pure JavaScript (integer
 * arithmetic on locals, nothing allocated, nothing a compiler can fold away), timed three times,
 * the median kept. The same work takes the same time on an idle, steady machine, so what the
 * probe shows is the machine: this project's virtual machines ran it up to ten times slower in
 * some minutes than in others at a load average of 1, which no load figure shows. The report
 * prints it beside each benchmark so that a goal missed in a round can be read against the host
 * that round ran on.
 */

/** Steps of the probe's loop: about 14 ms on this project's 2-core machines when they run fast. */
const STEPS = 5_000_000;
const TIMES = 3;

/** The probe's result is folded in here so that no step is dead code. */
let sink = 0;

/** One run of the fixed work, in ms. */
function probeOnce(): number {
  const t0 = performance.now();
  let x = (sink | 0) + 0x9e3779b9;
  let acc = 0;
  for (let i = 0; i < STEPS; i++) {
    // xorshift32: each step depends on the last, so the loop can be neither vectorised nor skipped.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    acc = (acc + (x & 0xff)) | 0;
  }
  sink = acc;
  return performance.now() - t0;
}

/** The probe's time in ms: the median of three runs, one after another. */
export function hostProbeMs(): number {
  const times: number[] = [];
  for (let i = 0; i < TIMES; i++) times.push(probeOnce());
  times.sort((a, b) => a - b);
  return times[TIMES >> 1]!;
}
