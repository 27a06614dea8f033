// A firmware command's bound counts the driver's looks as bnxt_en's __hwrm_send counts its
// passes: time the driver spent descheduled between two looks is not time the device had.
import t from 'tap';
import { CommandDeadline } from '../lib/bnxt/command-deadline.ts';
import type { Clock } from '../drivers/device.ts';

class FakeClock implements Clock {
  ns = 1e12;
  nowNs(): number { return this.ns; }
  readNs(into: Float64Array): void { into[0] = this.ns; }
  sleep(us: number): boolean { this.ns += us * 1000; return true; }
  relax(): void {}
  deviceRunning(): boolean { return true; }
}

t.test('looks a sleep apart use up the bound in real time', async (t) => {
  const clock = new FakeClock();
  const d = new CommandDeadline(clock, 500e6);
  let looks = 0;
  while (!d.expired()) { clock.sleep(100); looks++; }
  t.ok(looks >= 5000 && looks <= 5001, `500 ms of 100 us sleeps (${looks})`);
});

t.test('a stall of the driver between two looks counts as one step only', async (t) => {
  const clock = new FakeClock();
  const d = new CommandDeadline(clock, 500e6);
  clock.ns += 600e6; // descheduled for 600 ms right after sending
  t.notOk(d.expired(), 'not given up: the device had no more than one step of it');
  clock.ns += 100e3;
  t.notOk(d.expired(), 'a look later the answer may still come');
});

t.test('a silent firmware still fails, after at least the timeout', async (t) => {
  const clock = new FakeClock();
  const start = clock.ns;
  const d = new CommandDeadline(clock, 50e6);
  while (!d.expired()) clock.ns += 3e6; // every look 3 ms apart (a loaded machine)
  t.ok(clock.ns - start >= 50e6, 'never before the bound');
});
