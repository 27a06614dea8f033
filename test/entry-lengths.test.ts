// A queue pair's per-entry byte counts are reused across queue pairs (lib/bnxt/entry-lengths.ts):
// a reused array must read as a fresh one, and the array a destroyed queue pair holds is never
// handed to another.
import t from 'tap';
import { DETACHED, giveEntryLengths, takeEntryLengths } from '../lib/bnxt/entry-lengths.ts';
import { RING_ENTRIES } from '../lib/bnxt/qp-resources.ts';

t.test('a reused array comes back zeroed and the size of a ring', async (t) => {
  const a = takeEntryLengths();
  a.fill(0xdead);
  giveEntryLengths(a);
  const b = takeEntryLengths();
  t.equal(b, a, 'the array given back is the one taken next');
  t.equal(b.length, RING_ENTRIES);
  t.ok(b.every((v) => v === 0), 'every entry reads 0, as in a new array');
});

t.test('DETACHED is never handed out', async (t) => {
  giveEntryLengths(DETACHED);
  const a = takeEntryLengths();
  t.not(a, DETACHED);
});
