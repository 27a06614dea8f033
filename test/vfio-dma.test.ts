// DMA memory of the VFIO backend on this machine's real memory: memfd + mmap + koffi.view,
// with the IOMMU (VFIO_IOMMU_MAP_DMA) replaced by a recorder, since there is no VFIO here.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { VfioDmaMemory, type IommuMapper } from '../drivers/vfio/dma.ts';
import { systemLibc, type Pointer } from '../drivers/native/libc.ts';
import { IovaAllocator } from '../drivers/iova-allocator.ts';
import { ok, err, type Result } from '../lib/result.ts';
import { InvalidArgument } from '../lib/errors.ts';

const libc = systemLibc();
const IOVA_BASE = 2 ** 32;
const MiB = 2 ** 20;

class RecordingIommu implements IommuMapper {
  readonly maps: { vaddr: Pointer; iova: number; length: number }[] = [];
  readonly unmaps: { iova: number; length: number }[] = [];
  refuseMap = false;
  refuseUnmap = false;
  map(vaddr: Pointer, iova: number, length: number): Result<void> {
    if (this.refuseMap) return err('ENOMEM');
    this.maps.push({ vaddr, iova, length });
    return ok();
  }
  unmap(iova: number, length: number): Result<void> {
    if (this.refuseUnmap) return err('EINVAL');
    this.unmaps.push({ iova, length });
    return ok();
  }
}

function setup(options: { hugePages?: boolean; iovaBytes?: number } = {}) {
  const iommu = new RecordingIommu();
  const iovas = new IovaAllocator({ ranges: [{ start: IOVA_BASE, end: IOVA_BASE + (options.iovaBytes ?? 64 * MiB) }] });
  const dma = new VfioDmaMemory({ libc, iommu, iovas, hugePages: options.hugePages ?? false });
  return { iommu, iovas, dma };
}

function must<A>(r: Result<A>): A {
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

t.test('allocates zeroed page-rounded memory, maps it at its IOVA, and frees it', async (t) => {
  const { iommu, dma } = setup();
  const b = must(dma.alloc(10000));
  t.equal(b.length, 12288, 'rounded up to whole 4 KiB pages');
  t.equal(b.pageBytes, 4096);
  t.equal(b.iova, IOVA_BASE);
  t.equal(b.bytes.length, 12288);
  t.equal(b.u32.length, 3072);
  t.equal(b.view.byteLength, 12288);
  t.ok(b.bytes.every((v) => v === 0), 'zeroed');
  t.equal(iommu.maps.length, 1);
  t.equal(iommu.maps[0]!.iova, IOVA_BASE);
  t.equal(iommu.maps[0]!.length, 12288);
  t.equal(Number(iommu.maps[0]!.vaddr) % 4096, 0, 'the process address handed to the IOMMU is page aligned');
  t.equal(dma.allocatedBytes, 12288);
  t.equal(dma.allocatedBuffers, 1);

  // The typed views share the memory, little-endian.
  b.u32[1] = 0x11223344;
  t.same([...b.bytes.subarray(4, 8)], [0x44, 0x33, 0x22, 0x11]);
  b.view.setUint32(12284, 0xa5a5_0001, true);
  t.equal(b.u32[3071], 0xa5a5_0001);

  // The bytes live at the address given to the IOMMU: read them back through another view of it.
  const other = new Uint8Array(libc.view(iommu.maps[0]!.vaddr, 12288));
  t.equal(other[4], 0x44);
  t.equal(other[12284], 0x01);
  other[100] = 0x5a;
  t.equal(b.bytes[100], 0x5a);

  dma.free(b);
  t.same(iommu.unmaps, [{ iova: IOVA_BASE, length: 12288 }], 'unmapped from the IOMMU with the mapped length');
  t.equal(dma.allocatedBytes, 0);
  t.equal(dma.allocatedBuffers, 0);
  t.equal(must(dma.alloc(4096)).iova, IOVA_BASE, 'the IOVA is reused after free');
});

t.test('two live buffers never share memory or IOVAs', async (t) => {
  const { dma } = setup();
  const a = must(dma.alloc(8192));
  const b = must(dma.alloc(8192));
  t.ok(a.iova + a.length <= b.iova || b.iova + b.length <= a.iova, 'IOVA ranges disjoint');
  a.bytes.fill(0xaa);
  t.ok(b.bytes.every((v) => v === 0), 'writing one buffer leaves the other untouched');
  dma.free(a);
  dma.free(b);
});

t.test('a zero-length request gets one page; a bad length is an error value', async (t) => {
  const { dma } = setup();
  t.equal(must(dma.alloc(0)).length, 4096);
  t.equal(dma.alloc(-1).ok, false);
  t.equal(dma.alloc(1.5).ok, false);
  t.equal(dma.alloc(Number.NaN).ok, false);
});

t.test('an IOMMU refusal is an error value and gives everything back', async (t) => {
  const { iommu, iovas, dma } = setup();
  iommu.refuseMap = true;
  const r = dma.alloc(4096);
  t.equal(r.ok, false);
  if (!r.ok) t.match(r.error, /IOMMU refused 4096 bytes .*ENOMEM/);
  t.equal(dma.allocatedBytes, 0);
  t.equal(iovas.allocatedBytes, 0, 'the IOVA went back to the allocator');
  iommu.refuseMap = false;
  t.equal(must(dma.alloc(4096)).iova, IOVA_BASE);
});

t.test('running out of IOVA space is an error value', async (t) => {
  const { dma, iommu } = setup({ iovaBytes: 8192 });
  must(dma.alloc(8192));
  const r = dma.alloc(4096);
  t.equal(r.ok, false);
  if (!r.ok) t.match(r.error, /IOVA space exhausted/);
  t.equal(iommu.maps.length, 1, 'nothing was mapped for the failed request');
  t.equal(dma.allocatedBuffers, 1);
});

t.test('freeing twice or freeing a foreign buffer throws InvalidArgument', async (t) => {
  const { dma } = setup();
  const other = setup().dma;
  const b = must(dma.alloc(4096));
  t.throws(() => other.free(b), InvalidArgument);
  dma.free(b);
  t.throws(() => dma.free(b), InvalidArgument);
});

t.test('a view kept after free reads zeros instead of faulting', async (t) => {
  const { dma } = setup();
  const b = must(dma.alloc(4096));
  b.bytes.fill(0x77);
  const stale = b.u32;
  dma.free(b);
  t.equal(stale[0], 0, 'the pages were replaced by a zero placeholder');
  stale[0] = 5; // goes to the placeholder, not to memory anyone else owns
  const again = must(dma.alloc(4096));
  t.equal(again.u32[0], 0, 'the next buffer is fresh zeroed memory');
});

t.test('an IOVA that could not be unmapped is never handed out again', async (t) => {
  const { iommu, iovas, dma } = setup();
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  const b = must(dma.alloc(4096));
  iommu.refuseUnmap = true;
  dma.free(b);
  iommu.refuseUnmap = false;
  t.equal(iovas.lengthOf(b.iova), 4096, 'still reserved in the allocator');
  t.not(must(dma.alloc(4096)).iova, b.iova);
  await new Promise((resolve) => setImmediate(resolve));
  t.match(warnings.join('\n'), /could not be unmapped/);
});

t.test('buffers of 2 MiB or more use hugepages when reserved, 4 KiB pages otherwise', async (t) => {
  let freeHugePages = 0;
  try {
    freeHugePages = Number(readFileSync('/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages', 'utf8'));
  } catch {
    // no hugetlb support at all: 4 KiB pages
  }
  const { dma, iommu } = setup({ hugePages: true });
  const b = must(dma.alloc(2 * MiB + 1));
  if (freeHugePages >= 2) {
    t.equal(b.pageBytes, 2 * MiB);
    t.equal(b.length, 4 * MiB);
    t.equal(b.iova % (2 * MiB), 0, 'IOVA aligned to the hugepage');
  } else {
    t.comment(`no free 2 MiB hugepages here (${freeHugePages}): checking the 4 KiB fallback`);
    t.equal(b.pageBytes, 4096);
    t.equal(b.length, 2 * MiB + 4096);
  }
  t.equal(iommu.maps[0]!.length, b.length);
  b.bytes[b.length - 1] = 9;
  t.equal(b.view.getUint8(b.length - 1), 9);
  dma.free(b);

  const small = setup({ hugePages: true }).dma;
  t.equal(must(small.alloc(MiB)).pageBytes, 4096, 'below 2 MiB: never a hugepage');
  const off = setup({ hugePages: false }).dma;
  t.equal(must(off.alloc(2 * MiB)).pageBytes, 4096, 'hugepages turned off');
});

t.test('freeAll releases every buffer', async (t) => {
  const { dma, iommu } = setup();
  must(dma.alloc(4096));
  must(dma.alloc(8192));
  dma.freeAll();
  t.equal(dma.allocatedBuffers, 0);
  t.equal(dma.allocatedBytes, 0);
  t.equal(iommu.unmaps.length, 2);
});

t.test('a buffer freeAll released may be freed again afterwards: nothing happens (the driver\'s quarantine at ' +
  'close); a buffer it never had still throws', async (t) => {
  const { dma, iommu } = setup();
  const held = must(dma.alloc(4096));
  const other = setup().dma;
  const foreign = must(other.alloc(4096));
  dma.freeAll(); // the device's close: every buffer unmapped and freed
  t.doesNotThrow(() => dma.free(held), 'lib/bnxt/dma-pool.ts releaseQuarantine after close');
  t.equal(iommu.unmaps.length, 1, 'unmapped once, at close');
  t.equal(dma.allocatedBytes, 0);
  t.throws(() => dma.free(foreign), InvalidArgument, 'a buffer of another device is still a misuse');
  const fresh = must(dma.alloc(4096));
  dma.free(fresh);
  t.throws(() => dma.free(fresh), InvalidArgument, 'freeing twice outside close is still a misuse');
});
