/** A small seeded PRNG (xoshiro128** on 32-bit words, no BigInt): every random choice of the model comes from it. */
export class Random {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;
  constructor(readonly seed: number) {
    // splitmix32 spreads the seed over the state
    let x = seed >>> 0;
    const next = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next() | 1;
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
  }
  /** xoshiro128** : a uniform 32-bit unsigned integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = this.s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return result;
  }
  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / 4294967296;
  }
  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.float() * n);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
