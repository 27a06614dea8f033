/**
 * What a host hands the model it builds (model/host-services.ts HostServices): everything the
 * model needs from outside, made here, where Node, koffi and the files are.
 *
 *   clock            by how the model runs: none stepped (virtual time), performance.now() read
 *                    into a cell inline and in the vfio-user server's thread, the free clock
 *                    (free-clock.ts, no heap number) in a worker
 *   driverWake       the wake block (wake.ts), where the driver runs in another thread
 *   threadStatistics this thread's garbage collections and heap (collections.ts)
 *   plugCable        the cable stack (cable/index.ts plugPortCable)
 *   longCrc32        libdeflate's or node:zlib's CRC-32 (long-crc32.ts)
 *   openTrace        a trace file (drivers/trace-file.ts)
 *   threadId         worker_threads' threadId
 */
import { threadId } from 'node:worker_threads';
import type { EmuConfig } from '../model/config.ts';
import type { HostServices, LiveClock, ThreadStatistics } from '../model/host-services.ts';
import { TraceFile } from '../../trace-file.ts';
import { plugPortCable } from './cable/index.ts';
import {
  collectInThisThread, collectionsInThisThread, heapReductionsInThisThread, heapUsedInThisThread,
  youngHeapUsedInThisThread,
} from './collections.ts';
import { FREE_LIVE_CLOCK } from './free-clock.ts';
import { hostLongCrc32 } from './long-crc32.ts';
import { WakeBlock } from './wake.ts';

/**
 * The Performance object, read once: `performance` is an accessor of globalThis in Node, so each
 * use of the global runs its getter through a LoadGlobalIC (~16 ns of a ~70 ns clock read here).
 */
const perf = performance;

/** performance.now() in ns, into a cell: the live clock of a model in the driver's thread. */
class PerformanceClock implements LiveClock {
  readonly readings = new Float64Array(1);
  read(): void {
    this.readings[0] = perf.now() * 1e6;
  }
}

const THREAD_STATISTICS: ThreadStatistics = {
  collections: collectionsInThisThread,
  heapReductions: heapReductionsInThisThread,
  collectGarbage: collectInThisThread,
  heapUsed: heapUsedInThisThread,
  youngHeapUsed: youngHeapUsedInThisThread,
};

/**
 * The services of a model run the way `mode` says (EmuConfig.mode), in this thread; `wake` is the
 * driver's wake block, handed to the model where its driver runs in another thread ('thread').
 */
export function hostServices(mode: EmuConfig['mode'], wake: SharedArrayBuffer | undefined): HostServices {
  return {
    clock: mode === 'stepped' ? undefined : mode === 'thread' ? FREE_LIVE_CLOCK : new PerformanceClock(),
    driverWake: mode === 'thread' && wake !== undefined ? new WakeBlock(new Int32Array(wake)) : undefined,
    threadStatistics: THREAD_STATISTICS,
    plugCable: plugPortCable,
    longCrc32: hostLongCrc32,
    openTrace: (path, options) => new TraceFile(path, options),
    threadId,
  };
}
