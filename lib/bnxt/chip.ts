/**
 * The driver's chip policy: which of the chips with a profile (firmware-hwrm/chips.ts, the
 * facts) it drives. The family comes from VER_GET's chip_num, as the kernel decides it
 * (BNXT_CHIP_P5 / BNXT_CHIP_P7), not from the PCI device id.
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

/** The profile of a chip the driver knows, or undefined (P3/P4 chips are not supported). */
export function chipProfile(chipNum: number): ChipProfile | undefined {
  return chipByNumber(chipNum);
}

/**
 * Thor (P5) and Thor2 (P7) are driven end to end: P7 with context memory V2, the two doorbell
 * bases, variable-size WQEs and the MSN table (docs/hardware.md "Thor2 (P7)").
 */
export function chipSupported(p: ChipProfile): boolean {
  return p.family === 'P5' || p.family === 'P7';
}
