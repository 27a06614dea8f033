/**
 * Which PCI ids are bnxt functions, and of which chip family: the one table of them
 * (from the kernel's bnxt_pci_tbl in bnxt.c and DPDK's bnxt_pci_id_map in bnxt_ethdev.c).
 * The driver targets P5 (Thor); the other families are recognised so their users get a
 * precise answer. The kernel itself decides P5/P7 from VER_GET's chip_num, not from this id.
 */

export const BROADCOM_VENDOR_ID = 0x14e4;

export type BnxtChipFamily = 'P5' | 'P7' | 'P4' | 'P3';

export interface BnxtPciId {
  readonly deviceId: number;
  readonly part: string;
  readonly family: BnxtChipFamily;
}

const pf = (deviceId: number, part: string, family: BnxtChipFamily): BnxtPciId => ({ deviceId, part, family });

/** Physical functions, P5 first. */
export const BNXT_PF_IDS: readonly BnxtPciId[] = [
  pf(0x1750, 'BCM57508', 'P5'),
  pf(0x1751, 'BCM57504', 'P5'),
  pf(0x1752, 'BCM57502', 'P5'),
  // NPAR partitions; sources disagree on which of 57508/57504/57502 each names.
  pf(0x1800, 'BCM5750x NPAR', 'P5'),
  pf(0x1801, 'BCM5750x NPAR', 'P5'),
  pf(0x1802, 'BCM5750x NPAR', 'P5'),
  pf(0x1803, 'BCM5750x NPAR', 'P5'),
  pf(0x1804, 'BCM5750x NPAR', 'P5'),
  pf(0x1805, 'BCM5750x NPAR', 'P5'),
  pf(0xd812, 'BCM58812', 'P5'),
  pf(0xd814, 'BCM58814', 'P5'),
  pf(0x1760, 'BCM57608', 'P7'),
  pf(0x1761, 'BCM57604', 'P7'),
  pf(0x1762, 'BCM57602', 'P7'),
  pf(0x1763, 'BCM57601', 'P7'),
  pf(0xd818, 'BCM58818', 'P7'),
  pf(0x16d7, 'BCM57414', 'P4'),
  pf(0x16d8, 'BCM57416', 'P4'),
  pf(0x16d6, 'BCM57412', 'P4'),
  pf(0x16d9, 'BCM57417', 'P4'),
  pf(0x16e2, 'BCM57417 SFP', 'P4'),
  pf(0x16e3, 'BCM57416 SFP', 'P4'),
  pf(0x16ec, 'BCM57414 NPAR', 'P4'),
  pf(0x16ed, 'BCM57414 NPAR', 'P4'),
  pf(0x16ee, 'BCM57416 NPAR', 'P4'),
  pf(0x16ef, 'BCM57416 NPAR', 'P4'),
  pf(0x16de, 'BCM57412 NPAR', 'P4'),
  pf(0x16eb, 'BCM57412 NPAR', 'P4'),
  pf(0x16cc, 'BCM57417 NPAR', 'P4'),
  pf(0x16c0, 'BCM57417 NPAR', 'P4'),
  pf(0x16f1, 'BCM57452', 'P4'),
  pf(0x1614, 'BCM57454', 'P4'),
  pf(0x1604, 'BCM5745x NPAR', 'P4'),
  pf(0x1605, 'BCM5745x NPAR', 'P4'),
  pf(0xd802, 'BCM58802', 'P4'),
  pf(0xd804, 'BCM58804', 'P4'),
  pf(0x16f0, 'BCM58808', 'P4'),
  pf(0x16c8, 'BCM57301', 'P3'),
  pf(0x16c9, 'BCM57302', 'P3'),
  pf(0x16ca, 'BCM57304', 'P3'),
  pf(0x16d0, 'BCM57402', 'P3'),
  pf(0x16d1, 'BCM57404', 'P3'),
  pf(0x16d2, 'BCM57406', 'P3'),
  pf(0x16d5, 'BCM57407', 'P3'),
];

/** Virtual functions (P3/P4/P5/P7, including the Hyper-V ones). */
export const BNXT_VF_DEVICE_IDS: ReadonlySet<number> = new Set([
  0x16c1, 0x16d3, 0x16dc, 0x1606, 0x1609, 0x16cb, 0x16e1, 0x16e5, 0x1607, 0x1608, 0x16bd, 0x16c4, 0x16c5,
  0x16c2, 0x16c3, 0x16e6, 0x1806, 0x1807, 0x1808, 0x1809, 0x1819, 0xd800, 0xd82e,
]);

const pfById = new Map(BNXT_PF_IDS.map((id) => [id.deviceId, id]));

/** The bnxt physical function with these ids, or undefined. */
export function bnxtPhysicalFunction(vendorId: number, deviceId: number): BnxtPciId | undefined {
  return vendorId === BROADCOM_VENDOR_ID ? pfById.get(deviceId) : undefined;
}

export function isBnxtVirtualFunction(vendorId: number, deviceId: number): boolean {
  return vendorId === BROADCOM_VENDOR_ID && BNXT_VF_DEVICE_IDS.has(deviceId);
}
