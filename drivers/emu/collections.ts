/** Garbage collections in the thread that runs a software NIC's model (the model.collections control). */
import { PerformanceObserver } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collections = -1;

/**
 * Garbage collections in this thread since the first call (which starts counting them): the
 * zero-GC benchmark asks a worker for its own, since the model's data path runs there. The
 * count arrives on the thread's event loop, a turn or so after each collection.
 */
export function collectionsInThisThread(): number {
  if (collections < 0) {
    collections = 0;
    const observer = new PerformanceObserver((list) => { collections += list.getEntries().length; });
    observer.observe({ entryTypes: ['gc'] });
    // Counting must not keep a thread alive that would otherwise end.
    (observer as unknown as { unref?: () => void }).unref?.();
  }
  return collections;
}

let gc: ((options: { type: 'minor' }) => void) | undefined;

/**
 * A minor collection (a scavenge) in this thread now: a zero-GC count then starts from an empty
 * young generation, so a collection it counts is one the counted work caused (bench/helpers/gc.ts
 * empties the driver's thread's). Minor, not full: a full collection also shrank the young
 * generation (to 1 MB, from 8), and then a run of a few MB collected where it had not before.
 * V8's gc(), fetched at the first call.
 */
export function collectInThisThread(): void {
  if (gc === undefined) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as (options: { type: 'minor' }) => void;
  }
  gc({ type: 'minor' });
}
