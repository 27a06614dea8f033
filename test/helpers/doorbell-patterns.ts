/**
 * 64-bit values a doorbell store must deliver bit for bit, as (lo, hi) 32-bit halves.
 * Built from the P5/P7 doorbell layout (hsi.h struct dbc_dbc: index 23:0, epoch 24,
 * toggle 26:25, xid 51:32, path 57:56, valid 58, type 63:60) plus every IEEE-754 shape a
 * double store could disturb: ±Inf, quiet and signalling NaNs (either sign), V8's hole
 * NaN, denormals and ±0, then seeded random values.
 */
import type { Mmio } from '../../drivers/device.ts';

function doorbellShapes(): [number, number][] {
  const out: [number, number][] = [];
  const indexes = [0, 1, 0x800000, 0xffffff, 0x1ffffff, 0x7ffffff];
  const xids = [0, 1, 0x7ff, 0x80000, 0xfffff];
  for (let type = 0; type < 16; type++) {
    for (const valid of [0, 1]) {
      for (let path = 0; path < 4; path++) {
        for (const xid of xids) {
          for (const index of indexes) out.push([index, (type << 28) | (valid << 26) | (path << 24) | xid]);
        }
      }
    }
  }
  // Types 0x7 and 0xF with the (reserved) bits 27 and 23:20 set: the exponent is all ones,
  // so the double is an Inf or a NaN (quiet when bit 19 is set, signalling otherwise).
  for (const type of [0x7, 0xf]) {
    for (const low20 of [0, 1, 0x7ffff, 0x80000, 0xfffff]) {
      for (const lo of [0, 1, 0xffffff, 0xffffffff]) out.push([lo, (type << 28) | 0x0ff00000 | low20]);
    }
  }
  return out;
}

const IEEE_SHAPES: [number, number][] = [
  [0x00000000, 0x7ff00000], // +Inf
  [0x00000000, 0xfff00000], // -Inf
  [0x00000000, 0x7ff80000], // quiet NaN (V8's canonical NaN)
  [0x00000000, 0xfff80000], // negative quiet NaN
  [0x00000001, 0x7ff00000], // smallest signalling NaN
  [0xffffffff, 0x7ff7ffff], // largest signalling NaN
  [0x00000001, 0xfff00000], // negative signalling NaN
  [0xfff7ffff, 0xfff7ffff], // V8's hole NaN
  [0xfffeffff, 0xfffeffff], // another V8-special NaN pattern
  [0xffffffff, 0xffffffff], // all ones (NaN)
  [0xdeadbeef, 0x7ff4dead], // signalling NaN with payload
  [0x00000001, 0x00000000], // smallest denormal
  [0xffffffff, 0x000fffff], // largest denormal
  [0x00000000, 0x00080000], // a denormal with only the top fraction bit
  [0x00000001, 0x80000000], // negative denormal
  [0xffffffff, 0x800fffff], // largest negative denormal
  [0x00000000, 0x00000000], // +0
  [0x00000000, 0x80000000], // -0
  [0x00000000, 0x00100000], // smallest normal
];

function seededRandom(count: number, seed: number): [number, number][] {
  let x = seed >>> 0;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
  const out: [number, number][] = [];
  for (let i = 0; i < count; i++) out.push([next(), next()]);
  return out;
}

export const DOORBELL_PATTERN_SEED = 0x5eed_d00b;

export const DOORBELL_PATTERNS: readonly (readonly [number, number])[] = [
  ...doorbellShapes(),
  ...IEEE_SHAPES,
  ...seededRandom(2000, DOORBELL_PATTERN_SEED),
];

const hex = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/**
 * Rings every pattern at `offset` and reads the 8 bytes back through `check`, an
 * independent Uint32Array over the same memory; also checks the words around it stay put.
 * Each pattern is passed both as unsigned halves and as the signed int32 halves that
 * `|` and `<<` produce. Returns one line per pattern that did not survive.
 */
export function doorbellFailures(mmio: Mmio, check: Uint32Array, offset: number, afterEach?: () => void): string[] {
  const failures: string[] = [];
  const w = offset >>> 2;
  check[w - 1] = 0x5a5a5a5a;
  check[w + 2] = 0xa5a5a5a5;
  for (let i = 0; i < DOORBELL_PATTERNS.length; i++) {
    const [lo, hi] = DOORBELL_PATTERNS[i]!;
    const signed = (i & 1) === 1;
    mmio.doorbell64(offset, signed ? lo | 0 : lo >>> 0, signed ? hi | 0 : hi >>> 0);
    afterEach?.();
    if (check[w] !== lo >>> 0 || check[w + 1] !== hi >>> 0 || check[w - 1] !== 0x5a5a5a5a ||
      check[w + 2] !== 0xa5a5a5a5) {
      failures.push(
        `wrote ${hex(hi)}_${hex(lo)}, read ${hex(check[w + 1]!)}_${hex(check[w]!)} (neighbours ${hex(check[w - 1]!)} ` +
          `${hex(check[w + 2]!)})`,
      );
    }
  }
  return failures;
}
