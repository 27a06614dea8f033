/**
 * The byte counts a queue pair keeps per SQ and RQ entry (what each posted send carries, what
 * each posted receive may take), kept for reuse across queue pairs. Each is 16 KiB outside the
 * JS heap: made new for every queue pair, the two were 8 us of a make (the allocator zeroes
 * them, the collector tracks and frees them) and a tenth of a make + connect + destroy cycle.
 * A destroyed queue pair gives its arrays back and holds DETACHED from then on, so nothing it
 * is still asked can reach arrays a newer queue pair owns (it has no entry due: BnxtQp.destroy).
 */
import { RING_ENTRIES } from './qp-resources.ts';

/** Arrays kept for reuse (two per queue pair: 32 queue pairs' worth, 1 MiB). */
const KEEP = 64;
const kept: Uint32Array[] = [];

/** What a destroyed queue pair holds instead of its arrays: shared, and never read for an entry due. */
export const DETACHED = new Uint32Array(RING_ENTRIES);

/** An array of RING_ENTRIES zeros: a kept one cleared, or a new one. */
export function takeEntryLengths(): Uint32Array {
  const a = kept.pop();
  if (a === undefined) return new Uint32Array(RING_ENTRIES);
  a.fill(0);
  return a;
}

/** Gives back an array taken with takeEntryLengths (DETACHED is never kept). */
export function giveEntryLengths(a: Uint32Array): void {
  if (a !== DETACHED && kept.length < KEEP) kept.push(a);
}
