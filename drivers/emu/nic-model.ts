/**
 * The software NIC: a BCM57508 (Thor, P5) physical function as a register file with write
 * handlers (QEMU style). BAR0 holds the HWRM request window and trigger and the RoCE CMDQ
 * mailbox; BAR2 takes doorbells. The firmware and the RoCE engine act only through DMA
 * (the IOMMU) and the published registers.
 */
import { Iommu } from './iommu.ts';
import { WriteQueueConsumer, WriteKind } from './write-queue.ts';
import { wakeDriver } from './wake.ts';
import type { EmuConfig } from './config.ts';
import { HwrmFirmware } from './firmware/hwrm.ts';
import { RoceFirmware } from './firmware/roce.ts';
import { RoceEngine } from './engine/engine.ts';
import { Random } from './random.ts';

export const BAR0_BYTES = 64 * 1024;
export const BAR2_BYTES = 16 * 1024 * 1024;

// BAR0 map (bnxt-hwrm-vfio.md 2.1; bnxt-roce-interface.md 1)
export const BAR0 = {
  CHIMP_COMM: 0x000,
  CHIMP_COMM_TRIGGER: 0x100,
  WINDOW_BASE_OUT: 0x400,
  GRC_REG_STATUS_P5: 0x520,
  RCFW_COMM: 0x600,
  RCFW_PROD: 0x60c,
  RCFW_TRIGGER: 0x700,
} as const;

export interface ModelInit {
  readonly config: EmuConfig;
  readonly queue: SharedArrayBuffer;
  readonly wake: SharedArrayBuffer;
  readonly bar0: SharedArrayBuffer;
  readonly bar2: SharedArrayBuffer;
}

export class NicModel {
  readonly iommu = new Iommu();
  readonly random: Random;
  readonly config: EmuConfig;
  /** What the driver last wrote to each BAR0 word. */
  readonly bar0Written = new Uint32Array(BAR0_BYTES / 4);
  /** What the driver reads from BAR0 (the model publishes status here). */
  readonly bar0Published: Int32Array;
  readonly hwrm: HwrmFirmware;
  readonly roce: RoceFirmware;
  readonly engine: RoceEngine;
  private readonly queue: WriteQueueConsumer;
  private readonly wake: Int32Array;
  private wroteSomething = false;
  /** Set by the worker: drains the control port (DMA maps, test calls). */
  onControl: () => void = () => {};
  /** Set by the worker: called when a frame arrives from outside (a socket). */
  onExternalWork: () => void = () => {};
  private nowNs = 0;

  constructor(init: ModelInit) {
    this.config = init.config;
    this.random = new Random(init.config.seed);
    this.queue = new WriteQueueConsumer(init.queue);
    this.wake = new Int32Array(init.wake);
    this.bar0Published = new Int32Array(init.bar0);
    this.engine = new RoceEngine(this);
    this.roce = new RoceFirmware(this);
    this.hwrm = new HwrmFirmware(this);
  }

  now(): number {
    return this.nowNs;
  }

  /** Processes every queued bus write, then the engine's due work. True if anything happened. */
  runOnce(nowNs: number): boolean {
    this.nowNs = nowNs;
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
    if (this.engine.run(nowNs)) worked = true;
    if (this.hwrm.run(nowNs)) worked = true;
    if (this.wroteSomething) {
      this.wroteSomething = false;
      wakeDriver(this.wake);
    }
    return worked;
  }

  /** Earliest time (ns) at which the model has something to do without a new write. */
  nextDeadlineNs(): number {
    return Math.min(this.engine.nextDeadlineNs(), this.hwrm.nextDeadlineNs());
  }

  /** Subsystems call this after writing host memory the driver may be waiting on. */
  notifyDriver(): void {
    this.wroteSomething = true;
  }

  wakeDriver(): void {
    wakeDriver(this.wake);
  }

  private writeBar0(offset: number, value: number): void {
    if (offset < 0 || offset >= BAR0_BYTES) return; // writes past the BAR are dropped, as on PCIe
    this.bar0Written[offset >>> 2] = value;
    if (offset === BAR0.CHIMP_COMM_TRIGGER) this.hwrm.trigger(value);
    else if (offset === BAR0.RCFW_TRIGGER) this.roce.trigger(value);
  }

  /** Reads `length` bytes the driver wrote into BAR0 starting at `offset`. */
  bar0Bytes(offset: number, length: number): Uint8Array {
    return new Uint8Array(this.bar0Written.buffer, offset, length).slice();
  }

  publishBar0(offset: number, value: number): void {
    Atomics.store(this.bar0Published, offset >>> 2, value | 0);
  }

  // Worker sleep protocol (see worker.ts).
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

  /** Test and fault controls: `name` selects a method of a subsystem's `controls` table. */
  control(name: string, args: readonly unknown[]): unknown {
    const [scope, op] = name.split('.', 2) as [string, string | undefined];
    const target = scope === 'hwrm' ? this.hwrm.controls : scope === 'roce' ? this.roce.controls : scope === 'engine' ? this.engine.controls : scope === 'model' ? this.controls : undefined;
    const fn = op && target ? (target as Record<string, unknown>)[op] : undefined;
    if (typeof fn !== 'function') throw new Error(`software NIC has no control ${name}`);
    return (fn as (...a: unknown[]) => unknown)(...args);
  }

  readonly controls = {
    mappedBuffers: () => this.iommu.mappedBuffers,
    iommuFaults: () => this.iommu.faults,
    /**
     * Test hook (stepped models only: a function does not cross to a worker): `fn` sees every
     * DMA write the model makes, as (iova, length), before it lands; undefined removes it.
     */
    onDmaWrite: (fn: ((iova: number, length: number) => void) | undefined) => {
      if (fn !== undefined && typeof fn !== 'function') throw new RangeError('model.onDmaWrite: not a function');
      this.iommu.onWrite = fn;
    },
  };

  close(): void {
    this.engine.close();
  }
}
