// The model's IOMMU translates page by page, as an IOMMU's page tables do: a range is reachable
// when every byte of it is mapped, however the mappings were made. A guest behind a virtual IOMMU
// hands each 4 KiB page over as its own DMA_MAP (QEMU passes each IOTLB entry on as one), so a
// buffer the driver sees as one piece arrives as many mappings, in whatever order the guest's
// IOMMU driver made them; a 64 KiB ring is 16. Here: one buffer mapped 4 KiB at a time, in order
// and out of order, and with a hole; every fault counted.
import t from 'tap';
import { Buffer } from 'node:buffer';
import { Iommu } from '../drivers/emu/model/iommu.ts';
import { PagedMemory } from '../drivers/emu/model/objects.ts';
import { readHost, writeHost } from '../drivers/emu/model/engine/host.ts';

const PAGE = 4096;
const BASE = 0x1_0022_d000; // the IOVA the guest's CREQ had (docs/vfio-user.md)
const PAGES = 16;

/** Bytes 0..n-1 of a recognisable pattern (no two neighbouring pages alike). */
function pattern(n: number): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (i * 7 + (i >>> 12) * 13 + 1) & 0xff);
}

/** A 16-page buffer filled with pattern(), mapped one 4 KiB mapping per page in `order`. */
function pageMapped(order: readonly number[]): { iommu: Iommu; bytes: Uint8Array } {
  const memory = new SharedArrayBuffer(PAGES * PAGE);
  const bytes = new Uint8Array(memory);
  bytes.set(pattern(bytes.length));
  const iommu = new Iommu();
  for (const p of order) iommu.map(BASE + p * PAGE, memory, PAGE, p * PAGE);
  return { iommu, bytes };
}

/** A Node Buffer over the same bytes: tap compares Buffers with Buffer.equals (fast, also when they differ). */
const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.length);

const inOrder = Array.from({ length: PAGES }, (_, i) => i);
// A fixed shuffle: every page mapped, none next to the one mapped before it.
const shuffled = [7, 2, 12, 0, 9, 4, 14, 1, 11, 5, 15, 3, 8, 13, 6, 10];

for (const [name, order] of [['in order', inOrder], ['out of order', shuffled]] as const) {
  t.test(`a buffer mapped 4 KiB at a time, ${name}: reachable as one range, byte for byte`, async (t) => {
    const { iommu, bytes } = pageMapped(order);
    t.equal(iommu.mappedBuffers, PAGES, 'one mapping per page');
    t.ok(iommu.check(BASE, PAGES * PAGE), 'the whole 64 KiB (a contiguous ring as RING_ALLOC checks it)');
    t.ok(iommu.check(BASE + PAGE - 8, 16), 'a range across one page boundary');
    t.notOk(iommu.check(BASE, PAGES * PAGE + 1), 'one byte past the last page is not mapped');
    t.notOk(iommu.check(BASE - 1, 2), 'nor one byte before the first');

    const all = new Uint8Array(PAGES * PAGE);
    t.ok(iommu.readInto(BASE, all.length, all, 0), 'readInto across all 16 mappings');
    t.same(buf(all), buf(bytes), 'the bytes, in IOVA order');
    const part = new Uint8Array(3 * PAGE);
    t.ok(iommu.readInto(BASE + 2 * PAGE + 100, part.length, part, 0));
    t.same(buf(part), buf(bytes.subarray(2 * PAGE + 100, 5 * PAGE + 100)), 'a range starting and ending inside pages');

    // Scalars across a page boundary: little-endian, as from one piece of memory.
    const dv = new DataView(bytes.buffer);
    const edge = BASE + 5 * PAGE - 2;
    t.equal(iommu.read32(edge), dv.getUint32(5 * PAGE - 2, true), 'read32 across the boundary');
    t.equal(iommu.read16(BASE + 6 * PAGE - 1), dv.getUint16(6 * PAGE - 1, true), 'read16 across it');
    t.equal(iommu.read64(BASE + 7 * PAGE - 4),
      dv.getUint32(7 * PAGE - 4, true) + dv.getUint32(7 * PAGE, true) * 2 ** 32, 'read64 across it');

    const src = Uint8Array.from({ length: 2 * PAGE + 10 }, (_, i) => (255 - i) & 0xff);
    const writes: [number, number][] = [];
    iommu.onWrite = (iova, length) => writes.push([iova, length]);
    t.ok(iommu.writeFrom(BASE + 9 * PAGE - 5, src, 0, src.length), 'writeFrom across three mappings');
    const landed = bytes.subarray(9 * PAGE - 5, 9 * PAGE - 5 + src.length);
    t.same(buf(landed), buf(src), 'the bytes landed where the IOVAs say');
    t.ok(iommu.write32Release(BASE + 12 * PAGE - 1, 0x11223344), 'a release write across a boundary');
    t.equal(dv.getUint32(12 * PAGE - 1, true), 0x11223344);
    t.same(writes, [[BASE + 9 * PAGE - 5, src.length], [BASE + 12 * PAGE - 1, 4]], 'the write observer saw each once');
    t.equal(iommu.faults, 0, 'no fault');
  });
}

t.test('a hole in the range: every access that touches it faults and does nothing; the rest answers', async (t) => {
  const { iommu, bytes } = pageMapped(shuffled);
  const before = bytes.slice();
  iommu.unmap(BASE + 6 * PAGE);
  t.equal(iommu.mappedBuffers, PAGES - 1);
  t.notOk(iommu.check(BASE, PAGES * PAGE), 'the whole range is no longer reachable');
  t.notOk(iommu.check(BASE + 6 * PAGE - 1, 2), 'a range that enters the hole');
  t.ok(iommu.check(BASE, 6 * PAGE), 'the pages before the hole, together');
  t.ok(iommu.check(BASE + 7 * PAGE, 9 * PAGE), 'and after it');
  t.equal(iommu.faults, 0, 'a check is not an access: no fault');

  const out = new Uint8Array(4 * PAGE).fill(0xee);
  t.notOk(iommu.readInto(BASE + 4 * PAGE, out.length, out, 0), 'readInto across the hole');
  t.ok(out.every((b) => b === 0xee), 'and it wrote nothing into the destination');
  t.equal(iommu.read32(BASE + 7 * PAGE - 2), 0, 'read32 across the hole\'s far edge reads zeros');
  t.equal(iommu.read8(BASE + 6 * PAGE + 100), 0, 'a read inside the hole reads zero');
  t.notOk(iommu.writeFrom(BASE + 5 * PAGE, new Uint8Array(2 * PAGE).fill(9), 0, 2 * PAGE), 'writeFrom across it');
  t.notOk(iommu.write32Release(BASE + 6 * PAGE - 2, 0xffffffff), 'a release write into it');
  t.same(buf(bytes), buf(before), 'no byte of the buffer changed: a write that faults lands nowhere, not in part');
  t.equal(iommu.faults, 5, 'each of the five accesses one fault');
  const tail = new Uint8Array(2 * PAGE);
  t.ok(iommu.readInto(BASE + 7 * PAGE + 50, tail.length, tail, 0), 'the pages after the hole still answer');
  t.same(buf(tail), buf(bytes.subarray(7 * PAGE + 50, 9 * PAGE + 50)));
  t.equal(iommu.faults, 5);

  // The page mapped again (here to new memory, as the guest may): the range is whole once more.
  const fresh = new Uint8Array(new SharedArrayBuffer(PAGE)).fill(0x5a);
  iommu.map(BASE + 6 * PAGE, fresh.buffer as SharedArrayBuffer, PAGE);
  t.ok(iommu.check(BASE, PAGES * PAGE));
  t.equal(iommu.read32(BASE + 7 * PAGE - 2), 0x5a5a | (bytes[7 * PAGE]! << 16) | (bytes[7 * PAGE + 1]! << 24));
});

t.test('one page of a range in use unmapped: the next access through its cached translation faults', async (t) => {
  const { iommu, bytes } = pageMapped(shuffled);
  // A contiguous (depth 0) ring of 4 KiB pages, and a region whose page is the whole 64 KiB.
  const ring = new PagedMemory(inOrder.map((p) => BASE + p * PAGE), PAGE, PAGES * PAGE);
  const region = new PagedMemory([BASE], PAGES * PAGE, PAGES * PAGE);
  const dv = new DataView(bytes.buffer);
  t.equal(iommu.read32In(ring, 3 * PAGE + 8), dv.getUint32(3 * PAGE + 8, true), 'the ring\'s page 3 (cached now)');
  const got = new Uint8Array(PAGE);
  t.ok(readHost(iommu, region, 3 * PAGE - 100, PAGE, got, 0), 'a copy across mappings inside the region\'s page');
  t.same(buf(got), buf(bytes.subarray(3 * PAGE - 100, 4 * PAGE - 100)));
  const put = new Uint8Array(300).fill(0xab);
  t.ok(writeHost(iommu, region, 2 * PAGE - 150, put, 0, put.length), 'and a write');
  t.same(buf(bytes.subarray(2 * PAGE - 150, 2 * PAGE + 150)), buf(put));
  t.equal(iommu.faults, 0);

  iommu.unmap(BASE + 3 * PAGE);
  t.equal(iommu.read32In(ring, 3 * PAGE + 8), 0, 'the ring\'s page 3 now faults (reads zeros)');
  t.equal(iommu.wordsIn(ring, 3 * PAGE, 16), undefined, 'a zero-copy look faults too');
  t.notOk(readHost(iommu, region, 3 * PAGE - 100, PAGE, got, 0), 'the copy across it faults');
  t.equal(iommu.faults, 3, 'three faults');
  t.equal(iommu.read32In(ring, 4 * PAGE), dv.getUint32(4 * PAGE, true), 'the next page still answers');
  t.equal(iommu.faults, 3);
});

t.test('the zero-copy accesses hand out one mapping\'s bytes: inside one page, not across two', async (t) => {
  const { iommu, bytes } = pageMapped(shuffled);
  const ring = new PagedMemory(inOrder.map((p) => BASE + p * PAGE), PAGE, PAGES * PAGE);
  const u = iommu.wordsIn(ring, 5 * PAGE + 64, 32);
  t.equal(u?.[iommu.wordOffset], new DataView(bytes.buffer).getUint32(5 * PAGE + 64, true), 'a 32-byte entry');
  const b = iommu.bytesIn(ring, 5 * PAGE + 64, 32);
  t.equal(b?.[iommu.viewOffset], bytes[5 * PAGE + 64], 'its bytes');
  t.equal(iommu.faults, 0);
  const region = new PagedMemory([BASE], PAGES * PAGE, PAGES * PAGE);
  t.equal(iommu.bytesInIfMapped(region, PAGE - 8, 16), undefined, 'across two mappings: no one view');
  t.equal(iommu.faults, 0, 'and bytesInIfMapped counts no fault (its caller copies instead: readHost)');
  t.equal(iommu.bytesIn(region, PAGE - 8, 16), undefined);
  t.equal(iommu.faults, 1, 'bytesIn counts one');
});

t.test('one large mapping and page-sized neighbours: the fast path, and ranges across them', async (t) => {
  const iommu = new Iommu();
  const big = new SharedArrayBuffer(8 * PAGE);
  new Uint8Array(big).fill(1);
  const small = new SharedArrayBuffer(PAGE);
  new Uint8Array(small).fill(2);
  iommu.map(BASE, big, 8 * PAGE);
  iommu.map(BASE + 8 * PAGE, small, PAGE);
  t.equal(iommu.read32(BASE + 100), 0x01010101, 'inside the large mapping');
  t.equal(iommu.read32(BASE + 8 * PAGE - 2), 0x02020101, 'across into its neighbour');
  t.ok(iommu.check(BASE, 9 * PAGE));
  t.equal(iommu.faults, 0);
});

t.test('a mapping that overlaps another, or whose words would not be the buffer\'s, is refused', async (t) => {
  const iommu = new Iommu();
  const memory = new SharedArrayBuffer(2 * PAGE);
  iommu.map(BASE, memory, PAGE);
  t.throws(() => iommu.map(BASE + PAGE - 4, memory, PAGE, PAGE), /overlaps another/);
  t.throws(() => iommu.map(BASE - PAGE + 4, memory, PAGE, PAGE), /overlaps another/);
  t.throws(() => iommu.map(BASE + PAGE, memory, PAGE, 2), /offset 2 is not a multiple of 4/);
  t.equal(iommu.mappedBuffers, 1);
});
