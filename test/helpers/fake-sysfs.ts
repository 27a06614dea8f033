/**
 * Builds a fake sysfs tree in a temporary directory, shaped like the parts of /sys that
 * drivers/vfio and scripts/bind-vfio.sh read (Documentation/ABI/testing/sysfs-bus-pci):
 *
 *   bus/pci/devices/<addr>/{vendor,device,driver_override}
 *   bus/pci/devices/<addr>/driver       -> ../../../../bus/pci/drivers/<name>
 *   bus/pci/devices/<addr>/iommu_group  -> ../../../../kernel/iommu_groups/<n>
 *   bus/pci/drivers/<name>/{bind,unbind}
 *   kernel/iommu_groups/<n>/devices/<addr>
 *   kernel/mm/hugepages/hugepages-2048kB/{nr_hugepages,free_hugepages}
 *
 * Driver bind/unbind files are plain files here: a write leaves its text behind for the
 * test to read, and nothing rebinds anything.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FakePciFunction {
  readonly address: string;
  readonly vendor?: string;
  readonly device?: string;
  /** Bound driver name, or null for none. */
  readonly driver?: string | null;
  /** IOMMU group number, or null for none (IOMMU off). */
  readonly iommuGroup?: string | null;
}

export interface FakeSysfs {
  readonly root: string;
  /** A sibling directory standing in for /dev (empty unless the test fills it). */
  readonly devRoot: string;
  remove(): void;
}

export const DRIVERS = ['bnxt_en', 'vfio-pci', 'ixgbe'];

export function makeFakeSysfs(functions: readonly FakePciFunction[]): FakeSysfs {
  const base = mkdtempSync(join(tmpdir(), 'fake-sysfs-'));
  const root = join(base, 'sys');
  const devRoot = join(base, 'dev');
  mkdirSync(devRoot, { recursive: true });
  for (const name of DRIVERS) {
    const dir = join(root, 'bus', 'pci', 'drivers', name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'bind'), '');
    writeFileSync(join(dir, 'unbind'), '');
  }
  const huge = join(root, 'kernel', 'mm', 'hugepages', 'hugepages-2048kB');
  mkdirSync(huge, { recursive: true });
  writeFileSync(join(huge, 'nr_hugepages'), '0\n');
  writeFileSync(join(huge, 'free_hugepages'), '0\n');

  for (const f of functions) {
    const dir = join(root, 'bus', 'pci', 'devices', f.address);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'vendor'), `${f.vendor ?? '0x14e4'}\n`);
    writeFileSync(join(dir, 'device'), `${f.device ?? '0x1750'}\n`);
    writeFileSync(join(dir, 'driver_override'), '(null)\n');
    const driver = f.driver === undefined ? 'vfio-pci' : f.driver;
    if (driver !== null) symlinkSync(`../../../../bus/pci/drivers/${driver}`, join(dir, 'driver'));
    const group = f.iommuGroup === undefined ? '17' : f.iommuGroup;
    if (group !== null) {
      const members = join(root, 'kernel', 'iommu_groups', group, 'devices');
      mkdirSync(members, { recursive: true });
      symlinkSync(`../../../../bus/pci/devices/${f.address}`, join(members, f.address));
      symlinkSync(`../../../../kernel/iommu_groups/${group}`, join(dir, 'iommu_group'));
    }
  }
  return { root, devRoot, remove: () => rmSync(base, { recursive: true, force: true }) };
}
