/**
 * Garbage collections in the thread that runs a software NIC's model (the model.collections and
 * model.heapReductions controls).
 */
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collections = -1;
let reductions = 0;

/**
 * A major collection V8 makes to shrink the heap rather than because it filled: GC callback flag
 * kGCCallbackFlagCollectAllExternalMemory, which V8's memory reducer passes when it starts its
 * collection (v8 src/heap/memory-reducer.cc, MemoryReducer::NotifyTimer), as do memory-pressure
 * notifications; Node reports it as NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY.
 */
function isReduction(e: PerformanceEntry): boolean {
  const detail = (e as unknown as { detail?: { kind?: number; flags?: number } }).detail;
  return detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR &&
    ((detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_ALL_EXTERNAL_MEMORY) !== 0;
}

function startCounting(): void {
  if (collections >= 0) return;
  collections = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      collections++;
      if (isReduction(e)) reductions++;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  // Counting must not keep a thread alive that would otherwise end.
  (observer as unknown as { unref?: () => void }).unref?.();
}

/**
 * Garbage collections in this thread since the first call of this or heapReductionsInThisThread
 * (which starts counting them): the zero-GC benchmark asks a worker for its own, since the
 * model's data path runs there. The count arrives on the thread's event loop, a turn or so after
 * each collection.
 */
export function collectionsInThisThread(): number {
  startCounting();
  return collections;
}

/**
 * Of those, the major collections V8 made to shrink the heap (isReduction). A new thread gets
 * them once, from V8's memory reducer: its start-up (loading the model's modules) arms the
 * reducer, which then collects two or three times, 0.5 s apart, at the first of its looks, 8 s
 * apart, that finds the thread's allocation rate low against its collection speed (v8
 * MemoryReducer::Step, Heap::HasLowAllocationRate): the start-up's burst counts for a few looks,
 * so 8-50 s after the start (measured at loads 6-14), and it shrinks the young generation to
 * its minimum. The zero-GC benchmark lets these pass before it
 * counts, as it lets the start-up's own collections pass.
 */
export function heapReductionsInThisThread(): number {
  startCounting();
  return reductions;
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

/**
 * Bytes of this thread's heap in use now (V8's used_heap_size): between two readings with no
 * collection between them, the bytes this thread allocated. The zero-GC benchmark reads the
 * worker's around its run, to report the worker's bytes per operation beside the driver's.
 */
export function heapUsedInThisThread(): number {
  return getHeapStatistics().used_heap_size;
}

/**
 * Bytes in use in this thread's young generation (V8's new_space): what a scavenge collects.
 * Between two readings with no collection between them, what this thread allocated there, the
 * allocation that makes scavenges; unlike heapUsedInThisThread it leaves out the old space, where
 * the optimizing compiler's finished jobs land (a jump of 100-200 KB now and then, measured).
 */
export function youngHeapUsedInThisThread(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_used_size;
  return 0;
}
