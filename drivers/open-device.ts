/**
 * The one place that opens a device by name: a PCI address is real hardware through VFIO,
 * `emu` / `emu:LOCAL:REMOTE` a software NIC (drivers/emu/host/open.ts says what one is by
 * default). Above this, nothing knows which it got.
 */
import type { Device } from './device.ts';
import { isEmuName, openEmuNamed, type EmuOpenOptions } from './emu/host/open.ts';
import { openVfio } from './vfio/index.ts';
import type { WqeTraceTarget } from './emu/model/config.ts';
import { invalid } from '../firmware-hwrm/errors.ts';
import { ok, type Result } from '../firmware-hwrm/result.ts';

export { parseIpv4, parseMac } from './address-text.ts';

/** Options of Nic.open: `ipv4` for any NIC; the rest shape a software NIC (VFIO ignores them). */
export type OpenOptions = EmuOpenOptions;

const PCI_ADDRESS = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

export interface OpenedDevice {
  readonly device: Device;
  /** The address the NIC answers to unless the user gave one (software NIC: from its cable). */
  readonly defaultIpv4: Uint8Array | undefined;
}

/**
 * `trace`: the driver's trace file, if it writes one; a software NIC appends a record of every
 * WQE it fetches to it (hardware fetches WQEs where nobody can watch).
 */
export function openDevice(name: string, options: OpenOptions, trace?: WqeTraceTarget): Result<OpenedDevice> {
  if (typeof name !== 'string') invalid('Nic.open: the name must be a string');
  if (PCI_ADDRESS.test(name)) {
    const d = openVfio(name);
    return d.ok ? ok({ device: d.value, defaultIpv4: undefined }) : d;
  }
  if (isEmuName(name)) return openEmuNamed(name, options, trace);
  invalid(`Nic.open: "${name}" is neither a PCI address (0000:3b:00.0) nor emu / emu:LOCAL:REMOTE`);
}
