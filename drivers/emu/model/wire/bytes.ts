/**
 * Big-endian (network order) reads and writes at byte offsets of a Uint8Array. Every wire
 * header of RoCEv2 (Ethernet, IPv4, UDP, BTH and its extensions) is big-endian; only the
 * ICRC trailer is written little-endian (see icrc.ts). Plain numbers, no DataView per call.
 */

export function getU16(b: Uint8Array, at: number): number {
  return (b[at]! << 8) | b[at + 1]!;
}

export function getU24(b: Uint8Array, at: number): number {
  return (b[at]! << 16) | (b[at + 1]! << 8) | b[at + 2]!;
}

export function getU32(b: Uint8Array, at: number): number {
  return ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
}

export function putU16(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 8;
  b[at + 1] = v;
}

export function putU24(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 16;
  b[at + 1] = v >>> 8;
  b[at + 2] = v;
}

export function putU32(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 24;
  b[at + 1] = v >>> 16;
  b[at + 2] = v >>> 8;
  b[at + 3] = v;
}
