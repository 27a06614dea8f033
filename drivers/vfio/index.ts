/** Real hardware through VFIO: the one entry point and the types an integrator needs. */
export { openVfio, type VfioOptions, type VfioAllowOptions, type PciDeviceIds } from './open.ts';
export { VfioDevice } from './vfio-device.ts';
export { systemLibc, type Libc, type Pointer } from '../native/libc.ts';
export {
  BNXT_PF_IDS, bnxtPhysicalFunction, isBnxtVirtualFunction, BROADCOM_VENDOR_ID, type BnxtPciId,
} from './pci-ids.ts';
export { normalizePciAddress } from './pci-address.ts';
