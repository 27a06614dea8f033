import t from 'tap';
import { IovaAllocator } from '../drivers/iova-allocator.ts';
import { InvalidArgument } from '../lib/errors.ts';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function take(a: IovaAllocator, length: number, align?: number): number {
  const r = a.allocate(length, align);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

t.test('hands out granule-aligned ranges, lowest first, rounding lengths up', async (t) => {
  const a = new IovaAllocator({ ranges: [{ start: 4 * GiB, end: 5 * GiB }] });
  t.equal(take(a, 1), 4 * GiB);
  t.equal(take(a, 4096), 4 * GiB + 4096, 'a 1-byte range still used a whole 4 KiB page');
  t.equal(take(a, 5000), 4 * GiB + 8192);
  t.equal(a.lengthOf(4 * GiB + 8192), 8192);
  t.equal(a.allocatedBytes, 4096 + 4096 + 8192);
});

t.test('honours a larger alignment and reuses the gap it leaves', async (t) => {
  const a = new IovaAllocator({ ranges: [{ start: 4 * GiB, end: 5 * GiB }] });
  t.equal(take(a, 4096), 4 * GiB);
  const huge = take(a, 2 * MiB, 2 * MiB);
  t.equal(huge, 4 * GiB + 2 * MiB, 'next 2 MiB boundary');
  t.equal(huge % (2 * MiB), 0);
  t.equal(take(a, 4096), 4 * GiB + 4096, 'the gap below the aligned range is still used');
});

t.test('windows are trimmed to whole granules and a range never spans two windows', async (t) => {
  const a = new IovaAllocator({
    ranges: [{ start: 0x1000_0100, end: 0x1000_3000 }, { start: 0x2000_0000, end: 0x2001_0000 }],
  });
  t.equal(a.freeBytes, 0x2000 + 0x10000, 'the first window becomes [0x10001000, 0x10003000)');
  t.equal(take(a, 0x3000), 0x2000_0000, 'three pages do not fit in the first window and do not spill out of it');
  t.equal(take(a, 0x1000), 0x1000_1000);
  t.equal(take(a, 0x1000), 0x1000_2000);
  t.equal(take(a, 0x1000), 0x2000_3000, 'the first window is full');
});

t.test('never hands out overlapping ranges, through random allocate/release', async (t) => {
  // Deterministic pseudo-random sequence (xorshift32, seed printed on failure).
  const seed = 0x1234567;
  let x = seed;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0));
  const a = new IovaAllocator({ ranges: [{ start: 4 * GiB, end: 4 * GiB + 64 * MiB }] });
  const live = new Map<number, number>();
  for (let step = 0; step < 3000; step++) {
    if (live.size > 0 && next() % 3 === 0) {
      const keys = [...live.keys()];
      const iova = keys[next() % keys.length]!;
      a.release(iova);
      live.delete(iova);
      continue;
    }
    const length = (1 + (next() % 64)) * 4096;
    const align = 4096 * 2 ** (next() % 6);
    const r = a.allocate(length, align);
    if (!r.ok) continue;
    const iova = r.value;
    if (iova % align !== 0) t.fail(`seed ${seed} step ${step}: ${iova} not aligned to ${align}`);
    if (iova < 4 * GiB || iova + length > 4 * GiB + 64 * MiB) t.fail(`seed ${seed} step ${step}: outside the window`);
    for (const [other, otherLength] of live) {
      if (iova < other + otherLength && other < iova + length)
        t.fail(`seed ${seed} step ${step}: [${iova}, +${length}) overlaps [${other}, +${otherLength})`);
    }
    live.set(iova, Math.ceil(length / 4096) * 4096);
  }
  for (const iova of live.keys()) a.release(iova);
  t.equal(a.allocatedBytes, 0);
  t.equal(a.freeBytes, 64 * MiB, 'everything released merges back into one window');
  t.equal(take(a, 64 * MiB), 4 * GiB, 'the whole window is one free range again');
});

t.test('a released range is handed out again', async (t) => {
  const a = new IovaAllocator({ ranges: [{ start: 4 * GiB, end: 4 * GiB + 3 * 4096 }] });
  const first = take(a, 4096);
  const second = take(a, 4096);
  take(a, 4096);
  a.release(second);
  t.equal(take(a, 4096), second);
  a.release(first);
  a.release(second);
  t.equal(take(a, 8192), first, 'neighbouring released ranges merged');
});

t.test('exhaustion is an error value, not an exception', async (t) => {
  const a = new IovaAllocator({ ranges: [{ start: 4 * GiB, end: 4 * GiB + 8192 }] });
  take(a, 8192);
  const r = a.allocate(4096);
  t.equal(r.ok, false);
  if (!r.ok) t.match(r.error, /IOVA space exhausted/);
  const b = new IovaAllocator({ ranges: [{ start: 4 * GiB + 4096, end: 4 * GiB + 3 * MiB }] });
  const misaligned = b.allocate(2 * MiB, 2 * MiB);
  t.equal(misaligned.ok, false, 'room for 2 MiB but not at a 2 MiB boundary');
});

t.test('misuse throws InvalidArgument', async (t) => {
  const a = new IovaAllocator({ ranges: [{ start: 4 * GiB, end: 5 * GiB }] });
  t.throws(() => a.allocate(0), InvalidArgument);
  t.throws(() => a.allocate(-4096), InvalidArgument);
  t.throws(() => a.allocate(1.5), InvalidArgument);
  t.throws(() => a.allocate(4096, 3000), InvalidArgument, 'alignment not a power of two');
  t.throws(() => a.release(4 * GiB), InvalidArgument, 'never handed out');
  const iova = take(a, 4096);
  a.release(iova);
  t.throws(() => a.release(iova), InvalidArgument, 'double release');
  t.throws(() => new IovaAllocator({ ranges: [], granuleBytes: 6000 }), InvalidArgument);
  t.throws(() => new IovaAllocator({ ranges: [{ start: 0, end: 2 * 8192 }, { start: 8192, end: 4 * 8192 }] }),
    InvalidArgument, 'overlapping windows');
});
