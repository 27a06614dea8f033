/**
 * The IPv4 header checksum (RFC 791, computed as RFC 1071 describes): the ones' complement of
 * the ones' complement sum of the header's 16-bit words. A header whose checksum field is
 * correct sums, checksum included, to 0xFFFF.
 */

/** Ones' complement sum of the big-endian 16-bit words of bytes[at, at + length), folded to 16 bits. */
export function onesComplementSum(bytes: Uint8Array, at: number, length: number): number {
  let sum = 0;
  const end = at + length;
  for (let i = at; i < end; i += 2) sum += (bytes[i]! << 8) | bytes[i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return sum;
}

/** The checksum to store in a header whose checksum field currently holds zero. */
export function ipv4HeaderChecksum(bytes: Uint8Array, at: number, headerBytes: number): number {
  return ~onesComplementSum(bytes, at, headerBytes) & 0xffff;
}
