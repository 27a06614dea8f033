/**
 * The software NIC's internal bus: everything its firmware (firmware/) and its engine
 * (engine/) may reach outside themselves. They get this, never the NicModel that wires them,
 * so neither can call into the other or into the host except through what is listed here
 * (as a QEMU device's parts reach the machine only through its address spaces and IRQs).
 *
 *   DMA            iommu: host memory by IOVA, only where the driver mapped it
 *   registers      bar0Written (what the driver wrote), publishBar0 (what it reads back)
 *   interrupts     notifyDriver: a write the driver may be waiting on landed in host memory
 *   outside work   externalWork: a socket delivered a frame (the worker must run soon)
 *   cable          plugCable: the port's cable stack, which the host builds (host-services.ts)
 *   time, chance   now (the model's clock), liveNow (the host's live clock), random (the seeded PRNG)
 *   config, chip   the NIC's identity and cable, fixed at open; the chip profile it plays
 *   invariants     internalError: a broken invariant inside the model (strict: throws)
 *
 * What comes from outside the model (the live clock, the driver's wake block, the cable stack)
 * the host hands in (host-services.ts HostServices); the bus keeps it in fields the data path
 * reads without a call that returns a double.
 */
import { Iommu } from './iommu.ts';
import { Random } from './random.ts';
import { emuChip, strictByDefault, type EmuConfig } from './config.ts';
import type { ChipProfile } from '../../../firmware-hwrm/chips.ts';
import type { TraceSink } from '../../../firmware-hwrm/trace.ts';
import type { DriverWake, HostServices, LiveClock } from './host-services.ts';
import type { PortCable, PortCableOptions } from './cable/port-cable.ts';

export interface ModelBus {
  readonly config: EmuConfig;
  /** The chip this NIC is (config.chip's profile): its ids, doorbell offsets, formats and limits. */
  readonly chip: ChipProfile;
  readonly iommu: Iommu;
  readonly random: Random;
  /** Where the firmware records the commands it takes and its answers (config.tracePath), if anywhere. */
  readonly trace: TraceSink | undefined;
  /** Where the engine records every WQE it fetches (config.wqeTrace and tracePath), if anywhere. */
  readonly wqeTrace: TraceSink | undefined;
  /** What the driver last wrote to each BAR0 word. */
  readonly bar0Written: Uint32Array;
  /** Copies `length` bytes the driver wrote into BAR0 from `offset`. */
  bar0Bytes(offset: number, length: number): Uint8Array;
  /** Sets the BAR0 word at `offset` the driver reads (status registers). */
  publishBar0(offset: number, value: number): void;
  /** The model's clock in ns (virtual in stepped mode), as of the current run. */
  now(): number;
  /** The same as a field: the hot path reads it (a double returned from a call is a heap number). */
  readonly nowNs: number;
  /**
   * The time now, for what happens inside a run: a frame leaving, a timer starting. Stepped, it
   * is the run's clock (virtual time stands still during a run). In real time it is read live:
   * a run's clock is the time the run began, and one run may send for milliseconds (a loaded
   * machine may also deschedule it halfway), so a timer started from it would expire before its
   * full timeout had passed since its packet left, and the peer would see an early resend.
   */
  liveNow(): number;
  /** liveNow() into `liveNs`, for the hot path: no double crosses a call (a heap number each). */
  readLiveNow(): void;
  readonly liveNs: number;
  /** Something the driver may be waiting on was written: wake it after this run. */
  notifyDriver(): void;
  /**
   * The driver's heartbeat where the driver runs in another thread (mode 'thread'; DriverWake):
   * the engine beats it as it works (Port.send), not only between runs.
   */
  readonly heartbeat: Int32Array | undefined;
  /** Builds the port's cable stack (the host's HostServices.plugCable). */
  plugCable(o: PortCableOptions): PortCable;
  /** A frame arrived from outside the model's run (a socket): run again soon. */
  externalWork(): void;
  /**
   * A broken invariant caught inside the model. Strict models throw ModelInternalError (so a
   * test fails where the model went wrong); counting models return and the caller counts it.
   */
  internalError(part: string, e: unknown): void;
}

/** How a caught exception is kept for lastInternalError and ModelInternalError: its stack where it has one. */
export function internalErrorText(e: unknown): string {
  return e instanceof Error ? (e.stack ?? e.message) : String(e);
}

/** A broken invariant inside a strict software NIC: a bug in the model, never the driver's misuse. */
export class ModelInternalError extends Error {
  constructor(readonly part: string, readonly detail: string) {
    super(`software NIC internal error in ${part}: ${detail}`);
    this.name = 'ModelInternalError';
  }

  static of(part: string, e: unknown): ModelInternalError {
    if (e instanceof ModelInternalError) return e;
    return new ModelInternalError(part, internalErrorText(e));
  }
}

/** The bus as the NicModel keeps it: the register file's two halves, the clock, the wake flag. */
export class NicBus implements ModelBus {
  readonly iommu = new Iommu();
  readonly random: Random;
  readonly chip: ChipProfile;
  readonly bar0Written: Uint32Array;
  trace: TraceSink | undefined;
  wqeTrace: TraceSink | undefined;
  /** Set by the host (the worker): called when a frame arrives from outside a run. */
  onExternalWork: () => void = () => {};
  nowNs = 0;
  /**
   * The live clock behind liveNow(), the host's (HostServices.clock): real time, read into a
   * cell (an inline model's and the vfio-user server's performance.now(), a worker's
   * clock_gettime read allocation-free); none in stepped mode. A test may set its own.
   */
  liveClock: LiveClock | undefined;
  /** The driver has something to see since the last wake. */
  wroteSomething = false;
  /**
   * The driver's wake block, handed in where the driver runs in another thread (none sleeps on it
   * otherwise): a sleeping driver is woken at the first write, not at the run's end.
   */
  readonly driverWake: DriverWake | undefined;
  readonly heartbeat: Int32Array | undefined;
  /** Broken invariants throw (tests) instead of being counted (config.strict, else the environment). */
  readonly strict: boolean;
  /** The first broken invariant of a strict model: it runs no more. */
  failure: ModelInternalError | undefined;

  constructor(
    readonly config: EmuConfig, private readonly bar0Published: Int32Array, bar0Bytes: number,
    private readonly host: HostServices,
  ) {
    this.strict = config.strict ?? strictByDefault();
    this.chip = emuChip(config.chip);
    this.liveClock = host.clock;
    this.driverWake = host.driverWake;
    this.heartbeat = host.driverWake?.heartbeat;
    this.random = new Random(config.seed);
    this.bar0Written = new Uint32Array(bar0Bytes / 4);
  }

  bar0Bytes(offset: number, length: number): Uint8Array {
    return new Uint8Array(this.bar0Written.buffer, offset, length).slice();
  }

  publishBar0(offset: number, value: number): void {
    Atomics.store(this.bar0Published, offset >>> 2, value | 0);
  }

  now(): number {
    return this.nowNs;
  }

  liveNow(): number {
    this.readLiveNow();
    return this.liveNs;
  }

  /**
   * The live clock's last reading (readLiveNow), never before the run's time. Kept in a field:
   * a double returned from a call that is not inlined is a new heap number (the clock read
   * itself is one more in Node 20, whatever the caller does: read it once per run, timers.ts).
   */
  liveNs = 0.5;

  readLiveNow(): void {
    const clock = this.liveClock;
    // Read into the clock's cell, not returned (a double returned from a call).
    let t: number;
    if (clock === undefined) {
      t = this.nowNs;
    } else {
      clock.read();
      t = clock.readings[0]!;
    }
    this.liveNs = t > this.nowNs ? t : this.nowNs;
  }

  notifyDriver(): void {
    this.wroteSomething = true;
    // A driver asleep on this write wakes now: the rest of the run (an ACK to build, a datagram
    // to send) need not delay it. The run's end bumps the counter again for the rest.
    const w = this.driverWake;
    if (w !== undefined) w.wakeIfSleeping();
  }

  plugCable(o: PortCableOptions): PortCable {
    return this.host.plugCable(o);
  }

  externalWork(): void {
    this.onExternalWork();
  }

  internalError(part: string, e: unknown): void {
    // Counting model: the caller counts it and the model lives on.
    if (!this.strict) return;
    const failure = ModelInternalError.of(part, e);
    this.failure ??= failure;
    throw failure;
  }
}
