/** `rig-bnxt probe DEV`: what the NIC reports. */
import type { ProbeCommand } from './options.ts';
import { openNic } from './nic-open.ts';
import type { NicInfo } from '../../lib/index.ts';

export function probeLines(i: NicInfo): string[] {
  return [
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
}

export function runProbe(cmd: ProbeCommand, log: (l: string) => void = (l) => console.log(l)): number {
  const nic = openNic(cmd.device, { ipv4: undefined, nicMac: undefined, ethMtu: undefined });
  if (!nic.ok) {
    console.error(`rig-bnxt probe: cannot open ${cmd.device}: ${nic.error}`);
    return 1;
  }
  try {
    for (const l of probeLines(nic.value.info)) log(l);
    return 0;
  } finally {
    nic.value.close();
  }
}
