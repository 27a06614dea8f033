/**
 * The PCI configuration space of the software NIC as a physical function of its chip, with the
 * write semantics a device has: only the writable bits of each register change (QEMU's
 * vfio-user client reads non-emulated bits back from the server, so a write that did not
 * stick would, for example, turn memory decoding off again), BARs size themselves, and the
 * VPD capability answers the address/flag handshake of PCI 3.0 section 6.4.
 *
 * Layout (offsets chosen by us, contents by the PCI and PCIe specs): header with three 64-bit
 * prefetchable BARs (0: registers, 2: doorbells, 4: MSI-X table and PBA), then the capability
 * list Power Management (0x48), VPD (0x50), MSI-X (0xa0), PCI Express v2 endpoint (0xac), and
 * the Device Serial Number extended capability (0x100).
 * docs/vfio-user.md lists what of this is from a real card and what is our choice.
 */

export interface PciConfigSpec {
  readonly vendorId: number;
  readonly deviceId: number;
  readonly revision: number;
  readonly subsystemVendorId: number;
  readonly subsystemId: number;
  /** Sizes of BAR0, BAR2, BAR4 in bytes (powers of two). */
  readonly barBytes: readonly [number, number, number];
  readonly msixVectors: number;
  /** MSI-X table and PBA offsets inside BAR4. */
  readonly msixTableOffset: number;
  readonly msixPbaOffset: number;
  readonly vpd: Uint8Array;
  /** Device Serial Number (PCIe extended capability 3), 64 bits as two dwords. */
  readonly serialNumber: readonly [low: number, high: number];
}

export const CONFIG_BYTES = 4096;
export const CAP = { PM: 0x48, VPD: 0x50, MSIX: 0xa0, PCIE: 0xac } as const;
export const EXT_CAP = { DSN: 0x100 } as const;
const BAR_OFFSETS = [0x10, 0x18, 0x20] as const;
/** Memory BAR, 64-bit (type 2), prefetchable: the low nibble of the BAR register. */
const BAR_FLAGS = 0xc;

export const COMMAND = { IO: 0x1, MEMORY: 0x2, MASTER: 0x4, PARITY: 0x40, SERR: 0x100, INTX_DISABLE: 0x400 } as const;
export const MSIX_CONTROL = { ENABLE: 0x8000, FUNCTION_MASK: 0x4000 } as const;

export class PciConfigSpace {
  readonly bytes = new Uint8Array(CONFIG_BYTES);
  /** Per byte: the bits a write may change. */
  private readonly writable = new Uint8Array(CONFIG_BYTES);
  private readonly dv = new DataView(this.bytes.buffer);

  /**
   * `onFunctionReset`: software set Initiate Function Level Reset (PCIe device control bit 15),
   * which resets the function; this space is back at its power-on values when it returns.
   */
  constructor(private readonly spec: PciConfigSpec, private readonly onFunctionReset: () => void = () => {}) {
    this.reset();
  }

  /** Power-on values (also after a function reset). */
  reset(): void {
    const s = this.spec;
    const dv = this.dv;
    this.bytes.fill(0);
    this.writable.fill(0);
    dv.setUint16(0x00, s.vendorId, true);
    dv.setUint16(0x02, s.deviceId, true);
    this.mask16(0x04,
      COMMAND.IO | COMMAND.MEMORY | COMMAND.MASTER | COMMAND.PARITY | COMMAND.SERR | COMMAND.INTX_DISABLE);
    dv.setUint16(0x06, 0x0010, true); // status: capability list present
    dv.setUint32(0x08, (0x020000 << 8) | s.revision, true); // class: network controller, Ethernet
    this.writable[0x0c] = 0xff; // cache line size
    this.writable[0x0d] = 0xff; // latency timer
    BAR_OFFSETS.forEach((at, i) => {
      const size = s.barBytes[i]!;
      if (size < 16 || (size & (size - 1)) !== 0)
        throw new RangeError(`BAR${2 * i} size ${size} is not a power of two`);
      dv.setUint32(at, BAR_FLAGS, true);
    });
    dv.setUint16(0x2c, s.subsystemVendorId, true);
    dv.setUint16(0x2e, s.subsystemId, true);
    this.bytes[0x34] = CAP.PM;
    this.writable[0x3c] = 0xff; // interrupt line; interrupt pin 0: no INTx (MSI-X only)

    // Power Management v3: D0 only matters; PMCSR's power state bits are writable.
    this.bytes[CAP.PM] = 0x01;
    this.bytes[CAP.PM + 1] = CAP.VPD;
    dv.setUint16(CAP.PM + 2, 0x0003, true);
    this.mask16(CAP.PM + 4, 0x0003);

    // VPD: address/flag word at +2, data dword at +4.
    this.bytes[CAP.VPD] = 0x03;
    this.bytes[CAP.VPD + 1] = CAP.MSIX;
    this.mask16(CAP.VPD + 2, 0xffff);
    this.mask32(CAP.VPD + 4, 0xffffffff);

    // MSI-X: table size N-1, table and PBA in BAR4 (BIR 4).
    this.bytes[CAP.MSIX] = 0x11;
    this.bytes[CAP.MSIX + 1] = CAP.PCIE;
    dv.setUint16(CAP.MSIX + 2, s.msixVectors - 1, true);
    this.mask16(CAP.MSIX + 2, MSIX_CONTROL.ENABLE | MSIX_CONTROL.FUNCTION_MASK);
    dv.setUint32(CAP.MSIX + 4, s.msixTableOffset | 4, true);
    dv.setUint32(CAP.MSIX + 8, s.msixPbaOffset | 4, true);

    // PCI Express capability v2, endpoint: 512-byte max payload, FLR capable; link 16 GT/s x16.
    this.bytes[CAP.PCIE] = 0x10;
    this.bytes[CAP.PCIE + 1] = 0x00;
    dv.setUint16(CAP.PCIE + 2, 0x0002, true);
    dv.setUint32(CAP.PCIE + 4, (1 << 28) | 0x2, true);
    dv.setUint16(CAP.PCIE + 8, 0x2810, true); // device control: max read request 512, relaxed ordering, max payload 128
    this.mask16(CAP.PCIE + 8, 0x7fff); // bit 15 would start a function level reset: never latched
    dv.setUint32(CAP.PCIE + 0x0c, (16 << 4) | 4, true);
    this.mask16(CAP.PCIE + 0x10, 0x0fff);
    dv.setUint16(CAP.PCIE + 0x12, (16 << 4) | 4, true);
    dv.setUint32(CAP.PCIE + 0x24, 0x0000_0010, true); // device capabilities 2: completion timeout disable
    this.mask16(CAP.PCIE + 0x28, 0xffff);
    dv.setUint32(CAP.PCIE + 0x2c, 0x0000_001e, true); // link capabilities 2: 2.5, 5, 8, 16 GT/s
    this.mask16(CAP.PCIE + 0x30, 0xffff);
    dv.setUint16(CAP.PCIE + 0x32, 0x0000, true);

    // Extended capabilities (PCIe config 0x100+): Device Serial Number only, the end of the list.
    dv.setUint32(EXT_CAP.DSN, 0x0003 | (1 << 16) | (0 << 20), true);
    dv.setUint32(EXT_CAP.DSN + 4, s.serialNumber[0] >>> 0, true);
    dv.setUint32(EXT_CAP.DSN + 8, s.serialNumber[1] >>> 0, true);
  }

  private mask16(at: number, mask: number): void {
    this.writable[at] = mask & 0xff;
    this.writable[at + 1] = mask >>> 8;
  }
  private mask32(at: number, mask: number): void {
    this.mask16(at, mask & 0xffff);
    this.mask16(at + 2, mask >>> 16);
  }

  get command(): number {
    return this.dv.getUint16(0x04, true);
  }
  get msixControl(): number {
    return this.dv.getUint16(CAP.MSIX + 2, true);
  }
  get msixEnabled(): boolean {
    return (this.msixControl & MSIX_CONTROL.ENABLE) !== 0;
  }
  get msixFunctionMasked(): boolean {
    return (this.msixControl & MSIX_CONTROL.FUNCTION_MASK) !== 0;
  }
  get busMaster(): boolean {
    return (this.command & COMMAND.MASTER) !== 0;
  }

  /** Bytes [offset, offset+count); reads past the space are all-ones, as on a bus. */
  read(offset: number, count: number): Uint8Array {
    const out = new Uint8Array(count).fill(0xff);
    for (let i = 0; i < count; i++) if (offset + i < CONFIG_BYTES) out[i] = this.bytes[offset + i]!;
    return out;
  }

  write(offset: number, data: Uint8Array): void {
    const count = data.length;
    // BAR sizing: a dword write to a BAR's low dword keeps only the address bits its size allows.
    const bar = BAR_OFFSETS.indexOf(offset as (typeof BAR_OFFSETS)[number]);
    if (bar >= 0 && count === 4) {
      const size = this.spec.barBytes[bar]!;
      const value = new DataView(data.buffer, data.byteOffset, 4).getUint32(0, true);
      this.dv.setUint32(offset, ((value & ~(size - 1)) | BAR_FLAGS) >>> 0, true);
      return;
    }
    if (BAR_OFFSETS.some((at) => offset === at + 4) && count === 4) {
      this.bytes.set(data, offset); // upper dword: every BAR is below 4 GiB, all bits writable
      return;
    }
    for (let i = 0; i < count; i++) {
      const at = offset + i;
      if (at >= CONFIG_BYTES) break;
      const m = this.writable[at]!;
      this.bytes[at] = (this.bytes[at]! & ~m) | (data[i]! & m);
    }
    if (offset <= CAP.VPD + 3 && offset + count > CAP.VPD + 2) this.vpdAccess();
    // The bit never latches (mask above); writing it 1 resets the function (PCIe 6.6.2, FLR).
    const flrByte = CAP.PCIE + 9;
    if (offset <= flrByte && offset + count > flrByte && (data[flrByte - offset]! & 0x80) !== 0) {
      this.onFunctionReset();
    }
  }

  /**
   * The VPD handshake: software writes an address with flag 0 and polls for flag 1, then reads
   * the data dword; a write (flag 1 written) is refused by clearing the flag at once, as
   * read-only VPD does.
   */
  private vpdAccess(): void {
    const word = this.dv.getUint16(CAP.VPD + 2, true);
    const address = word & 0x7fff;
    if ((word & 0x8000) === 0) {
      for (let i = 0; i < 4; i++) this.bytes[CAP.VPD + 4 + i] = this.spec.vpd[address + i] ?? 0;
      this.dv.setUint16(CAP.VPD + 2, word | 0x8000, true);
    } else {
      this.dv.setUint16(CAP.VPD + 2, address, true);
    }
  }
}

/**
 * A VPD image (PCI 3.0 section 6.4 resource tags): the identifier string, a VPD-R section with
 * the given keywords and the RV checksum that makes every byte up to it sum to zero, the end tag.
 */
export function buildVpd(identifier: string, keywords: Readonly<Record<string, string>>): Uint8Array {
  const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0x7f);
  const id = ascii(identifier);
  const fields: number[] = [];
  for (const [k, v] of Object.entries(keywords)) {
    if (k.length !== 2 || v.length > 255) throw new RangeError(`VPD keyword ${k}`);
    fields.push(k.charCodeAt(0), k.charCodeAt(1), v.length, ...ascii(v));
  }
  const roLength = fields.length + 4; // + "RV", length 1, checksum
  const out: number[] = [
    0x82, id.length & 0xff, id.length >>> 8, ...id, 0x90, roLength & 0xff, roLength >>> 8, ...fields, 0x52, 0x56, 1,
  ];
  const sum = out.reduce((a, b) => a + b, 0);
  out.push((256 - (sum & 0xff)) & 0xff);
  out.push(0x78);
  return Uint8Array.from(out);
}
