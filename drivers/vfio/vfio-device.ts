/**
 * A bnxt PCI function owned through VFIO, as the Device boundary sees it. Made by openVfio.
 * `Chip` is undefined only for a non-bnxt device opened with VfioAllowOptions.allowDevice.
 */
import type { Clock, Device, Mmio, PciIdentity, RandomSource } from '../device.ts';
import { CryptoRandom } from '../crypto-random.ts';
import { invalid } from '../../firmware-hwrm/errors.ts';
import type { VfioDmaMemory } from './dma.ts';
import type { BnxtPciId } from './pci-ids.ts';
import type { Ledger } from '../ledger.ts';

export class VfioDevice<Chip extends BnxtPciId | undefined = BnxtPciId> implements Device {
  private closed = false;
  /** A real NIC's queue pairs start at unpredictable PSNs. */
  readonly random: RandomSource = new CryptoRandom();

  constructor(
    readonly identity: PciIdentity,
    /** Part name and chip family from the PCI device id. */
    readonly chip: Chip,
    private readonly bar0: Mmio,
    /** Absent only on an allowed non-bnxt device without BAR2. */
    private readonly bar2: Mmio | undefined,
    readonly dma: VfioDmaMemory,
    readonly clock: Clock,
    /** Everything openVfio acquired; unwinding it is close(). */
    private readonly acquired: Ledger,
  ) {}

  bar(index: 0 | 2): Mmio {
    if (this.closed) invalid(`${this.identity.address} is closed`);
    if (index === 0) return this.bar0;
    if (index === 2) return this.bar2 ?? invalid(`${this.identity.address} has no BAR2`);
    return invalid(`BAR ${String(index)}: only BAR0 and BAR2 are mapped`);
  }

  /**
   * Clears Bus Master (no DMA after this), unmaps BAR2 and BAR0, unmaps and frees every DMA
   * buffer, closes the device, group and container fds: the reverse of openVfio. Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const failures = this.acquired.unwind();
    if (failures.length > 0) process.emitWarning(`rig-bnxt: closing ${this.identity.address}: ${failures.join('; ')}`);
  }
}
