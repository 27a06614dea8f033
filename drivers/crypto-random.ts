/** The operating system's cryptographic random numbers, as a RandomSource (drivers/device.ts). */
import { getRandomValues } from 'node:crypto';
import type { RandomSource } from './device.ts';

export class CryptoRandom implements RandomSource {
  private readonly word = new Uint32Array(1);

  u32(): number {
    getRandomValues(this.word);
    return this.word[0]!;
  }
}
