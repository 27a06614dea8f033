/**
 * 64-bit device values (addresses, handles) travel as two little-endian 32-bit words; a value
 * below 2^53 is exact as a number: value = lo + hi * TWO_POW_32.
 */
export const TWO_POW_32 = 2 ** 32;
