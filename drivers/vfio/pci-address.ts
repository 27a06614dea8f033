/** PCI function addresses as sysfs and VFIO spell them: "DDDD:BB:DD.F", lower-case hex. */
import { invalid } from '../../firmware-hwrm/errors.ts';

const PCI_ADDRESS = /^([0-9a-f]{4}):([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])$/i;

/**
 * Checks the form "0000:3b:00.0" (domain:bus:device.function; device 00-1f) and returns
 * it in lower case. A malformed address is a misuse: it throws InvalidArgument.
 */
export function normalizePciAddress(address: string): string {
  const m = typeof address === 'string' ? PCI_ADDRESS.exec(address) : null;
  if (!m || parseInt(m[3]!, 16) > 0x1f) {
    invalid(`'${String(address)}' is not a PCI address of the form DDDD:BB:DD.F (e.g. 0000:3b:00.0; see lspci -D)`);
  }
  return address.toLowerCase();
}
