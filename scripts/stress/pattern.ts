/**
 * Seeded byte patterns that are cheap to write and compare at any size: what the stress runners
 * (and the data-path tests, through test/helpers/qp-data.ts) fill messages with and check them by.
 */
/**
 * Writes a seeded pattern into bytes [at, at + n): word k of the area (little-endian, from
 * `at`) is a bijection of k, so no two words of one fill agree and a byte moved by any offset
 * shows; fills with other seeds are other sequences.
 */
export function fillPattern(bytes: Uint8Array, at: number, n: number, seed: number): void {
  const words = Math.floor(n / 4);
  if ((bytes.byteOffset + at) % 4 === 0 && words > 0) {
    // In slices, so the loop is optimised after the first few (a single call would run interpreted).
    const u = new Uint32Array(bytes.buffer, bytes.byteOffset + at, words);
    for (let from = 0; from < words; from += 1 << 16) fillWords(u, from, Math.min(words, from + (1 << 16)), seed);
  } else {
    for (let k = 0; k < words; k++) {
      const v = patternWord(k, seed);
      const p = at + k * 4;
      bytes[p] = v; bytes[p + 1] = v >>> 8; bytes[p + 2] = v >>> 16; bytes[p + 3] = v >>> 24;
    }
  }
  const tail = patternWord(words, seed);
  for (let i = words * 4; i < n; i++) bytes[at + i] = tail >>> ((i & 3) * 8);
}

function fillWords(u: Uint32Array, from: number, to: number, seed: number): void {
  for (let k = from; k < to; k++) u[k] = patternWord(k, seed);
}

function patternWord(k: number, seed: number): number {
  // A bijection of k (odd multiplier, then murmur3's finaliser), offset by the seed.
  let h = (Math.imul(k, 0x9e3779b1) + Math.imul(seed ^ 0x5bd1e995, 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The first offset (from the areas' starts) where [a, a+n) of x and [b, b+n) of y differ, or -1. */
export function firstDifference(x: Uint8Array, a: number, y: Uint8Array, b: number, n: number): number {
  const chunk = 1 << 26;
  for (let done = 0; done < n; done += chunk) {
    const len = Math.min(chunk, n - done);
    const bx = Buffer.from(x.buffer, x.byteOffset + a + done, len);
    const by = Buffer.from(y.buffer, y.byteOffset + b + done, len);
    if (!bx.equals(by)) {
      for (let i = 0; i < len; i++) if (bx[i] !== by[i]) return done + i;
    }
  }
  return -1;
}
