/**
 * The software NIC as a vfio-user device: its config space (a PF of its chip), BAR0 and BAR2 wired
 * to the model's bus entry points (the same write queue and published registers the in-process
 * driver uses, so the model cannot tell who drives it), BAR4 holding the MSI-X table and PBA,
 * guest memory in the model's IOMMU, and the MSI-X vectors.
 *
 * PCIe ordering: a read never passes an earlier posted write, so every BAR read first lets the
 * model take what was written before it.
 */
import { NicModel } from '../../model/nic-model.ts';
import { BAR0_BYTES, BAR2_BYTES, BAR2_PUBLISHED_BYTES } from '../../model/nic-model.ts';
import { allocWriteQueue, WriteKind } from '../../model/write-queue.ts';
import { WriteQueueProducer } from '../write-queue-producer.ts';
import { allocWake } from '../wake.ts';
import { hostServices } from '../services.ts';
import type { EmuConfig } from '../../model/config.ts';
import type { ChipProfile } from '../../../../firmware-hwrm/chips.ts';
import { HWRM_COMMANDS, hwrmRequestName } from '../../../../firmware-hwrm/hwrm/commands.ts';
import { PciConfigSpace, buildVpd, type PciConfigSpec } from './pci-config.ts';
import { MsixVectors } from './interrupts.ts';
import { GuestMemory } from './guest-memory.ts';
import { REGION } from './protocol.ts';
import { L2Engine } from '../../model/l2/l2-engine.ts';
import { RoceInterrupts } from './roce-interrupts.ts';
import type { BarRegion, SessionDevice } from './session.ts';

export const BAR4_BYTES = 16 * 1024;
export const MSIX_VECTORS = 64;
const MSIX_TABLE_OFFSET = 0x0000;
const MSIX_PBA_OFFSET = 0x2000;
const HWRM_TRIGGER = 0x100;

/**
 * The config space of a PF of `chip` as the software NIC presents it (docs/vfio-user.md): ids
 * and revision from the chip profile, the adapter's subsystem id and part number from its model
 * facts (firmware-hwrm/chips.ts).
 */
export function pfConfigSpec(chip: ChipProfile, mac: Uint8Array): PciConfigSpec {
  const serial = Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('');
  const board = chip.model.board;
  return {
    vendorId: chip.pciVendorId, deviceId: chip.pciDeviceId, revision: chip.model.chipRev,
    subsystemVendorId: chip.pciVendorId, subsystemId: board.subsystemId,
    barBytes: [BAR0_BYTES, BAR2_BYTES, BAR4_BYTES],
    msixVectors: MSIX_VECTORS, msixTableOffset: MSIX_TABLE_OFFSET, msixPbaOffset: MSIX_PBA_OFFSET,
    vpd: buildVpd(`Broadcom ${chip.name} NetXtreme-E (rig-bnxt software NIC)`, {
      PN: board.partNumber, EC: 'A0', SN: serial, MN: '14e4',
    }),
    // The DSN as an EUI-64 made from the MAC (OUI, ff:fe, NIC part); bnxt_en uses it as the switch id.
    serialNumber: [
      (mac[5]! | (mac[4]! << 8) | (mac[3]! << 16) | (0xfe << 24)) >>> 0,
      (0xff | (mac[2]! << 8) | (mac[1]! << 16) | (mac[0]! << 24)) >>> 0,
    ],
  };
}

export interface HwrmObservation {
  readonly reqType: number;
  readonly name: string;
  readonly seqId: number;
  /** error_code of the answer (-1: no answer was written). */
  readonly errorCode: number;
}

export class NicVfioDevice implements SessionDevice {
  readonly model: NicModel;
  readonly config: PciConfigSpace;
  readonly vectors: MsixVectors;
  readonly memory: GuestMemory;
  readonly bars: ReadonlyMap<number, BarRegion>;
  /** bnxt_en's completion rings, NQs and their MSI-X vectors. */
  readonly l2: L2Engine;
  /** bnxt_re's CREQ and NQ vectors. */
  readonly roceIrqs: RoceInterrupts;
  /** Every HWRM request the guest triggered, with the answer's error code (the command sequence). */
  readonly hwrmLog: HwrmObservation[] = [];
  onHwrm: (o: HwrmObservation) => void = () => {};
  private readonly queue: WriteQueueProducer;
  private readonly bar0: Uint8Array;
  private readonly bar4 = new Uint8Array(BAR4_BYTES);
  private readonly scratch = new DataView(new ArrayBuffer(8));

  constructor(config: EmuConfig) {
    const queueSab = allocWriteQueue();
    const bar0 = new SharedArrayBuffer(BAR0_BYTES);
    this.model = new NicModel(
      { config, queue: queueSab, bar0, bar2: new SharedArrayBuffer(BAR2_PUBLISHED_BYTES) },
      hostServices(config.mode, allocWake()),
    );
    this.queue = new WriteQueueProducer(queueSab, () => this.run());
    this.bar0 = new Uint8Array(bar0);
    // Linux's pcie_flr (and `echo 1 > .../reset`) starts an FLR: the function resets as at DEVICE_RESET,
    // but the eventfds QEMU wired stay (MSI-X itself is off until the driver enables it again).
    this.config = new PciConfigSpace(pfConfigSpec(this.model.bus.chip, config.mac), () => this.resetFunction());
    this.vectors = new MsixVectors(
      MSIX_VECTORS, () => this.config.busMaster && this.config.msixEnabled, undefined,
      (vector, pending) => this.setPendingBit(vector, pending),
    );
    this.l2 = new L2Engine(
      this.model.bus, this.model.resources, (vector) => this.vectors.signal(vector),
      (frame, length) => this.model.engine.sendL2Frame(frame, length),
    );
    this.model.engine.onL2Frame = (frame, length) => this.l2.receive(frame, length);
    this.roceIrqs = new RoceInterrupts(this.model.iommu, this.model.resources, (vector) => this.vectors.signal(vector));
    this.memory = new GuestMemory({
      map: (iova, memory, length) => this.model.iommu.map(iova, memory, length),
      unmap: (iova) => this.model.iommu.unmap(iova),
    });
    this.model.iommu.remote = this.memory; // fd-less ranges: DMA_READ/DMA_WRITE (guest-memory.ts)
    this.bars = new Map<number, BarRegion>([
      [REGION.BAR0, {
        size: BAR0_BYTES, read: (o, n) => this.readBar0(o, n),
        write: (o, d) => this.writeBar(WriteKind.Bar0Write32, o, d),
      }],
      [REGION.BAR2, { size: BAR2_BYTES, read: (_o, n) => {
        this.run();
        return new Uint8Array(n);
      }, write: (o, d) => this.writeBar(WriteKind.Bar2Write32, o, d) }],
      [REGION.BAR4, { size: BAR4_BYTES, read: (o, n) => this.bar4.slice(o, o + n), write: (o, d) => {
        // The PBA is read-only (PCIe base spec, MSI-X PBA): only the table part of a write lands.
        if (o < MSIX_PBA_OFFSET) this.bar4.set(d.subarray(0, MSIX_PBA_OFFSET - o), o);
      } }],
    ]);
  }

  /** A vector's pending bit in the PBA (bit v of the little-endian bit array at BAR4 + 0x2000). */
  private setPendingBit(vector: number, pending: boolean): void {
    const at = MSIX_PBA_OFFSET + (vector >>> 3);
    const bit = 1 << (vector & 7);
    this.bar4[at] = pending ? this.bar4[at]! | bit : this.bar4[at]! & ~bit;
  }

  /**
   * Lets the model take every queued write and do its due work; true if it did anything. Not
   * while it is already running, or while an in-band DMA waits for the client (requests answered
   * meanwhile must not re-enter it: remote-dma.ts): writes queued then are taken at the next run.
   */
  run(): boolean {
    if (this.running || this.dmaWaiting()) return false;
    this.running = true;
    try {
      let worked = false;
      for (let i = 0; i < 64 && this.model.runOnce(performance.now() * 1e6); i++) worked = true;
      this.roceIrqs.check();
      return worked;
    } finally {
      this.running = false;
    }
  }

  private running = false;
  /** True while an in-band DMA waits for its reply (set by the server's connection). */
  dmaWaiting: () => boolean = () => false;

  nextDeadlineNs(): number {
    return this.model.nextDeadlineNs();
  }

  private readBar0(offset: number, count: number): Uint8Array {
    this.run();
    return this.bar0.slice(offset, offset + count);
  }

  /** Splits a write into the 32-bit (or, on BAR2, 64-bit doorbell) bus writes the model takes. */
  private writeBar(kind: WriteKind, offset: number, data: Uint8Array): void {
    const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
    if (kind === WriteKind.Bar2Write32 && data.length === 8 && (offset & 7) === 0) {
      const lo = dv.getUint32(0, true);
      const hi = dv.getUint32(4, true);
      // L2-path doorbells (bnxt_en's rings) go to the L2 side; RoCE doorbells to the engine.
      if (this.l2.doorbell(lo, hi)) return;
      this.roceIrqs.doorbell(lo, hi);
      this.queue.push(WriteKind.Bar2Doorbell64, offset, lo | 0, hi | 0);
    } else if ((offset & 3) === 0 && (data.length & 3) === 0) {
      for (let i = 0; i < data.length; i += 4) this.push32(kind, offset + i, dv.getUint32(i, true));
    } else {
      // A narrow write: merge into the word the driver last wrote (BAR0 keeps them) and write that.
      for (let word = offset & ~3; word < offset + data.length; word += 4) {
        const s = this.scratch;
        s.setUint32(0, kind === WriteKind.Bar0Write32 ? this.model.bar0Written[word >>> 2]! : 0, true);
        for (let b = 0; b < 4; b++)
          if (word + b >= offset && word + b < offset + data.length) s.setUint8(b, data[word + b - offset]!);
        this.push32(kind, word, s.getUint32(0, true));
      }
    }
    this.run();
  }

  private push32(kind: WriteKind, offset: number, value: number): void {
    const answered = this.model.hwrm.answered;
    this.queue.push(kind, offset, value | 0, 0);
    if (kind === WriteKind.Bar0Write32 && offset === HWRM_TRIGGER && value === 1) {
      this.run();
      this.observeHwrm(this.model.hwrm.answered !== answered);
    }
  }

  /**
   * Records the request's type and the answer's error code, as the firmware wrote them (the
   * decoded trace is the firmware's: config.tracePath). Nothing is read back from guest memory:
   * a card makes no such access, and through in-band DMA it would be a round trip to the client.
   */
  private observeHwrm(answered: boolean): void {
    const w = this.model.bar0Written;
    const a = this.model.hwrm.lastAnswer;
    const reqType = answered ? a.reqType : w[0]! & 0xffff;
    // Not answered: a short command's (signature 0x4321 at +2) seq_id lies in guest memory, unread.
    const seqId = answered ? a.seqId : w[0]! >>> 16 === 0x4321 ? -1 : w[1]! & 0xffff;
    const errorCode = answered ? a.errorCode : -1;
    const o: HwrmObservation = { reqType, name: hwrmRequestName(reqType), seqId, errorCode };
    this.hwrmLog.push(o);
    this.onHwrm(o);
    // HWRM_FUNC_RESET dropped every ring (a second probe, after rmmod, reuses their ids).
    if (reqType === HWRM_COMMANDS.FUNC_RESET.req_type && o.errorCode === 0) this.forgetRings();
    // A request naming a completion ring also gets HWRM_DONE there (Linux bnxt_hwrm.c __hwrm_send).
    if (answered && a.cmplRing !== 0xffff) this.l2.hwrmDone(a.cmplRing, a.seqId);
  }

  /**
   * DEVICE_RESET (QEMU sends it at machine reset and for a guest-requested device reset): the
   * function back to its power-on state, config space, MSI-X table and vectors included.
   */
  reset(): void {
    this.resetFunction();
    this.vectors.clear();
  }

  /**
   * A function reset: config space and MSI-X table at power-on values, and the firmware drops
   * everything the function held (as HWRM_FUNC_RESET does: rings, contexts, registration, context
   * memory, RoCE objects), so nothing the old driver set up stays live or DMAs after the reset.
   */
  private resetFunction(): void {
    this.run(); // writes posted before the reset are taken first (PCIe ordering)
    this.config.reset();
    this.bar4.fill(0);
    this.vectors.resetMasks();
    this.model.hwrm.resetFunction();
    this.forgetRings();
  }

  /** The L2 side's and the RoCE interrupts' ring positions: none of the function's rings is left. */
  private forgetRings(): void {
    this.l2.reset();
    this.roceIrqs.reset();
  }

  close(): void {
    this.vectors.clear();
    this.memory.close();
    this.model.close();
  }
}
