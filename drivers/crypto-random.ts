/**
 * The operating system's cryptographic random numbers, as a RandomSource (drivers/device.ts).
 * Drawn 64 words at a time: one getRandomValues call costs about as much for 256 bytes as for
 * 4, and a queue pair's make takes several words (its PSN among them), so a call per word was
 * a few percent of a make + connect + destroy cycle.
 */
import { getRandomValues } from 'node:crypto';
import type { RandomSource } from './device.ts';

const WORDS = 64;

export class CryptoRandom implements RandomSource {
  private readonly words = new Uint32Array(WORDS);
  private next = WORDS;

  u32(): number {
    if (this.next === WORDS) {
      getRandomValues(this.words);
      this.next = 0;
    }
    const w = this.words[this.next]!;
    this.words[this.next++] = 0; // a word handed out is not kept
    return w;
  }
}
