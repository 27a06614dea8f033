// The real-hardware clock: integer nanoseconds that never go backwards, and sleeps that
// return (Atomics.wait on a private cell nobody notifies) whatever they are given.
import t from 'tap';
import { HostClock } from '../drivers/vfio/clock.ts';

t.test('nowNs is a non-decreasing integer number of nanoseconds', async (t) => {
  const clock = new HostClock();
  let previous = clock.nowNs();
  let backwards = 0;
  for (let i = 0; i < 10_000; i++) {
    const now = clock.nowNs();
    if (!Number.isSafeInteger(now) || now < previous) backwards++;
    previous = now;
  }
  t.equal(backwards, 0);
  t.type(previous, 'number', 'a Number, never a BigInt');
});

t.test('sleep returns for zero, negative and NaN durations as well as real ones', async (t) => {
  const clock = new HostClock();
  for (const us of [0, -5, Number.NaN, 1, 200]) {
    clock.sleep(us);
    t.pass(`sleep(${us}) returned`);
  }
  t.equal(clock.relax(), undefined);
});
