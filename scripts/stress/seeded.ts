/** A tiny seeded PRNG (mulberry32) for the stress runners and the tests: every random input has a printed seed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let z = a;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return (z ^ (z >>> 14)) >>> 0;
  };
}

/** The seed for this run: SEED from the environment, else derived from the clock (and printed by the caller). */
export function testSeed(): number {
  const env = process.env['SEED'];
  return env !== undefined ? Number(env) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
}
