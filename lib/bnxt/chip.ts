/**
 * The driver's chip policy: it drives every chip with a profile (firmware-hwrm/chips.ts, the
 * facts), Thor (P5) and Thor2 (P7), end to end: P7 with context memory V2, the two doorbell
 * bases, variable-size WQEs and the MSN table (docs/hardware.md "Thor2 (P7)"). The chip comes
 * from VER_GET's chip_num, as the kernel decides it (BNXT_CHIP_P5 / BNXT_CHIP_P7), not from the
 * PCI device id; a chip_num with no profile (a P3 or P4 chip, an unknown one) is refused at
 * bring-up. A family the project recognises but does not drive has no profile rows
 * (BNXT_FAMILIES marks it not driven), so there is nothing here to switch off.
 */
import { CHIP_PROFILES, chipByNumber, type ChipProfile } from '../../firmware-hwrm/chips.ts';

export type { ChipFamily, ChipProfile } from '../../firmware-hwrm/chips.ts';

/**
 * The profile whose PF PCI device id is `deviceId`: only for what must be known before VER_GET
 * names the chip (its first timeout, as DPDK bnxt_hwrm.c keys it on the PCI id).
 */
export function chipByPciId(deviceId: number): ChipProfile | undefined {
  return CHIP_PROFILES.find((p) => p.pciDeviceId === deviceId);
}

/** The profile of the chip VER_GET named, which the driver drives; undefined: not driven (P3/P4, unknown). */
export function chipProfile(chipNum: number): ChipProfile | undefined {
  return chipByNumber(chipNum);
}
