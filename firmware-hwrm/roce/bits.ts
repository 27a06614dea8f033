/**
 * Range checks for the allocation-free encoders: they cost a compare on success and throw a
 * RangeError naming the argument on failure (a broken invariant, never an expected result).
 */
export function checkBits(what: string, value: number, bits: number): void {
  if (!(value >>> 0 === value && (bits === 32 || value < 2 ** bits))) {
    throw new RangeError(`${what}: ${value} does not fit in ${bits} bits`);
  }
}
