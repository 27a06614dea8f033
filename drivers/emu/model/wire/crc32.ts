/**
 * CRC-32 as zlib, Ethernet and the InfiniBand ICRC use it: reflected polynomial 0xEDB88320,
 * initial value ~0, final xor ~0. Table-driven slicing-by-8: eight 256-entry tables let the
 * loop fold eight input bytes per step with eight lookups, instead of one byte per step.
 *
 * The API follows zlib's crc32(crc, buf): a CRC value in, a CRC value out, so that
 *   crc32Update(crc32Update(0, a, ...), b, ...) === CRC of a followed by b
 * and a payload can be folded in place, straight from the frame, without copying it.
 */

const POLY = 0xedb88320;
const SLICES = 8;

/** TABLE[k * 256 + b]: the CRC register contribution of byte b followed by k zero bytes. */
const TABLE = makeTables();

function makeTables(): Int32Array {
  const t = new Int32Array(SLICES * 256);
  for (let b = 0; b < 256; b++) {
    let c = b;
    for (let bit = 0; bit < 8; bit++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t[b] = c;
  }
  for (let b = 0; b < 256; b++) {
    let c = t[b]!;
    for (let k = 1; k < SLICES; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + b] = c;
    }
  }
  return t;
}

/**
 * Folds bytes[start, end) into `crc` (a finished CRC-32 value; 0 for an empty prefix) and
 * returns the new finished value as an unsigned 32-bit number. Allocates nothing.
 */
export function crc32Update(crc: number, bytes: Uint8Array, start: number, end: number): number {
  return ~crc32Register(~crc, bytes, start, end) >>> 0;
}

/**
 * The raw form for hot paths: folds bytes[start, end) into the CRC register `reg` (the
 * pre-inversion state: ~0 at the start of a message, `~register` is the CRC) and returns the
 * register as a signed 32-bit integer. Signed int32 values stay unboxed small integers in V8,
 * so a chain of calls allocates nothing; unsigned values above 2^31 would be boxed.
 */
export function crc32Register(reg: number, bytes: Uint8Array, start: number, end: number): number {
  if (start < 0 || end > bytes.length || start > end) {
    throw new RangeError(`crc32: range [${start}, ${end}) outside ${bytes.length} bytes`);
  }
  const t = TABLE;
  let c = reg | 0;
  let i = start;
  // Eight bytes per step: the low four are xored into the register, the high four enter fresh.
  for (const stop = end - 7; i < stop; i += 8) {
    c ^= bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    c =
      t[7 * 256 + (c & 0xff)]! ^
      t[6 * 256 + ((c >>> 8) & 0xff)]! ^
      t[5 * 256 + ((c >>> 16) & 0xff)]! ^
      t[4 * 256 + (c >>> 24)]! ^
      t[3 * 256 + bytes[i + 4]!]! ^
      t[2 * 256 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < end; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return c;
}

/**
 * crc32Register over 32-bit words: folds words[from, end) into the register `reg` and returns it.
 * Each word is the little-endian value of four bytes in memory order (an Int32Array over a byte
 * buffer on a little-endian machine), so folding the words of a buffer is folding its bytes: two
 * word reads per eight-byte step instead of eight byte reads, and a last word folded as four bytes.
 * For the short covered bytes of a frame, which start word-aligned (frame-memory.ts). No checks:
 * the caller keeps [from, end) inside `words`.
 */
export function crc32RegisterWords(reg: number, words: Int32Array, from: number, end: number): number {
  const t = TABLE;
  let c = reg | 0;
  let i = from;
  for (const stop = end - 1; i < stop; i += 2) {
    c ^= words[i]!;
    const h = words[i + 1]!;
    c = t[7 * 256 + (c & 0xff)]! ^ t[6 * 256 + ((c >>> 8) & 0xff)]! ^ t[5 * 256 + ((c >>> 16) & 0xff)]! ^
      t[4 * 256 + (c >>> 24)]! ^ t[3 * 256 + (h & 0xff)]! ^ t[2 * 256 + ((h >>> 8) & 0xff)]! ^
      t[256 + ((h >>> 16) & 0xff)]! ^ t[h >>> 24]!;
  }
  if (i < end) {
    c ^= words[i]!;
    c = t[3 * 256 + (c & 0xff)]! ^ t[2 * 256 + ((c >>> 8) & 0xff)]! ^ t[256 + ((c >>> 16) & 0xff)]! ^ t[c >>> 24]!;
  }
  return c;
}

/**
 * Folds the eight bytes b0..b7 (in order) into the register `reg` and returns it, as one step of
 * crc32Register: for bytes that are not all in memory as they are folded (masked header fields).
 */
export function crc32Fold8(
  reg: number, b0: number, b1: number, b2: number, b3: number, b4: number, b5: number, b6: number, b7: number,
): number {
  const t = TABLE;
  const c = reg ^ (b0 | (b1 << 8) | (b2 << 16) | (b3 << 24));
  return t[7 * 256 + (c & 0xff)]! ^ t[6 * 256 + ((c >>> 8) & 0xff)]! ^ t[5 * 256 + ((c >>> 16) & 0xff)]! ^
    t[4 * 256 + (c >>> 24)]! ^ t[3 * 256 + b4]! ^ t[2 * 256 + b5]! ^ t[256 + b6]! ^ t[b7]!;
}

/** CRC-32 of bytes[start, end) (the whole array by default). */
export function crc32(bytes: Uint8Array, start = 0, end = bytes.length): number {
  return crc32Update(0, bytes, start, end);
}

/** Folds one byte `b` repeated `count` times into `crc` (for masked header fields). */
export function crc32UpdateRepeated(crc: number, b: number, count: number): number {
  const t = TABLE;
  let c = ~crc;
  for (let i = 0; i < count; i++) c = t[(c ^ b) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
