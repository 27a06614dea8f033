/**
 * What a peer needs to connect to a queue pair: plain data a program sends by any means.
 * The text form is one line: `QPN:PSN:GID:MAC`, e.g.
 *   000012:a1b2c3:00000000000000000000ffff0a4d0001:02:62:6e:00:00:01
 */
import { invalid } from './errors.ts';

export interface Endpoint {
  /** The queue pair's number. */
  readonly qp: number;
  /** The packet sequence number its sends start at. */
  readonly psn: number;
  /** Its NIC's GID (16 bytes). */
  readonly gid: Uint8Array;
  /** Its NIC's MAC address (6 bytes). */
  readonly mac: Uint8Array;
}

const HEX = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, '0'));

export function formatEndpoint(e: Endpoint): string {
  if (!Number.isInteger(e.qp) || e.qp < 0 || e.qp >= 1 << 24) invalid(`formatEndpoint: qp ${e.qp} is not a 24-bit number`);
  if (!Number.isInteger(e.psn) || e.psn < 0 || e.psn >= 1 << 24) invalid(`formatEndpoint: psn ${e.psn} is not a 24-bit number`);
  if (!(e.gid instanceof Uint8Array) || e.gid.length !== 16) invalid('formatEndpoint: gid is not 16 bytes');
  if (!(e.mac instanceof Uint8Array) || e.mac.length !== 6) invalid('formatEndpoint: mac is not 6 bytes');
  return `${e.qp.toString(16).padStart(6, '0')}:${e.psn.toString(16).padStart(6, '0')}:${HEX(e.gid).join('')}:${HEX(e.mac).join(':')}`;
}

const FORM = /^([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32}):((?:[0-9a-f]{2}:){5}[0-9a-f]{2})$/i;

export function parseEndpoint(text: string): Endpoint {
  const m = typeof text === 'string' ? FORM.exec(text.trim()) : null;
  if (!m) invalid(`parseEndpoint: "${String(text).slice(0, 80)}" is not QPN:PSN:GID:MAC (6, 6 and 32 hex digits, then a MAC)`);
  const gid = new Uint8Array(16);
  for (let i = 0; i < 16; i++) gid[i] = parseInt(m[3]!.slice(i * 2, i * 2 + 2), 16);
  return { qp: parseInt(m[1]!, 16), psn: parseInt(m[2]!, 16), gid, mac: Uint8Array.from(m[4]!.split(':').map((h) => parseInt(h, 16))) };
}
