/** Addresses as users write them (options, command lines), parsed into wire-order bytes. */
import { invalid } from '../firmware-hwrm/errors.ts';

/** aa:bb:cc:dd:ee:ff into 6 bytes; anything else is a misuse. */
export function parseMac(text: string): Uint8Array {
  const m = /^([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})$/
    .exec(text);
  if (!m) invalid(`"${text}" is not a MAC address (aa:bb:cc:dd:ee:ff)`);
  return Uint8Array.from(m.slice(1).map((h) => parseInt(h, 16)));
}

/** A dotted quad into 4 bytes; anything else is a misuse. */
export function parseIpv4(text: string): Uint8Array {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255))
    invalid(`"${text}" is not an IPv4 address`);
  return Uint8Array.from(parts.map(Number));
}
