/**
 * The software NIC: a bnxt physical function of the chip its config names (a profile of
 * firmware-hwrm/chips.ts; BCM57508, Thor P5, by default) as a register file with write
 * handlers (QEMU style). BAR0 holds the HWRM request window and trigger and the RoCE CMDQ
 * mailbox; BAR2 takes doorbells. This file wires the parts and is their only meeting point:
 *
 *   host (drivers/emu/host/: device.ts, worker.ts, a vfio-user server)
 *     │  runOnce(now): bus writes in order ─> BAR0 triggers / BAR2 doorbells; iommu.map/unmap;
 *     │  wake (the driver's sleep is cut short after a run that wrote something); and, once,
 *     │  HostServices (host-services.ts): the live clock, the wake block, the cable, the traces
 *   NicModel ── NicBus (bus.ts: DMA, registers, notify, clock, PRNG, config, internal errors)
 *     ├─ firmware/hwrm.ts   HWRM (ChiMP) ──writes──> FunctionResources <──reads── firmware/roce.ts
 *     ├─ firmware/roce.ts   CMDQ/CREQ, object tables (RoceTables) ──hooks──> engine
 *     └─ engine/engine.ts   RC transport over the port and its cable ──tables──> firmware
 *
 * Firmware and engine never import each other or this file: each gets the bus and the other's
 * narrow interface (objects.ts RoceTables / EngineHooks, function-resources.ts RoceOfFunction).
 */
import { WriteQueueConsumer, WriteKind } from './write-queue.ts';
import type { DriverWake, HostServices, ThreadStatistics, TraceFileSink } from './host-services.ts';
import type { EmuConfig } from './config.ts';
import type { Result } from '../../../firmware-hwrm/result.ts';
import type { Iommu } from './iommu.ts';
import type { Random } from './random.ts';
import { NicBus, type ModelInternalError } from './bus.ts';
import { HwrmFirmware } from './firmware/hwrm.ts';
import { RoceFirmware } from './firmware/roce.ts';
import { FunctionResources } from './firmware/function-resources.ts';
import { RoceEngine } from './engine/engine.ts';
import { useLongCrc32 } from './wire/icrc.ts';
import { teeTrace } from './trace-tee.ts';

export const BAR0_BYTES = 64 * 1024;
export const BAR2_BYTES = 16 * 1024 * 1024;
/**
 * The words of BAR2 a host keeps for reads (the rest of the BAR reads as 0): BAR2 holds
 * doorbells only, which go through the write queue, and the model publishes nothing there.
 */
export const BAR2_PUBLISHED_BYTES = 4096;

/**
 * BAR0 map: the HWRM channel (Linux bnxt.h BNXT_GRCPF_REG_CHIMP_COMM, _CHIMP_COMM_TRIGGER,
 * _WINDOW_BASE_OUT; the firmware status register is the chip profile's grcStatusOffset) and
 * the RoCE CMDQ mailbox at 0x600 with its
 * producer at +0xc and trigger at +0x100 (Linux bnxt_re qplib_rcfw.h RCFW_COMM_BASE_OFFSET,
 * RCFW_PF_VF_COMM_PROD_OFFSET, RCFW_COMM_TRIG_OFFSET).
 */
export const BAR0 = {
  CHIMP_COMM: 0x000,
  CHIMP_COMM_TRIGGER: 0x100,
  WINDOW_BASE_OUT: 0x400,
  RCFW_COMM: 0x600,
  RCFW_PROD: 0x60c,
  RCFW_TRIGGER: 0x700,
} as const;

/** The model's shared memory and identity: what crosses to a worker thread (no function does). */
export interface ModelInit {
  readonly config: EmuConfig;
  readonly queue: SharedArrayBuffer;
  readonly bar0: SharedArrayBuffer;
  readonly bar2: SharedArrayBuffer;
}

export class NicModel {
  /** What the firmware and the engine reach: DMA, registers, notification, clock, PRNG, config. */
  readonly bus: NicBus;
  /** What HWRM set up for the function (registration, context memory, rings, statistics contexts). */
  readonly resources = new FunctionResources();
  readonly hwrm: HwrmFirmware;
  readonly roce: RoceFirmware;
  readonly engine: RoceEngine;
  private readonly queue: WriteQueueConsumer;
  /**
   * A driver may be asleep on the wake block (worker-host.ts sleep): only one in another thread,
   * mode 'thread', whose host hands the block in. A model run in the driver's thread (stepped,
   * inline) runs inside the driver's own calls, so no driver sleeps while it writes; it has no
   * block and skips its atomics (an Atomics.add and two loads a run that wrote, 12-20 ns each in
   * Node 20).
   */
  private readonly driverWake: DriverWake | undefined;
  private readonly traceFile: TraceFileSink | undefined;
  private readonly wqeTraceFile: TraceFileSink | undefined;
  /** Set by the worker: drains the control port (DMA maps, test calls). */
  onControl: () => void = () => {};
  /**
   * The test and fault controls, by part: what a test may ask the model or break in it. A
   * stepped device hands out this object itself; a worker's host calls it by name (control()).
   */
  readonly controls: {
    readonly engine: RoceEngine['controls'];
    readonly roce: RoceFirmware['controls'];
    readonly hwrm: HwrmFirmware['controls'];
    readonly model: ModelControls;
  };

  /** `host`: what the model's host hands it (host-services.ts; drivers/emu/host/services.ts builds one). */
  constructor(init: ModelInit, private readonly host: HostServices) {
    this.queue = new WriteQueueConsumer(init.queue, host.threadId);
    const bus = new NicBus(init.config, new Int32Array(init.bar0), BAR0_BYTES, host);
    this.driverWake = host.driverWake;
    this.bus = bus;
    // The ICRC of this thread's long frames goes to the host's faster CRC, if it has one.
    useLongCrc32(() => host.longCrc32());
    // Throws (an open error for the host) when the file cannot be written.
    if (init.config.tracePath !== undefined) bus.trace = this.traceFile = host.openTrace(init.config.tracePath, {});
    const wqe = init.config.wqeTrace;
    if (wqe !== undefined) this.wqeTraceFile = host.openTrace(wqe.path, { append: true, epochNs: wqe.epochNs });
    bus.wqeTrace = teeTrace(this.wqeTraceFile, bus.trace);
    this.engine = new RoceEngine(bus);
    this.roce = new RoceFirmware(bus, this.resources, this.engine);
    this.hwrm = new HwrmFirmware(bus, this.resources, this.roce, (open) => { this.engine.roceReceivePath = open; });
    this.engine.attach(this.roce);
    this.controls = {
      engine: this.engine.controls, roce: this.roce.controls, hwrm: this.hwrm.controls, model: this.modelControls(),
    };
  }

  private modelControls(): ModelControls {
    const iommu = this.bus.iommu;
    // The thread's counters are the host's to read (V8's): the model offers them as its own controls.
    const thread = this.host.threadStatistics;
    return {
      mappedBuffers: () => iommu.mappedBuffers,
      iommuFaults: () => iommu.faults,
      collections: () => thread.collections(),
      heapReductions: () => thread.heapReductions(),
      collectGarbage: () => thread.collectGarbage(),
      heapUsed: () => thread.heapUsed(),
      youngHeapUsed: () => thread.youngHeapUsed(),
      onDmaWrite: (fn) => {
        if (fn !== undefined && typeof fn !== 'function') throw new RangeError('model.onDmaWrite: not a function');
        iommu.onWrite = fn;
      },
    };
  }

  /** The device's IOMMU: the host maps and unmaps DMA memory here. */
  get iommu(): Iommu {
    return this.bus.iommu;
  }

  get config(): EmuConfig {
    return this.bus.config;
  }

  get random(): Random {
    return this.bus.random;
  }

  /** Set by the worker: called when a frame arrives from outside (a socket). */
  set onExternalWork(fn: () => void) {
    this.bus.onExternalWork = fn;
  }

  now(): number {
    return this.bus.nowNs;
  }

  /** The broken invariant that stopped this strict model, if one did. */
  get failure(): ModelInternalError | undefined {
    return this.bus.failure;
  }

  /**
   * Processes every queued bus write, then the engine's due work. True if anything happened.
   * A strict model throws ModelInternalError where an invariant broke, and again on every run
   * after (it is stopped); a counting one never throws.
   */
  runOnce(nowNs: number): boolean {
    this.bus.nowNs = nowNs;
    return this.runNow();
  }

  /**
   * runOnce at the time already in bus.nowNs: the worker's run, whose time is a field store
   * (freeClock's reading), not a double argument (a heap number at each call not inlined).
   */
  runNow(): boolean {
    const bus = this.bus;
    if (bus.failure) throw bus.failure;
    let worked = false;
    const q = this.queue;
    while (q.take()) {
      worked = true;
      switch (q.kind) {
        case WriteKind.Bar0Write32: this.writeBar0(q.offset, q.lo); break;
        case WriteKind.Bar2Write32: this.engine.doorbell(q.offset, q.lo, 0, false); break;
        case WriteKind.Bar2Doorbell64: this.engine.doorbell(q.offset, q.lo, q.hi, true); break;
        case WriteKind.Control: this.onControl(); break;
      }
    }
    if (this.engine.run()) worked = true;
    if (this.hwrm.run()) worked = true;
    if (bus.wroteSomething) {
      bus.wroteSomething = false;
      const w = this.driverWake;
      if (w !== undefined) w.wake();
    }
    return worked;
  }

  /** Earliest time (ns) at which the model has something to do without a new write. */
  nextDeadlineNs(): number {
    const engine = this.engine.nextDeadlineNs();
    const hwrm = this.hwrm.nextDeadlineNs();
    return engine < hwrm ? engine : hwrm;
  }

  /**
   * Whether a run at the time of the live clock's last reading (the worker's, just before) would
   * find something to do without a new write (nextDeadlineNs has come); stepped, at the run's
   * time. Answers a boolean: no double crosses the call (each would be a heap number).
   */
  dueAtLastReading(): boolean {
    const clock = this.bus.liveClock;
    return this.nextDeadlineNs() <= (clock !== undefined ? clock.readings[0]! : this.bus.nowNs);
  }

  /** What the driver last wrote to each BAR0 word. */
  get bar0Written(): Uint32Array {
    return this.bus.bar0Written;
  }

  private writeBar0(offset: number, value: number): void {
    if (offset < 0 || offset >= BAR0_BYTES) return; // writes past the BAR are dropped, as on PCIe
    this.bus.bar0Written[offset >>> 2] = value;
    if (offset === BAR0.CHIMP_COMM_TRIGGER) this.hwrm.trigger(value);
    else if (offset === BAR0.RCFW_TRIGGER) this.roce.trigger(value);
  }

  // Worker sleep protocol (see worker.ts).
  /** A bus write waits to be taken (one shared-memory load). */
  hasQueuedWrites(): boolean {
    return this.queue.pending();
  }
  prepareSleep(): number | undefined {
    return this.queue.prepareSleep();
  }
  awake(): void {
    this.queue.awake();
  }
  queueWords(): Int32Array {
    return this.queue.words;
  }
  queueTailIndex(): number {
    return this.queue.tailIndex();
  }
  /** The UDP socket to poll while asleep (-1: the cable is not read through libc). */
  cablePollFd(): number {
    return this.engine.cablePollFd();
  }
  /** See RoceEngine.watchCable (an inline model on a UDP socket). */
  watchCable(onArrival: () => void): void {
    this.engine.watchCable(onArrival);
  }

  /**
   * Runs control `name` ('part.op', as controlNames() lists them) with `args`: how a worker's
   * host reaches `controls` (drivers/emu/host/control.ts). Throws for a name no part has.
   */
  control(name: string, args: readonly unknown[]): unknown {
    const dot = name.indexOf('.');
    const part = dot > 0 ? ownValue(this.controls, name.slice(0, dot)) : undefined;
    const op = typeof part === 'object' && part !== null ? ownValue(part, name.slice(dot + 1)) : undefined;
    if (typeof op !== 'function') throw new Error(`software NIC has no control ${name}`);
    return Reflect.apply(op, part, args);
  }

  /** The name of every control, by part: a worker reports them so its host offers the same calls. */
  controlNames(): ControlNames {
    const c = this.controls;
    return {
      engine: Object.keys(c.engine), roce: Object.keys(c.roce), hwrm: Object.keys(c.hwrm), model: Object.keys(c.model),
    };
  }

  /** Records written to config.tracePath (0 without one). */
  get traceLines(): number {
    return this.traceFile?.lines ?? 0;
  }

  close(): void {
    this.engine.close();
    this.traceFile?.close();
    this.wqeTraceFile?.close();
  }

  /** Settles once the port's cable can carry frames (a UDP socket bound), or with why it cannot. */
  cableReady(): Promise<Result<void>> {
    return this.engine.cableReady();
  }
}

/**
 * Controls of the model as a whole: its IOMMU, and the counters of the thread that runs it (a
 * worker's own, or the caller's for a model in its thread), which the host reads for it
 * (ThreadStatistics; drivers/emu/host/collections.ts): the benchmarks count zero-GC runs with
 * them and read what the thread allocated between two heap readings.
 */
export interface ModelControls extends ThreadStatistics {
  /** DMA buffers the host has mapped. */
  mappedBuffers(): number;
  /** Accesses the IOMMU refused (nothing was mapped there). */
  iommuFaults(): number;
  /**
   * Test hook (stepped models only: a function does not cross to a worker): `fn` sees every
   * DMA write the model makes, as (iova, length), before it lands; undefined removes it.
   */
  onDmaWrite(fn: ((iova: number, length: number) => void) | undefined): void;
}

/** The controls' names by part (NicModel.controlNames). */
export type ControlNames = { readonly [P in keyof NicModel['controls']]: readonly string[] };

function ownValue(o: object, key: string): unknown {
  return Object.hasOwn(o, key) ? (o as Record<string, unknown>)[key] : undefined;
}
