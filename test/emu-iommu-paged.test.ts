// The IOMMU's paged accesses (host memory named as a ring's or region's page list and an
// offset, with each page's translation cached): they must answer exactly as the IOVA accesses
// do, a cached translation must not outlive the unmap of its buffer (a device behind an IOMMU
// faults on memory the driver took back), and a range the cache cannot answer still reaches
// the mapping that holds it.
import t from 'tap';
import { Iommu } from '../drivers/emu/model/iommu.ts';
import { PagedMemory } from '../drivers/emu/model/objects.ts';

const GiB = 2 ** 30;
const PAGE = 4096;

function buffer(bytes: number, fill: number): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(bytes);
  new Uint8Array(sab).fill(fill);
  return sab;
}

t.test('reads and writes through the page list land where the IOVA accesses land', async (t) => {
  const iommu = new Iommu();
  const memory = buffer(2 * PAGE, 0);
  iommu.map(4 * GiB, memory, 2 * PAGE);
  // Pages in reverse order: offset 0 is the buffer's second page.
  const paged = new PagedMemory([4 * GiB + PAGE, 4 * GiB], PAGE, 2 * PAGE);
  t.ok(iommu.write32ReleaseIn(paged, 8, 0x11223344));
  t.equal(iommu.read32(4 * GiB + PAGE + 8), 0x11223344, 'offset 8 is byte 8 of the first listed page');
  t.equal(iommu.read32In(paged, PAGE + 12), 0, 'the second listed page is the buffer\'s first');
  new DataView(memory).setUint32(12, 0xcafe, true);
  t.equal(iommu.read32In(paged, PAGE + 12), 0xcafe);
  const u = iommu.wordsIn(paged, 8, 16);
  t.equal(u?.[iommu.wordOffset], 0x11223344, 'words view at the entry');
  const b = iommu.bytesIn(paged, PAGE + 12, 4);
  t.equal(b?.[iommu.viewOffset], 0xfe, 'bytes view at the entry');
  t.equal(iommu.faults, 0);
});

t.test('a region that starts inside its first page: offset 0 is its first byte', async (t) => {
  const iommu = new Iommu();
  const memory = buffer(PAGE, 0);
  new Uint8Array(memory)[100] = 7;
  iommu.map(4 * GiB, memory, PAGE);
  const paged = new PagedMemory([4 * GiB], PAGE, PAGE - 100, 100);
  t.equal(iommu.bytesIn(paged, 0, 1)?.[iommu.viewOffset], 7);
  t.equal(paged.iova(0), 4 * GiB + 100);
});

t.test('after the unmap of a buffer its cached pages fault, also when other buffers stay', async (t) => {
  const iommu = new Iommu();
  iommu.map(4 * GiB, buffer(PAGE, 1), PAGE);
  iommu.map(8 * GiB, buffer(PAGE, 2), PAGE);
  const a = new PagedMemory([4 * GiB], PAGE, PAGE);
  const b = new PagedMemory([8 * GiB], PAGE, PAGE);
  t.equal(iommu.read32In(a, 0), 0x01010101, 'translation cached');
  t.equal(iommu.read32In(b, 0), 0x02020202);
  iommu.unmap(4 * GiB);
  t.equal(iommu.read32In(a, 0), 0, 'reads zeros');
  t.equal(iommu.wordsIn(a, 0, 4), undefined);
  t.notOk(iommu.write32ReleaseIn(a, 0, 5), 'the write is refused');
  t.equal(iommu.faults, 3, 'each access a fault');
  t.equal(iommu.read32In(b, 0), 0x02020202, 'the other buffer still answers');
  // The same IOVA mapped again to new memory: the page list reaches the new memory.
  iommu.map(4 * GiB, buffer(PAGE, 3), PAGE);
  t.equal(iommu.read32In(a, 0), 0x03030303);
});

t.test('a range past the mapping of its page\'s first byte reaches the mapping that holds it', async (t) => {
  const iommu = new Iommu();
  // A page whose first half is one buffer and second half another (buffers need not be pages).
  iommu.map(4 * GiB, buffer(PAGE / 2, 1), PAGE / 2);
  iommu.map(4 * GiB + PAGE / 2, buffer(PAGE / 2, 2), PAGE / 2);
  const paged = new PagedMemory([4 * GiB], PAGE, PAGE);
  t.equal(iommu.read32In(paged, 0), 0x01010101);
  t.equal(iommu.read32In(paged, PAGE / 2 + 8), 0x02020202, 'as read32 at that IOVA');
  t.equal(iommu.read32(4 * GiB + PAGE / 2 + 8), 0x02020202);
  t.equal(iommu.bytesIn(paged, PAGE / 2 - 2, 4), undefined, 'a range across two buffers faults, as the IOVA path');
  t.equal(iommu.faults, 1);
});

t.test('offsets past the page list fault', async (t) => {
  const iommu = new Iommu();
  iommu.map(4 * GiB, buffer(2 * PAGE, 0), 2 * PAGE);
  const paged = new PagedMemory([4 * GiB], PAGE, PAGE);
  t.equal(iommu.wordsIn(paged, PAGE, 4), undefined, 'page 1 is not in the list, though the buffer goes on');
  t.equal(iommu.faults, 1);
});
