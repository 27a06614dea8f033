/** Software NIC devices for tests: stepped (deterministic, virtual time) unless asked otherwise. */
import { openEmu, type EmuDevice } from '../../drivers/emu/host/device.ts';
import { macFromNumber } from '../../drivers/emu/model/config.ts';

let n = 0x100;

/** `chip`: the profile the NIC plays (unset: RIG_BNXT_CHIP's, else the default). */
export function emuDevice(mode: 'stepped' | 'thread' = 'stepped', seed = 1, chip?: string): EmuDevice {
  const id = n++;
  const d = openEmu({
    mac: macFromNumber(id), ipv4: Uint8Array.from([10, 77, 1, id & 0xff]), mtu: 9000, cable: { kind: 'loop' },
    pcapPath: undefined, seed, mode, ...(chip !== undefined ? { chip } : {}),
  });
  if (!d.ok) throw new Error(d.error);
  return d.value;
}
