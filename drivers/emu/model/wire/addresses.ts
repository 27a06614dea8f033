/**
 * Text forms of the addresses a frame carries (setup and tracing paths; these allocate).
 * IPv4 addresses are unsigned 32-bit numbers in network order: 10.77.0.1 = 0x0a4d0001.
 */

/** 'a.b.c.d' to its number, or null if it is not a dotted-quad IPv4 address. */
export function parseIpv4(text: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  let n = 0;
  for (let i = 1; i <= 4; i++) {
    const part = Number(m[i]);
    if (part > 255) return null;
    n = n * 256 + part;
  }
  return n;
}

export function formatIpv4(ip: number): string {
  return `${(ip >>> 24) & 255}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
}

/** 'aa:bb:cc:dd:ee:ff' (or with '-') to 6 bytes, or null. */
export function parseMac(text: string): Uint8Array | null {
  const m =
    /^([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})[:-]([0-9a-f]{2})$/i.exec(text);
  if (!m) return null;
  return Uint8Array.from(m.slice(1, 7), (h) => parseInt(h, 16));
}

export function formatMac(bytes: Uint8Array, at = 0): string {
  const parts: string[] = [];
  for (let i = 0; i < 6; i++) parts.push((bytes[at + i] ?? 0).toString(16).padStart(2, '0'));
  return parts.join(':');
}
