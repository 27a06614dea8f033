/**
 * `rig-bnxt probe`: without a device, the bnxt functions in sysfs and their driver binding (what
 * ibv_devices would list, and whether rig-bnxt can take each: it needs vfio-pci); with one, what
 * the NIC reports, -v its capabilities too (ibv_devinfo -v), --json the same as data.
 */
import { readdirSync } from 'node:fs';
import type { ProbeCommand } from './commands.ts';
import { openNic } from './nic-open.ts';
import type { NicInfo } from '../../lib/index.ts';
import { bnxtPhysicalFunction, isBnxtVirtualFunction, BROADCOM_VENDOR_ID } from '../../drivers/vfio/index.ts';
import { readPciFunction } from '../../drivers/vfio/sysfs.ts';
import { join } from 'node:path';

export interface BnxtFunctionListing {
  readonly address: string;
  readonly deviceId: string;
  /** The chip's part name, or "virtual function". */
  readonly part: string;
  readonly kind: 'PF' | 'VF';
  /** The bound driver, or null when unbound. */
  readonly driver: string | null;
  readonly iommuGroup: string | null;
  /** Whether rig-bnxt can open it as it is: a PF bound to vfio-pci in an IOMMU group. */
  readonly usable: boolean;
}

/** The Broadcom bnxt functions under sysfsRoot/bus/pci/devices, by address. */
export function listBnxtFunctions(sysfsRoot = '/sys'): BnxtFunctionListing[] {
  let names: string[];
  try { names = readdirSync(join(sysfsRoot, 'bus', 'pci', 'devices')).sort(); } catch { return []; }
  const out: BnxtFunctionListing[] = [];
  for (const address of names) {
    const f = readPciFunction(sysfsRoot, address);
    if (!f.ok || f.value.vendorId !== BROADCOM_VENDOR_ID) continue;
    const pf = bnxtPhysicalFunction(f.value.vendorId, f.value.deviceId);
    const vf = isBnxtVirtualFunction(f.value.vendorId, f.value.deviceId);
    if (pf === undefined && !vf) continue;
    out.push({
      address, deviceId: `0x${f.value.deviceId.toString(16).padStart(4, '0')}`,
      part: pf ? `${pf.part} (${pf.family})` : 'virtual function', kind: pf ? 'PF' : 'VF', driver: f.value.driver,
      iommuGroup: f.value.iommuGroup,
      usable: pf !== undefined && f.value.driver === 'vfio-pci' && f.value.iommuGroup !== null,
    });
  }
  return out;
}

export function listingLines(list: readonly BnxtFunctionListing[]): string[] {
  if (list.length === 0)
    return ['no bnxt functions found (lspci -D -d 14e4: lists Broadcom devices; the software NIC is "emu")'];
  const lines = ['    address          device  part                        driver      IOMMU group'];
  for (const f of list) {
    lines.push(`    ${f.address.padEnd(16)} ${f.deviceId}  ${f.part.padEnd(27)} ${(f.driver ?? '(none)').padEnd(11)} ` +
      `${f.iommuGroup ?? '(none)'}` +
      (f.usable ? '' : f.kind === 'VF' ? '   rig-bnxt drives PFs' : f.driver !== 'vfio-pci'
        ? '   bind it: scripts/bind-vfio.sh ' + f.address : '   no IOMMU group'));
  }
  return lines;
}

export function probeLines(i: NicInfo, verbose = false): string[] {
  const lines = [
    `device:        ${i.name}`,
    `chip:          ${i.chip} (0x${i.chipNum.toString(16)}, ${i.chipFamily})`,
    `firmware:      ${i.firmwareVersion}`,
    `HWRM:          ${i.hwrmVersion}`,
    `MAC:           ${i.mac}`,
    `IPv4:          ${i.ipv4}`,
    `GID:           ${i.gid}`,
    `link:          ${i.linkUp ? 'up' : 'down'}, ${i.linkSpeedMbps / 1000} Gb/s, MTU ${i.mtu}`,
    `max QPs:       ${i.maxQps}`,
  ];
  if (verbose) {
    lines.push(
      `ring entries:  4095 per send ring, 4095 per receive ring`,
      `max message:   2147483648 bytes`,
      `DMA memory:    ${i.dmaBytes} bytes in use, ${i.quarantinedBytes} held back`,
    );
  }
  return lines;
}

export function runProbe(
  cmd: ProbeCommand, log: (l: string) => void = (l) => console.log(l), sysfsRoot = '/sys',
): number {
  if (cmd.device === undefined) {
    const list = listBnxtFunctions(sysfsRoot);
    if (cmd.json) log(JSON.stringify({ functions: list }, null, 2));
    else for (const l of listingLines(list)) log(l);
    return 0;
  }
  const nic = openNic(cmd.device, {
    ipv4: undefined, nicMac: undefined, ethMtu: undefined, trace: cmd.trace, chip: cmd.chip,
  });
  if (!nic.ok) {
    console.error(`rig-bnxt probe: cannot open ${cmd.device}: ${nic.error}`);
    return 1;
  }
  try {
    const info = nic.value.info;
    if (cmd.json)
      log(JSON.stringify(cmd.verbose ? { ...info, ringEntries: 4095, maxMessageBytes: 2 ** 31 } : info, null, 2));
    else for (const l of probeLines(info, cmd.verbose)) log(l);
    return 0;
  } finally {
    nic.value.close();
  }
}
