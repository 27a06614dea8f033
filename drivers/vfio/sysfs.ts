/**
 * What sysfs says about a PCI function (Documentation/ABI/testing/sysfs-bus-pci; as DPDK's usertools/dpdk-devbind.py
 * reads it). The root is a parameter so tests can build a fake tree; on a real machine it is /sys.
 */
import { existsSync, readFileSync, readlinkSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';

export interface PciFunctionFacts {
  readonly vendorId: number;
  readonly deviceId: number;
  /** Name of the bound driver (e.g. "vfio-pci", "bnxt_en"), or null when unbound. */
  readonly driver: string | null;
  /** IOMMU group number as a string ("17"), or null when the device has none. */
  readonly iommuGroup: string | null;
}

export function pciDevicePath(sysfsRoot: string, address: string): string {
  return join(sysfsRoot, 'bus', 'pci', 'devices', address);
}

export function readPciFunction(sysfsRoot: string, address: string): Result<PciFunctionFacts> {
  const dir = pciDevicePath(sysfsRoot, address);
  if (!existsSync(dir))
    return err(`PCI function ${address} not found (${dir} does not exist): check the address with 'lspci -D -d 14e4:'`);
  const vendorId = readHexFile(join(dir, 'vendor'));
  const deviceId = readHexFile(join(dir, 'device'));
  if (vendorId === undefined || deviceId === undefined)
    return err(`cannot read the vendor and device ids of ${address} from ${dir}`);
  return ok({
    vendorId, deviceId, driver: linkName(join(dir, 'driver')), iommuGroup: linkName(join(dir, 'iommu_group')),
  });
}

/** The members of IOMMU group `group`, each with its bound driver (null when unbound). */
export function iommuGroupMembers(sysfsRoot: string, group: string): { address: string; driver: string | null }[] {
  const devices = join(sysfsRoot, 'kernel', 'iommu_groups', group, 'devices');
  let names: string[];
  try {
    names = readdirSync(devices).sort();
  } catch {
    return [];
  }
  return names.map((address) => ({ address, driver: linkName(join(pciDevicePath(sysfsRoot, address), 'driver')) }));
}

function readHexFile(path: string): number | undefined {
  try {
    const text = readFileSync(path, 'utf8').trim();
    const n = Number.parseInt(text, 16);
    return /^(0x)?[0-9a-f]+$/i.test(text) && Number.isSafeInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Basename of a symlink's target (sysfs names drivers and groups this way), or null. */
function linkName(path: string): string | null {
  try {
    return basename(readlinkSync(path));
  } catch {
    return null;
  }
}
