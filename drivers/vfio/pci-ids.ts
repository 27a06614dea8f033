/**
 * Which PCI ids are bnxt functions, and of which chip family, as the VFIO side and `rig-bnxt
 * probe` read them: a view of firmware-hwrm/chips.ts's families table (BNXT_FAMILIES), where
 * the ids are kept. The driver drives P5 (Thor) and P7 (Thor2); P3 and P4 functions are
 * recognised so their users get a precise answer. Which chip a function is, the driver (as
 * the kernel) learns from VER_GET's chip_num, not from this id.
 */
import {
  BNXT_FAMILIES, BNXT_VF_DEVICE_IDS, BROADCOM_VENDOR_ID, type BnxtFamily,
} from '../../firmware-hwrm/chips.ts';

export { BNXT_VF_DEVICE_IDS, BROADCOM_VENDOR_ID };

export interface BnxtPciId {
  readonly deviceId: number;
  readonly part: string;
  readonly family: BnxtFamily;
  /** Whether this project drives the family (BnxtFamilyRow.driven). */
  readonly driven: boolean;
}

/** Physical functions, in BNXT_FAMILIES's order (driven families first). */
export const BNXT_PF_IDS: readonly BnxtPciId[] = Object.freeze(BNXT_FAMILIES.flatMap((f) =>
  f.physicalFunctions.map((pf) => Object.freeze({ ...pf, family: f.family, driven: f.driven }))));

const pfById = new Map(BNXT_PF_IDS.map((id) => [id.deviceId, id]));

/** The bnxt physical function with these ids, or undefined. */
export function bnxtPhysicalFunction(vendorId: number, deviceId: number): BnxtPciId | undefined {
  return vendorId === BROADCOM_VENDOR_ID ? pfById.get(deviceId) : undefined;
}

export function isBnxtVirtualFunction(vendorId: number, deviceId: number): boolean {
  return vendorId === BROADCOM_VENDOR_ID && BNXT_VF_DEVICE_IDS.has(deviceId);
}
