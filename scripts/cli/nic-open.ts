/** Opens the NIC a CLI run uses, with the run's NIC settings; errors come back as values. */
import { Nic, type NicOptions } from '../../lib/index.ts';
import { err, type Result } from '../../lib/result.ts';
import type { NicSettings } from './commands.ts';

export function openNic(device: string, settings: NicSettings, pcap?: string): Result<Nic> {
  const options: NicOptions = {
    ...(settings.ipv4 !== undefined ? { ipv4: settings.ipv4 } : {}),
    ...(settings.nicMac !== undefined ? { mac: settings.nicMac } : {}),
    ...(settings.ethMtu !== undefined ? { mtu: settings.ethMtu } : {}),
    ...(settings.chip !== undefined ? { chip: settings.chip } : {}),
    ...(pcap !== undefined ? { pcap } : {}),
    ...(settings.trace !== undefined ? { trace: settings.trace } : {}),
  };
  try {
    return Nic.open(device, options);
  } catch (e) {
    return err((e as Error).message);
  }
}
