/** Garbage collections in the thread that runs a software NIC's model (the model.collections control). */
import { PerformanceObserver } from 'node:perf_hooks';

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
