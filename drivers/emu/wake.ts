/**
 * How a sleeping driver learns the software NIC wrote something: a shared counter the
 * model bumps after it writes a response, CQE or event, with a notify when the driver
 * sleeps on it. Real hardware would raise an interrupt; a driver that polls only needs
 * its sleeps cut short.
 *
 * A worker that stopped on a broken invariant (a strict model) sets the failed word and wakes
 * the driver, so its next wait ends with the model's error instead of a timeout.
 *
 *   Int32 [0] counter  [1] driver sleeping  [2] model failed
 */
export const WAKE_COUNTER = 0;
export const WAKE_SLEEPING = 1;
export const WAKE_FAILED = 2;

export function allocWake(): SharedArrayBuffer {
  return new SharedArrayBuffer(16);
}

export function wakeDriver(words: Int32Array): void {
  Atomics.add(words, WAKE_COUNTER, 1);
  if (Atomics.load(words, WAKE_SLEEPING) !== 0) Atomics.notify(words, WAKE_COUNTER);
}
