/**
 * The worker's allocation-free clock (drivers/emu/host/free-clock.ts) is performance.now()'s clock:
 * the model's timers, the driver's waits and the capture's stamps compare readings across it,
 * so a reading must fall between two performance.now() readings taken around it (within the
 * calibration's error, far below a microsecond), in ns and in ms alike, and never go back.
 * koffi is a dependency, so the read is the allocation-free one here.
 */
import t from 'tap';
import { FREE_MS, FREE_NS, freeClock, freeClockIsFree, readFreeClock } from '../drivers/emu/host/free-clock.ts';

/** Calibration error allowed: the origin is found to ~60 ns (free-clock.ts); this is 1 us. */
const SLACK_NS = 1000;
const READS = 10_000;

t.test('a reading lies between the performance.now() readings around it, and never goes back', (t) => {
  t.equal(freeClockIsFree(), true, 'koffi loaded: the read allocates nothing');
  let outside = 0;
  let back = 0;
  let msApart = 0;
  let last = -Infinity;
  for (let i = 0; i < READS; i++) {
    const before = performance.now() * 1e6;
    readFreeClock();
    const after = performance.now() * 1e6;
    const ns = freeClock[FREE_NS]!;
    if (ns < before - SLACK_NS || ns > after + SLACK_NS) outside++;
    if (ns < last) back++;
    if (Math.abs(freeClock[FREE_MS]! * 1e6 - ns) > 1) msApart++;
    last = ns;
  }
  t.equal(outside, 0, 'every reading within its bracket');
  t.equal(back, 0, 'monotonic');
  t.equal(msApart, 0, 'FREE_MS is FREE_NS in ms');
  t.end();
});
