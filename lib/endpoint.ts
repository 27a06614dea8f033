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

/**
 * Throws InvalidArgument, naming `what`, unless `e` is an endpoint: an object with a 24-bit qp
 * and psn, a 16-byte gid and a 6-byte mac (Qp.connect and formatEndpoint both check this).
 */
export function checkEndpoint(what: string, e: unknown): asserts e is Endpoint {
  if (e === null || typeof e !== 'object') invalid(`${what}: the endpoint is not an object`);
  const { qp, psn, gid, mac } = e as Partial<Record<keyof Endpoint, unknown>>;
  if (!is24Bits(qp)) invalid(`${what}: qp ${String(qp)} is not a 24-bit number`);
  if (!is24Bits(psn)) invalid(`${what}: psn ${String(psn)} is not a 24-bit number`);
  if (!(gid instanceof Uint8Array) || gid.length !== 16) invalid(`${what}: the endpoint's gid is not 16 bytes`);
  if (!(mac instanceof Uint8Array) || mac.length !== 6) invalid(`${what}: the endpoint's mac is not 6 bytes`);
}

function is24Bits(n: unknown): boolean {
  return Number.isInteger(n) && (n as number) >= 0 && (n as number) < 1 << 24;
}

export function formatEndpoint(e: Endpoint): string {
  checkEndpoint('formatEndpoint', e);
  return `${e.qp.toString(16).padStart(6, '0')}:${e.psn.toString(16).padStart(6, '0')}:` +
    `${HEX(e.gid).join('')}:${HEX(e.mac).join(':')}`;
}

const FORM = /^([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32}):((?:[0-9a-f]{2}:){5}[0-9a-f]{2})$/i;

export function parseEndpoint(text: string): Endpoint {
  const m = typeof text === 'string' ? FORM.exec(text.trim()) : null;
  if (!m) {
    invalid(`parseEndpoint: "${String(text).slice(0, 80)}" is not QPN:PSN:GID:MAC (6, 6 and 32 hex digits, then ` +
      `a MAC)`);
  }
  const gid = new Uint8Array(16);
  for (let i = 0; i < 16; i++) gid[i] = parseInt(m[3]!.slice(i * 2, i * 2 + 2), 16);
  return {
    qp: parseInt(m[1]!, 16), psn: parseInt(m[2]!, 16), gid,
    mac: Uint8Array.from(m[4]!.split(':').map((h) => parseInt(h, 16))),
  };
}
