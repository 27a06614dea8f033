/**
 * Wall time for a driver polling real hardware. No BigInt: process.hrtime.bigint() would
 * allocate on every look at the clock, so time comes from performance.now() (a double of
 * milliseconds with sub-microsecond resolution) converted to nanoseconds.
 */
import type { Clock } from '../device.ts';

/**
 * The Performance object, read once: in Node `performance` is an accessor of globalThis, so each
 * use of the global runs its getter (drivers/emu/model/bus.ts measured 70-76 against 56-59 ns a read).
 */
const perf = performance;

export class HostClock implements Clock {
  /** Private: nobody ever notifies it, so Atomics.wait always runs to its timeout. */
  private readonly sleeper = new Int32Array(new SharedArrayBuffer(4));

  nowNs(): number {
    return Math.floor(perf.now() * 1e6);
  }

  readNs(into: Float64Array): void {
    into[0] = Math.floor(perf.now() * 1e6);
  }

  /** Gives up the CPU for `us` microseconds. Real hardware cannot wake us early. */
  sleep(us: number): boolean {
    if (!(us > 0)) return us <= 0; // also refuses NaN, which Atomics.wait would treat as "forever"
    return Atomics.wait(this.sleeper, 0, 0, us / 1000) === 'timed-out';
  }

  /** Real hardware runs by itself; nothing to let run between looks at DMA memory. */
  relax(): void {}

  /** Real hardware runs by itself: a look may always find its write. */
  deviceRunning(): boolean {
    return true;
  }
}
