/**
 * What the software NIC's model is handed by whatever runs it (drivers/emu/host/services.ts builds
 * it): everything the model needs from outside itself, as a QEMU device model gets its timers,
 * its network backend and its interrupt lines from the machine rather than reaching for them.
 * The model imports no Node module, no native binding and nothing of drivers/emu/host/
 * (test/import-graph.test.ts): time, wake-ups, files, sockets and native code come in here.
 *
 *   clock            the live clock of a real-time run (none stepped: the run's time stands still)
 *   driverWake       the driver's wake block, where the driver runs in another thread
 *   threadStatistics the model's thread's collections and heap (the model.* controls of those names)
 *   plugCable        builds the port's cable stack from the config's cable spec
 *   longCrc32        a faster CRC-32 for the ICRC of long frames (wire/icrc.ts), asked for once
 *   openTrace        opens the command trace file (config.tracePath, config.wqeTrace)
 *   threadId         the thread the model runs in (the write queue's consumer says so)
 *
 * Each is taken when the model is built (longCrc32 is called at the first long frame); the data
 * path reaches only what the bus keeps of them (bus.ts liveClock, driverWake, heartbeat), through
 * fields and preallocated cells, so it allocates nothing.
 */
import type { TraceSink } from '../../../firmware-hwrm/trace.ts';
import type { PortCable, PortCableOptions } from './cable/port-cable.ts';
import type { LongCrc32 } from './wire/icrc.ts';

export interface HostServices {
  readonly clock: LiveClock | undefined;
  readonly driverWake: DriverWake | undefined;
  readonly threadStatistics: ThreadStatistics;
  /** Builds the stack the port sends into; throws (nothing left open) if a part cannot be made. */
  plugCable(o: PortCableOptions): PortCable;
  /** The faster CRC-32, or null for the JS CRC alone: called at the first long frame, not before. */
  longCrc32(): LongCrc32 | null;
  /** Opens a trace file; throws an Error naming the path when it cannot be written. */
  openTrace(path: string, options: TraceFileOptions): TraceFileSink;
  readonly threadId: number;
}

/**
 * A real-time clock read into a cell, never returned: a double returned from a call not inlined
 * is a new heap number, and the data path reads the live clock at every ACK timer stamp and RNR
 * wait (bus.ts readLiveNow).
 */
export interface LiveClock {
  /** [0]: the time of the last read() in ns, on the scale of the runs' time (performance.now()'s). */
  readonly readings: Float64Array;
  read(): void;
}

/**
 * The wake block of a driver that runs in another thread and sleeps on it (worker-host.ts): the
 * model wakes it when a write it may wait on landed, and the port beats its heartbeat at each
 * frame sent, so the driver keeps spinning while a run carries messages.
 */
export interface DriverWake {
  /** Wakes the driver now if it sleeps (a response, CQE or event just landed in its memory). */
  wakeIfSleeping(): void;
  /** Counts a wake and wakes the driver if it sleeps (a run that wrote something ended). */
  wake(): void;
  /** The heartbeat as a cell of its own ([0], shared memory): the port adds 1 at every frame it sends. */
  readonly heartbeat: Int32Array;
}

/** Counters of the thread the model runs in, which only its host can read (V8's collections and heap). */
export interface ThreadStatistics {
  /** Garbage collections in this thread, counted from the first call. */
  collections(): number;
  /** Of those, the major collections V8 made to shrink the heap (its memory reducer's). */
  heapReductions(): number;
  /** A minor garbage collection in this thread now. */
  collectGarbage(): void;
  /** Bytes of this thread's heap in use (V8 used_heap_size). */
  heapUsed(): number;
  /** The same for the young generation alone (V8 new_space). */
  youngHeapUsed(): number;
}

export interface TraceFileOptions {
  /** Add to the file (another writer made it) instead of truncating it. */
  readonly append?: boolean;
  /** process.hrtime.bigint() when the trace began: the records' times count from there. */
  readonly epochNs?: bigint;
}

/** A trace file as the model keeps it: records go in, the count comes out, and it is closed once. */
export interface TraceFileSink extends TraceSink {
  readonly lines: number;
  close(): void;
}
