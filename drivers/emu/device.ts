/**
 * The software NIC as a Device: BAR writes go through the write queue, BAR reads come from
 * the model's published registers, DMA memory is mapped into the model's IOMMU. The model
 * runs in a worker thread (default) or stepped in this thread on a virtual clock.
 */
import { Worker, MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Clock, Device, DmaMemory, Mmio, PciIdentity } from '../device.ts';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { allocWriteQueue, WriteQueueProducer, WriteKind } from './write-queue.ts';
import { allocWake, WAKE_COUNTER, WAKE_SLEEPING } from './wake.ts';
import { EmuDmaMemory, type DmaMapper } from './dma-memory.ts';
import { controlsByName, type ControlMessage, type ControlReply, type EmuControls } from './control.ts';
import { BCM57508, type EmuConfig } from './config.ts';
import { BAR0_BYTES, BAR2_BYTES, NicModel, type ControlNames } from './nic-model.ts';
import { SharedStepping, pairLink } from './cable/pair-cable.ts';
import { findWorkerFile } from './worker-file.ts';

export { BAR0_BYTES, BAR2_BYTES };
export type { EmuControls };

export interface EmuDevice extends Device {
  /** The model's test and fault controls, typed; the same calls in stepped and thread mode. */
  readonly emu: EmuControls;
  readonly config: EmuConfig;
}

class EmuMmio implements Mmio {
  private readonly regs: Int32Array;
  private readonly publishedWords: number;
  constructor(
    readonly size: number,
    published: SharedArrayBuffer,
    private readonly queue: WriteQueueProducer,
    private readonly writeKind: WriteKind,
  ) {
    this.regs = new Int32Array(published);
    this.publishedWords = this.regs.length;
  }
  read32(offset: number): number {
    if ((offset & 3) !== 0 || offset < 0 || offset >= this.size) throw new RangeError(`MMIO read at 0x${offset.toString(16)}: not an aligned offset of the BAR`);
    const word = offset >>> 2;
    return word < this.publishedWords ? Atomics.load(this.regs, word) >>> 0 : 0;
  }
  write32(offset: number, value: number): void {
    if ((offset & 3) !== 0 || offset < 0 || offset >= this.size) throw new RangeError(`MMIO write at 0x${offset.toString(16)}: not an aligned offset of the BAR`);
    this.queue.push(this.writeKind, offset, value, 0);
  }
  doorbell64(offset: number, lo: number, hi: number): void {
    this.queue.push(WriteKind.Bar2Doorbell64, offset, lo, hi);
  }
}

/** Real time; sleeps end early when the model writes something. */
class ThreadClock implements Clock {
  constructor(private readonly wake: Int32Array) {}
  nowNs(): number {
    return performance.now() * 1e6;
  }
  sleep(us: number): void {
    const seen = Atomics.load(this.wake, WAKE_COUNTER);
    Atomics.store(this.wake, WAKE_SLEEPING, 1);
    Atomics.wait(this.wake, WAKE_COUNTER, seen, us / 1000);
    Atomics.store(this.wake, WAKE_SLEEPING, 0);
  }
  relax(): void {}
}

/**
 * Virtual time: the driver's waits run the model. Deterministic for a given seed. The NICs of
 * a pair cable share one: a wait on either runs both models, and time jumps only when
 * neither has anything to do before its next deadline.
 */
class SteppedClock implements Clock {
  constructor(private readonly stepping: SharedStepping) {}
  nowNs(): number {
    return this.stepping.nowNs;
  }
  relax(): void {
    this.runAll();
  }
  sleep(us: number): void {
    const s = this.stepping;
    const until = s.nowNs + us * 1000;
    // Let the models finish what they can now, then jump to the next deadline or the bound
    // (a frame in flight between two models is work now: its receiver's deadline is now).
    this.runAll();
    const models = s.models;
    let next = Infinity;
    for (let i = 0; i < models.length; i++) next = Math.min(next, models[i]!.nextDeadlineNs());
    s.nowNs = Math.max(s.nowNs, Math.min(until, next));
    this.runAll();
  }
  private runAll(): boolean {
    const s = this.stepping;
    const models = s.models;
    let worked = false;
    for (let i = 0; i < models.length; i++) if (models[i]!.runOnce(s.nowNs)) worked = true;
    return worked;
  }
}

let opened = 0;

export function openEmu(config: EmuConfig): Result<EmuDevice> {
  const queueSab = allocWriteQueue();
  const wakeSab = allocWake();
  const bar0 = new SharedArrayBuffer(BAR0_BYTES);
  const bar2 = new SharedArrayBuffer(BAR2_BYTES);
  const identity: PciIdentity = { address: `emu${opened++}`, vendorId: BCM57508.vendorId, deviceId: BCM57508.deviceId };
  const init = { config, queue: queueSab, wake: wakeSab, bar0, bar2 };

  if (config.mode === 'stepped') {
    let model: NicModel;
    try {
      model = new NicModel(init);
    } catch (e) {
      return err(`cannot start the software NIC: ${(e as Error).message}`);
    }
    // A pair cable's NICs step on the pair's shared clock (its port joined the pair above).
    const link = config.cable.kind === 'pair' ? pairLink(config.cable.name) : undefined;
    const stepping = link?.stepping ?? new SharedStepping();
    stepping.models.push(model);
    const clock = new SteppedClock(stepping);
    const closeModel = () => {
      const i = stepping.models.indexOf(model);
      if (i >= 0) stepping.models.splice(i, 1);
      model.close();
    };
    const queue = new WriteQueueProducer(queueSab, () => clock.relax());
    const mapper: DmaMapper = {
      map: (iova, memory, length) => model.iommu.map(iova, memory, length),
      unmap: (iova) => model.iommu.unmap(iova),
    };
    return ok(makeDevice(identity, config, queue, bar0, bar2, new EmuDmaMemory(mapper), clock, model.controls, closeModel));
  }

  // A missing worker file would only show as a start-up timeout: find it first, or say where it is not.
  const workerFile = findWorkerFile();
  if (!workerFile.ok) return workerFile;
  const { port1: hostPort, port2: modelPort } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(workerFile.value, { workerData: { ...init, port: modelPort }, transferList: [modelPort] });
  } catch (e) {
    return err(`cannot start the software NIC's worker: ${(e as Error).message}`);
  }
  worker.unref();
  worker.on('error', (e) => { console.error('emu worker died:', e); });
  const wake = new Int32Array(wakeSab);
  const clock = new ThreadClock(wake);
  const queue = new WriteQueueProducer(queueSab, () => clock.sleep(50));
  let workerGone = false;
  const post = (m: ControlMessage) => {
    // After close nobody takes the queue: drop (frees of quarantined memory come after close).
    if (workerGone) return;
    hostPort.postMessage(m);
    queue.push(WriteKind.Control, 0, 0, 0);
  };
  const mapper: DmaMapper = {
    map: (iova, memory, length) => post({ op: 'map', iova, memory, length }),
    unmap: (iova) => post({ op: 'unmap', iova }),
  };
  let nextId = 1;
  const call = (name: string, args: unknown[]): unknown => {
    const id = nextId++;
    post({ op: 'call', id, name, args });
    const reply = awaitReply(hostPort, id, clock, worker);
    if (reply instanceof Error) throw reply;
    return reply;
  };
  // Wait for the model's first sign of life (with its controls' names) so open fails cleanly
  // if the worker cannot start.
  const started = awaitReply(hostPort, 0, clock, worker, 10_000_000);
  if (started instanceof Error) {
    void worker.terminate();
    return err(`the software NIC did not start: ${started.message}`);
  }
  const control = controlsByName(started as ControlNames, call);
  const close = () => {
    post({ op: 'close' });
    workerGone = true;
    hostPort.close();
    void worker.terminate();
  };
  return ok(makeDevice(identity, config, queue, bar0, bar2, new EmuDmaMemory(mapper), clock, control, close));
}

function makeDevice(
  identity: PciIdentity, config: EmuConfig, queue: WriteQueueProducer, bar0: SharedArrayBuffer, bar2: SharedArrayBuffer,
  dma: DmaMemory, clock: Clock, emu: EmuControls, closeModel: () => void,
): EmuDevice {
  const bars = {
    0: new EmuMmio(BAR0_BYTES, bar0, queue, WriteKind.Bar0Write32),
    2: new EmuMmio(BAR2_BYTES, bar2, queue, WriteKind.Bar2Write32),
  };
  let closed = false;
  return {
    identity, config, dma, clock, emu,
    bar: (index) => bars[index],
    close() {
      if (closed) return;
      closed = true;
      closeModel();
    },
  };
}

function awaitReply(port: MessagePort, id: number, clock: Clock, worker: Worker, timeoutUs = 30_000_000): unknown {
  const start = clock.nowNs();
  for (;;) {
    const m = receiveMessageOnPort(port);
    if (m) {
      const reply = m.message as ControlReply;
      if (reply.id !== id) continue;
      if (!reply.ok) return new Error(reply.error ?? 'control call failed');
      return reply.value;
    }
    if (clock.nowNs() - start > timeoutUs * 1000) return new Error(`no answer from the software NIC's worker (thread ${worker.threadId})`);
    clock.sleep(1000);
  }
}
