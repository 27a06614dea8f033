/**
 * The RoCE engine's data path over host memory that the IOMMU holds one 4 KiB mapping per page,
 * as a guest behind a virtual IOMMU hands it over (QEMU passes each IOTLB entry on as its own
 * vfio-user DMA_MAP), mapped here in reverse order; and with every ring and region named by a
 * page list of one page as large as the buffer (a contiguous ring, a region registered with a
 * large page size), so each of their pages spans several mappings. SENDs and READs whose packets
 * cross those mappings must land byte for byte, with no IOMMU fault.
 */
import t from 'tap';
import { Buffer as NodeBuffer } from 'node:buffer';
import { ACCESS_MR, REQ, RES, TestNic, WQE, pattern, type Buffer } from './helpers/emu-engine-harness.ts';
import { PagedMemory } from '../drivers/emu/model/objects.ts';

const PAGE = 4096;
const MTU = 1024;
/** Far from the harness's own IOVAs (from 4 GiB), as a guest's IOMMU driver places them. */
let nextIova = 2 ** 40;

class PageMappedNic extends TestNic {
  override alloc(length: number): Buffer {
    const size = Math.max(PAGE, Math.ceil(length / PAGE) * PAGE);
    const sab = new SharedArrayBuffer(size);
    const iova = nextIova;
    nextIova += size + PAGE; // a hole after each buffer: overruns fault
    for (let off = size - PAGE; off >= 0; off -= PAGE) this.model.iommu.map(iova + off, sab, PAGE, off);
    return { iova, bytes: NodeBuffer.from(sab), view: new DataView(sab) };
  }

  /** One page as large as the buffer (a power of two): every access inside it may span mappings. */
  override paged(b: Buffer, length: number): PagedMemory {
    const pageBytes = 2 ** Math.ceil(Math.log2(Math.max(PAGE, length)));
    return new PagedMemory([b.iova], pageBytes, length);
  }
}

t.test('SENDs across page-sized mappings land intact, gathered and scattered across them', async (t) => {
  const nic = new PageMappedNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  t.ok(nic.model.iommu.mappedBuffers > 8, `${nic.model.iommu.mappedBuffers} mappings for the rings alone`);
  const sizes = [MTU + 1, 5 * PAGE + 17];
  for (const [i, size] of sizes.entries()) {
    const src = nic.alloc(size + 600);
    src.bytes.set(pattern(size + 600, i));
    const dst = nic.alloc(size + 900);
    const smr = nic.mr(src, 0);
    const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
    // Offsets that put page boundaries inside packets on both sides.
    b.recv([{ va: dst.iova + 700, lkey: dmr.key, size: size + 100 }]);
    a.post({ sges: [{ va: src.iova + 500, lkey: smr.key, size }] });
    t.ok(nic.runUntil(() => b.rcq.cq.producer > i && a.scq.cq.producer > i), `size ${size}: both completions`);
    t.match(a.scq.pollAll(), [{ status: REQ.OK }], `size ${size}: requester OK`);
    t.match(b.rcq.pollAll(), [{ status: RES.OK, length: size }], `size ${size}: responder OK`);
    t.same(dst.bytes.subarray(700, 700 + size), src.bytes.subarray(500, 500 + size), `size ${size}: the bytes`);
    t.ok(dst.bytes.subarray(0, 700).every((x) => x === 0) && dst.bytes.subarray(700 + size).every((x) => x === 0),
      `size ${size}: nothing outside the message`);
  }
  t.equal(nic.model.iommu.faults, 0, 'no IOMMU fault');
  t.equal(nic.counters()['dmaFaults'] ?? 0, 0);
});

t.test('a READ across page-sized mappings: the responses land in the local region intact', async (t) => {
  const nic = new PageMappedNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU });
  const size = 3 * PAGE + 333;
  const remote = nic.alloc(size + 4000);
  remote.bytes.set(pattern(remote.bytes.length, 9));
  const rmr = nic.mr(remote, ACCESS_MR.REMOTE_READ);
  const local = nic.alloc(size + 4000);
  const lmr = nic.mr(local, ACCESS_MR.LOCAL_WRITE);
  a.post({
    type: WQE.READ, sges: [{ va: local.iova + 3900, lkey: lmr.key, size }], remoteVa: remote.iova + 3800,
    rkey: rmr.key,
  });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1), 'completes');
  t.match(a.scq.pollAll(), [{ status: REQ.OK }]);
  t.same(local.bytes.subarray(3900, 3900 + size), remote.bytes.subarray(3800, 3800 + size), 'the bytes');
  t.equal(nic.model.iommu.faults, 0, 'no IOMMU fault');
});
