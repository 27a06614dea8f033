/**
 * How a sleeping driver learns the software NIC wrote something: a shared counter the
 * model bumps after it writes a response, CQE or event, with a notify when the driver
 * sleeps on it. Real hardware would raise an interrupt; a driver that polls only needs
 * its sleeps cut short.
 *
 * A worker that stopped on a broken invariant (a strict model) sets the failed word and wakes
 * the driver, so its next wait ends with the model's error instead of a timeout.
 *
 * The worker also counts its turns of looking for work (the heartbeat): a driver spins only
 * while it sees the count move. A worker that has no core (or sleeps) leaves it still, and
 * spinning then only keeps the core it needs from it.
 *
 *   Int32 [0] counter  [1] driver sleeping  [2] model failed  [3] worker heartbeat
 */
import type { DriverWake } from '../model/host-services.ts';

export const WAKE_COUNTER = 0;
export const WAKE_SLEEPING = 1;
export const WAKE_FAILED = 2;
export const WAKE_HEARTBEAT = 3;

export function allocWake(): SharedArrayBuffer {
  return new SharedArrayBuffer(16);
}

export function wakeDriver(words: Int32Array): void {
  Atomics.add(words, WAKE_COUNTER, 1);
  if (Atomics.load(words, WAKE_SLEEPING) !== 0) Atomics.notify(words, WAKE_COUNTER);
}

/**
 * The wake block as a model's DriverWake (HostServices.driverWake, where the driver runs in
 * another thread): the heartbeat is handed over as a one-word view of its own, so the port's
 * beat at every frame is one Atomics.add at index 0 (model/engine/port.ts).
 */
export class WakeBlock implements DriverWake {
  readonly heartbeat: Int32Array;

  constructor(private readonly words: Int32Array) {
    this.heartbeat = new Int32Array(words.buffer, words.byteOffset + WAKE_HEARTBEAT * 4, 1);
  }

  wakeIfSleeping(): void {
    const w = this.words;
    if (Atomics.load(w, WAKE_SLEEPING) !== 0) wakeDriver(w);
  }

  wake(): void {
    wakeDriver(this.words);
  }
}
