/**
 * A clock read that allocates nothing, for the model's worker thread (worker.ts): the same
 * clock as performance.now() in this thread, read with clock_gettime(CLOCK_MONOTONIC) through
 * koffi into a preallocated timespec, its value left in freeClock[FREE_NS] (ns) and
 * freeClock[FREE_MS] (ms), never returned: no double crosses a call.
 *
 * Why: in Node 20 every performance.now() (and Date.now()) returns a new heap number, even in
 * optimized code (16 B a read, measured: 20000 reads in a loop that adds them into a
 * Float64Array), and a worker reads the clock at every run and every few microseconds of its
 * spin: ~0.7 MB/s of garbage in the zero-GC benchmark, enough for V8 to scavenge every second
 * or so once it had shrunk the thread's young generation to 1 MB. This read costs ~59 ns
 * against ~35 ns for performance.now() here, and 0.1 B (none: the koffi call boxes nothing).
 *
 * performance.now() is CLOCK_MONOTONIC (libuv's uv_hrtime) less this thread's time origin;
 * the origin is found once, at the first read, as the middle of the tightest of 256
 * clock_gettime / performance.now() / clock_gettime brackets (~60 ns from it, measured). Without
 * koffi (its native part missing) the read falls back to performance.now(), which allocates.
 */
import { libcFunction } from '../../native/libc.ts';
import type { LiveClock } from '../model/host-services.ts';

export const FREE_NS = 0;
export const FREE_MS = 1;
/** The last reading: [FREE_NS] in ns, [FREE_MS] in ms, on performance.now()'s scale. */
export const freeClock = new Float64Array(2);

const CLOCK_MONOTONIC = 1;
const CALIBRATION_BRACKETS = 256;

const perf = performance;
/** struct timespec as int32 halves (little-endian tv_sec, tv_nsec): read without a BigInt. */
const ts = new Int32Array(4);
/** [0]: CLOCK_MONOTONIC's ns at this thread's performance.now() 0. */
const origin = new Float64Array(1);
let clockGettime: ((clock: number, into: Int32Array) => number) | undefined;
let ready = false;

function monotonicNs(read: (clock: number, into: Int32Array) => number): number {
  read(CLOCK_MONOTONIC, ts);
  return ts[0]! * 1e9 + ts[2]!;
}

function load(): void {
  ready = true;
  try {
    const read = libcFunction('int clock_gettime(int clock, void *into)') as NonNullable<typeof clockGettime>;
    if (read(CLOCK_MONOTONIC, ts) !== 0) return;
    let best = Infinity;
    for (let i = 0; i < CALIBRATION_BRACKETS; i++) {
      const before = monotonicNs(read);
      const p = perf.now() * 1e6;
      const after = monotonicNs(read);
      if (after - before < best) {
        best = after - before;
        origin[0] = Math.round((before + after) / 2 - p);
      }
    }
    clockGettime = read;
  } catch {
    // No koffi: performance.now() it is.
  }
}

/** Reads the clock into freeClock; allocates nothing once koffi is loaded (the first call loads it). */
export function readFreeClock(): void {
  if (!ready) load();
  const read = clockGettime;
  if (read === undefined) {
    freeClock[FREE_MS] = perf.now();
    freeClock[FREE_NS] = freeClock[FREE_MS]! * 1e6;
    return;
  }
  read(CLOCK_MONOTONIC, ts);
  const ns = ts[0]! * 1e9 + ts[2]! - origin[0]!;
  freeClock[FREE_NS] = ns;
  freeClock[FREE_MS] = ns / 1e6;
}

/** Whether readFreeClock allocates nothing (koffi is there). */
export function freeClockIsFree(): boolean {
  if (!ready) load();
  return clockGettime !== undefined;
}

/**
 * The free clock as a model's live clock (HostServices.clock, a worker's model): read() leaves
 * the time in readings[0] (freeClock[FREE_NS], FREE_NS being 0), so the model's data path reads
 * it without a heap number.
 */
export const FREE_LIVE_CLOCK: LiveClock = { readings: freeClock, read: readFreeClock };
