/**
 * Qp.wait's policy: look for the oldest due entry's completion, spinning first (a completion
 * usually follows within microseconds), then sleeping between looks until the bound. Sends the
 * firmware nothing, as poll does.
 *
 * The spin lasts only while the device is seen running (Clock.deviceRunning): on a machine with
 * few free cores, a driver that spins while the thread that must write its completion waits
 * for a core only delays that thread (2000 looks of spinning alone made a 64 B round trip
 * 35 us instead of 10 us on two busy cores).
 */
import type { Clock } from '../../drivers/device.ts';
import { LIMITS } from './limits.ts';
import { POLL_NONE, type BnxtQp, type Side } from './queue-pair.ts';

/** The spin before the sleep: at most this many looks, and this many a microsecond of the bound. */
const SPIN_LOOKS = LIMITS.spinsBeforeSleep * 10;
const SPIN_LOOKS_PER_US = 10;

/** As BnxtQp.poll, looking until a completion or `us` microseconds passed (then POLL_NONE). */
export function waitForCompletion(driverQp: BnxtQp, side: Side, us: number, clock: Clock): number {
  let n = driverQp.poll(side);
  if (n !== POLL_NONE) return n;
  // Spin without reading the clock: a clock read allocates, and a spin that finds its
  // completion must not. A look takes 20-50 ns, so SPIN_LOOKS_PER_US looks a microsecond of
  // the bound stay within it (a stepped device's virtual clock stands still while it spins).
  const spins = Math.min(SPIN_LOOKS, us * SPIN_LOOKS_PER_US);
  for (let looks = 0; looks < spins; looks++) {
    clock.relax();
    n = driverQp.poll(side);
    if (n !== POLL_NONE) return n;
    if (!clock.deviceRunning()) break;
  }
  // Then sleep between looks until the bound (a device may cut a sleep short). The time left is
  // counted down without reading the clock while sleeps run their whole length (each lasted at
  // least what it asked); once sleeps come back short twice in a row (the device writes other
  // things), the clock is read and the time since the last read counts. Never more than the time
  // that passed is counted, so the wait is not given up before its bound; and a wait whose sleep
  // is cut short by its completion, or by one other write, reads no clock at all
  // (performance.now returns a new heap number on every call in Node 20). While the bound is
  // far (more than READ_EVERY full sleeps away), the clock is read at every READ_EVERY-th short
  // sleep only: the sleeps between were each cut short of one full sleep, so they cannot carry
  // the wait past its bound (a thread that waited for a core is late by at most READ_EVERY
  // short sleeps more), and the next read counts them. A model writing CQEs for other entries
  // cut the driver's sleeps short ~5,000 times a second in the zero-GC benchmark, a read each. The times stay in a
  // Float64Array and a full sleep's length is a small integer: no double crosses a call.
  const time = waitTime;
  time[LEFT_US] = us;
  let shortSleeps = 0;
  for (;;) {
    const leftUs = time[LEFT_US]!;
    if (leftUs <= 0) return POLL_NONE;
    if (clock.sleep(leftUs >= LIMITS.waitSleepUs ? LIMITS.waitSleepUs : leftUs)) {
      time[LEFT_US] = leftUs - (leftUs >= LIMITS.waitSleepUs ? LIMITS.waitSleepUs : leftUs);
      shortSleeps = 0;
    } else if (++shortSleeps === 1) {
      // One short sleep counts nothing (a lower bound of what passed).
    } else if (shortSleeps === 2) {
      // The second in a row: from now on the clock says what passed.
      clock.readNs(waitNow);
      time[MARK] = waitNow[0]!;
    } else if ((shortSleeps - 2) % READ_EVERY === 0 || leftUs <= READ_EVERY * LIMITS.waitSleepUs) {
      clock.readNs(waitNow);
      time[LEFT_US] = leftUs - (waitNow[0]! - time[MARK]!) / 1000;
      time[MARK] = waitNow[0]!;
    }
    n = driverQp.poll(side);
    if (n !== POLL_NONE) return n;
  }
}

/** waitForCompletion's time: [LEFT_US] the bound's rest, [MARK] the read counted from (one thread at a time). */
const waitTime = new Float64Array(2);
const LEFT_US = 0;
const MARK = 1;
/** Where clock.readNs puts the time. */
const waitNow = new Float64Array(1);
/** Short sleeps per clock read while the bound is far. */
const READ_EVERY = 16;

/**
 * Qp.waitAsync: looks before its first turn of the event loop (a few microseconds, so a
 * completion that is about to land costs no turn), and its sleep between turns, short enough
 * that the event loop's timers and sockets wait at most this long.
 */
const ASYNC_SPIN_LOOKS = SPIN_LOOKS;
const ASYNC_SLEEP_US = 100;

/**
 * As waitForCompletion, but the event loop runs while it waits: a short spin, then a short
 * sleep (that a device may cut short) alternating with a turn of the event loop. Resolves
 * POLL_NONE at the bound, or once the queue pair is destroyed (nothing is left to complete).
 */
export function waitForCompletionAsync(driverQp: BnxtQp, side: Side, us: number, clock: Clock): Promise<number> {
  let n = driverQp.poll(side);
  for (let looks = 0; n === POLL_NONE && looks < ASYNC_SPIN_LOOKS; looks++) {
    clock.relax();
    n = driverQp.poll(side);
    if (!clock.deviceRunning()) break;
  }
  if (n !== POLL_NONE) return Promise.resolve(n);
  const deadline = clock.nowNs() + us * 1000;
  return new Promise((resolve) => {
    const look = (): void => {
      const found = driverQp.destroyed ? POLL_NONE : driverQp.poll(side);
      if (found !== POLL_NONE) return resolve(found);
      const now = clock.nowNs();
      if (now >= deadline || driverQp.destroyed) return resolve(POLL_NONE);
      clock.sleep(Math.min(ASYNC_SLEEP_US, (deadline - now) / 1000));
      const after = driverQp.destroyed ? POLL_NONE : driverQp.poll(side);
      if (after !== POLL_NONE) return resolve(after);
      setImmediate(look);
    };
    setImmediate(look);
  });
}
