/**
 * Garbage collections during a piece of work, for the zero-GC checks of the data path:
 * PerformanceObserver 'gc' entries (count, pause time, kinds) and the V8 heap's growth.
 * With no collection in between, the heap's growth is what the work allocated.
 */
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { nowNs, type Durations } from './timing.ts';

export interface GcReport {
  /** Collections that started during the work. */
  readonly count: number;
  /** Their total pause, in ms. */
  readonly pauseMs: number;
  /** Collections by kind: minor (scavenge), major (mark-sweep-compact), incremental, weakcb. */
  readonly byKind: Readonly<Record<string, number>>;
  /** used_heap_size after minus before, in bytes: the work's allocation when `count` is 0. */
  readonly heapGrowthBytes: number;
}

const KIND_NAMES: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** How long to wait after the work for the observer to be told of collections (they arrive asynchronously). */
const DELIVERY_WAIT_MS = 20;

/**
 * Runs `work` (sync or async) and reports the collections that started while it ran.
 * Warm `work` up first: the JIT's own allocations would otherwise count.
 */
export async function watchGc<T>(work: () => T | Promise<T>): Promise<{ value: T; gc: GcReport }> {
  const entries: { startTime: number; duration: number; kind: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      // Node puts the collection's kind in `detail` (typed loosely by @types/node 20).
      const detail = (e as unknown as { detail?: { kind?: number } }).detail;
      entries.push({ startTime: e.startTime, duration: e.duration, kind: detail?.kind ?? -1 });
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  try {
    const heapBefore = getHeapStatistics().used_heap_size;
    const start = performance.now();
    const value = await work();
    const end = performance.now();
    const heapAfter = getHeapStatistics().used_heap_size;
    await new Promise((resolve) => setTimeout(resolve, DELIVERY_WAIT_MS));
    const during = entries.filter((e) => e.startTime >= start && e.startTime <= end);
    const byKind: Record<string, number> = {};
    for (const e of during) {
      const kind = KIND_NAMES[e.kind] ?? `kind ${e.kind}`;
      byKind[kind] = (byKind[kind] ?? 0) + 1;
    }
    return {
      value,
      gc: {
        count: during.length,
        pauseMs: during.reduce((sum, e) => sum + e.duration, 0),
        byKind,
        heapGrowthBytes: heapAfter - heapBefore,
      },
    };
  } finally {
    observer.disconnect();
  }
}

export interface GcRun extends GcReport {
  readonly operations: number;
  /** heapGrowthBytes / operations; meaningful when `count` is 0 (a collection frees what was counted). */
  readonly bytesPerOperation: number;
}

/**
 * The zero-GC check: warms `op(batch)` up for d.warmupMs, then runs it while watching
 * collections: for d.runMs, or, given `operations`, until `batch`-sized calls have made that
 * many operations (d.runMs then bounds the run). A count of operations makes the run the same
 * work at any load: timed, a run on a loaded machine did a few times the work, over many
 * times the seconds, in which time-driven collections (V8's memory reducer) could fall. The
 * clock is read once per batch, so pick a batch of at least a few hundred microseconds of work:
 * then the clock's own allocations (16 B a read) stay far below what triggers a minor collection.
 */
export async function gcDuring(op: (batch: number) => void, batch: number, d: Durations,
  operations = Infinity): Promise<GcRun> {
  if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batch must be a positive integer, not ${batch}`);
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) op(batch);
  // Start from an empty young generation, so a collection counted is one the run caused.
  collectNow();
  const calls = Math.ceil(operations / batch);
  const { value: batches, gc } = await watchGc(() => {
    let count = 0;
    const end = nowNs() + d.runMs * 1e6;
    do {
      op(batch);
      count++;
    } while (count < calls && nowNs() < end);
    return count;
  });
  const done = batches * batch;
  return { ...gc, operations: done, bytesPerOperation: gc.heapGrowthBytes / done };
}

let gcFunction: (() => void) | undefined;

/** A full collection now: global.gc when node runs with --expose-gc, else V8's gc() fetched at run time. */
function collectNow(): void {
  if (!gcFunction) {
    const exposed = (globalThis as { gc?: () => void }).gc;
    if (exposed) gcFunction = exposed;
    else {
      setFlagsFromString('--expose-gc');
      gcFunction = runInNewContext('gc') as () => void;
    }
  }
  gcFunction();
}
