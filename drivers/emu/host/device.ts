/**
 * The software NIC as a Device: BAR writes go through the write queue, BAR reads come from
 * the model's published registers, DMA memory is mapped into the model's IOMMU. The model
 * runs in a worker thread (worker-host.ts), inline in this thread on the real clock
 * (inline-host.ts; inline-udp-host.ts for a UDP cable) or stepped in this thread on a virtual clock (stepped-host.ts).
 */
import type { Device, Mmio, PciIdentity, RandomSource } from '../../device.ts';
import { CryptoRandom } from '../../crypto-random.ts';
import { Random } from '../model/random.ts';
import { ok, err, type Result } from '../../../firmware-hwrm/result.ts';
import { allocWriteQueue, WriteKind } from '../model/write-queue.ts';
import { setWriteQueueWakeFd, WriteQueueProducer } from './write-queue-producer.ts';
import { closeWakeFd, openWakeFd } from './wake-fd.ts';
import { udpThroughLibc } from './cable/udp-socket-cable.ts';
import { allocWake } from './wake.ts';
import { EmuDmaMemory } from './dma-memory.ts';
import type { EmuControls } from './control.ts';
import { emuChip, type EmuConfig } from '../model/config.ts';
import { BAR0_BYTES, BAR2_BYTES, BAR2_PUBLISHED_BYTES } from '../model/nic-model.ts';
import type { HostInit, ModelHost } from './model-host.ts';
import { hostStepped } from './stepped-host.ts';
import { hostInline } from './inline-host.ts';
import { hostInlineUdp } from './inline-udp-host.ts';
import { hostInWorker } from './worker-host.ts';

export { BAR0_BYTES, BAR2_BYTES };
export type { EmuControls };

export interface EmuDevice extends Device {
  /** The model's test and fault controls, typed; the same calls in stepped and thread mode. */
  readonly emu: EmuControls;
  readonly config: EmuConfig;
}

class EmuMmio implements Mmio {
  private readonly regs: Int32Array;
  private readonly publishedWords: number = 0;
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
    if ((offset & 3) !== 0 || offset < 0 || offset >= this.size)
      throw new RangeError(`MMIO read at 0x${offset.toString(16)}: not an aligned offset of the BAR`);
    const word = offset >>> 2;
    return word < this.publishedWords ? Atomics.load(this.regs, word) >>> 0 : 0;
  }
  write32(offset: number, value: number): void {
    if ((offset & 3) !== 0 || offset < 0 || offset >= this.size)
      throw new RangeError(`MMIO write at 0x${offset.toString(16)}: not an aligned offset of the BAR`);
    this.queue.push(this.writeKind, offset, value, 0);
  }
  doorbell64(offset: number, lo: number, hi: number): void {
    // 2: WriteKind.Bar2Doorbell64, a literal (an imported const enum is a property load here, 6
    // more bytes of bytecode in every post V8 inlines this into, against its inlining budget).
    this.queue.push(2, offset, lo, hi);
  }
}

if ((WriteKind.Bar2Doorbell64 as number) !== 2) throw new Error('EmuMmio.doorbell64: the kind is 2');

let opened = 0;


/**
 * Opens a software NIC as `given` says. Its chip (given.chip, else RIG_BNXT_CHIP's, else BCM57608)
 * is settled here, once, so a worker thread builds the same chip; an unknown name is a misuse
 * (InvalidArgument naming the known chips).
 */
export function openEmu(given: EmuConfig): Result<EmuDevice> {
  const chip = emuChip(given.chip);
  const config: EmuConfig = { ...given, chip: chip.name };
  // BAR2 holds doorbells only: writes go through the queue and the model publishes nothing
  // there, so its read-back words need one page, not the BAR's 16 MiB (a fresh zeroed 16 MiB
  // per NIC opened is what kept the RSS of a process growing as NICs came and went).
  const init: HostInit = {
    config, queue: allocWriteQueue(), wake: allocWake(), bar0: new SharedArrayBuffer(BAR0_BYTES),
    bar2: new SharedArrayBuffer(BAR2_PUBLISHED_BYTES),
  };
  const identity: PciIdentity = { address: `emu${opened++}`, vendorId: chip.pciVendorId, deviceId: chip.pciDeviceId };
  let host: ModelHost;
  if (config.mode !== 'thread') {
    try {
      host = config.mode === 'stepped' ? hostStepped(init)
        : config.cable.kind === 'udp' ? hostInlineUdp(init) : hostInline(init);
    } catch (e) {
      return err(`cannot start the software NIC: ${(e as Error).message}`);
    }
  } else {
    // A worker reading its UDP socket through libc sleeps in poll(2): the driver wakes it through an eventfd.
    const wakeFd = config.cable.kind === 'udp' && config.udpIo === 'libc' && udpThroughLibc() ? openWakeFd() : -1;
    if (wakeFd >= 0) setWriteQueueWakeFd(init.queue, wakeFd);
    const started = hostInWorker(init);
    if (!started.ok) {
      closeWakeFd(wakeFd);
      return started;
    }
    const worker = started.value;
    host = wakeFd < 0 ? worker : {
      ...worker,
      close() {
        try {
          worker.close();
        } finally {
          closeWakeFd(wakeFd); // the worker has stopped: nobody polls it any more
        }
      },
    };
  }
  return ok(makeDevice(identity, config, init, host));
}

/**
 * The driver's random numbers: from the open's seed when stepped (a seed replays a run, PSN
 * wraps included), else crypto-random as on hardware. A stream of its own, apart from the
 * model's PRNG, so the driver's draws never move the model's fault choices.
 */
function randomSourceFor(config: EmuConfig): RandomSource {
  return config.mode === 'stepped' ? new Random((config.seed ^ DRIVER_STREAM) >>> 0) : new CryptoRandom();
}

/** Mixed into the seed for the driver's stream ("PSN" in ASCII). */
const DRIVER_STREAM = 0x50534e;

function makeDevice(identity: PciIdentity, config: EmuConfig, init: HostInit, host: ModelHost): EmuDevice {
  const bars = {
    0: new EmuMmio(BAR0_BYTES, init.bar0, host.queue, WriteKind.Bar0Write32),
    2: new EmuMmio(BAR2_BYTES, init.bar2, host.queue, WriteKind.Bar2Write32),
  };
  let closed = false;
  return {
    identity, config, dma: new EmuDmaMemory(host.mapper), clock: host.clock, emu: host.controls,
    random: randomSourceFor(config), bar: (index) => bars[index],
    // Every mode but 'thread' runs the model in this thread (openEmu: stepped, inline, inline UDP).
    writesInCallerThread: config.mode !== 'thread',
    close() {
      if (closed) return;
      closed = true;
      host.close();
    },
  };
}
