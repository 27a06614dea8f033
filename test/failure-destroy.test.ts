// Issue 5, failure rule 8: destroy while entries are outstanding. The NIC runs none of them
// and writes no memory for the queue pair once destroy returns (the model's IOMMU observer
// sees every DMA write); the peer's entries fail once their retries end.
import t from 'tap';
import type { Nic, Qp, Region } from '../lib/index.ts';
import {
  openNic, openTwoNics, connectedPair, region, controls, counters, pass, ringMemory, overlaps, waitAll, okBytes, error,
  must,
} from './failure-setup.ts';

const RETRY_EXCEEDED = 'retry exceeded: the peer did not acknowledge (TRANSPORT_RETRY_CNT_ERR)';

/** Records every DMA write of `nic`'s model that lands in `qp`'s rings or in one of `regions`. */
function watchWrites(
  nic: Nic, qp: Qp, regions: readonly Region[],
): { landed: string[]; all: () => number; start(): void; stop(): void } {
  const memory = ringMemory(qp).map((b) => ({ at: b.iova, length: b.length, what: 'its rings' }));
  for (const r of regions) memory.push({ at: r.vaHi * 2 ** 32 + r.vaLo, length: r.length, what: 'its region' });
  const landed: string[] = [];
  let all = 0;
  const start = () => controls(nic).model.onDmaWrite((iova: number, length: number) => {
    all++;
    for (const m of memory)
      if (overlaps(iova, length, m.at, m.length)) landed.push(`${length} bytes at 0x${iova.toString(16)} (${m.what})`);
  });
  start();
  return { landed, all: () => all, start, stop: () => controls(nic).model.onDmaWrite(undefined) };
}

t.test('rule 8: destroy with sends and receives outstanding (peer on another NIC): nothing runs or lands after it ' +
  'returns; the peer\'s entries fail after their retries', async (t) => {
  const [nicA, nicB] = openTwoNics(81);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  ra.bytes.fill(0xaa);
  for (let i = 0; i < 8; i++) a.receive(ra, i * 4096, 4096);
  b.receive(rb, 0, 4096);
  b.receive(rb, 4096, 4096);
  for (let i = 0; i < 6; i++) a.send(ra, 40000 + i * 100, 100); // two land, four are retried (RNR)
  b.send(rb, 9000, 300); // lands in a's first receive
  pass(nicA, 2000);
  t.ok(counters(nicA)['rnrNaksReceived']! > 0, 'a\'s sends are outstanding, retried');
  t.same(b.wait('send', 1e6), okBytes(300), 'b\'s first send completed before the destroy');
  // a's CQs hold completions nobody took; its rings hold entries the NIC has not finished.
  const watch = watchWrites(nicA, a, [ra]); // its rings' addresses, taken while they exist
  watch.stop();
  must(a.destroy(), 'destroy a');
  watch.start();
  const afterDestroy = counters(nicA);
  ra.bytes.fill(0xaa);
  // b keeps sending to a; b's receives wait for sends a will never make.
  for (let i = 0; i < 3; i++) b.send(rb, 10000 + i * 100, 100);
  const sends = waitAll(b, 'send', 3, 5e6);
  t.same(sends, [error(RETRY_EXCEEDED), error(RETRY_EXCEEDED), error(RETRY_EXCEEDED)],
    'b\'s sends fail once their retries end, and the rest with that error');
  t.same(waitAll(b, 'receive', 2, 1e6).map((r) => r?.ok), [true, true],
    'b\'s receives that took a\'s two sends keep their result');
  b.receive(rb, 0, 10);
  t.same(b.wait('receive', 1e6), error(RETRY_EXCEEDED), 'a later receive completes with the failure\'s error');
  const end = counters(nicA);
  watch.stop();
  t.same(watch.landed, [], 'no DMA write landed in a\'s rings or region after destroy returned');
  t.equal(watch.all(), 0, 'the NIC wrote no host memory at all meanwhile (nothing else lives on it)');
  t.ok(ra.bytes.every((x) => x === 0xaa), 'a\'s region is untouched');
  t.equal(end['packetsSent'], afterDestroy['packetsSent'], 'a\'s outstanding sends were never sent again');
  t.equal(end['framesSent'], afterDestroy['framesSent'], 'the NIC sent nothing at all for a: no ACK, no NAK');
  t.ok(end['dropUnknownQp']! > afterDestroy['dropUnknownQp']!,
    'b\'s retries reached a QP number that no longer exists');
  t.equal(controls(nicA).engine.dmaWritesAfterDestroy(), 0,
    'the engine never tried a write for the destroyed queue pair');
});

t.test('rule 8: destroy during an RDMA read (peer on the same NIC): the read\'s remaining responses land ' +
  'nowhere', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [c, d] = connectedPair(nic);
  const size = 4 << 20;
  const src = region(nic, size);
  const dst = region(nic, size);
  src.bytes.fill(0x5c);
  // Every frame takes 20 us on the cable (at most 64 in flight): the read lasts a while.
  controls(nic).engine.setFaults('tx', { delayNs: 20_000 });
  c.read(src, 0, dst, 0, size);
  for (let i = 0; i < 1000 && dst.bytes[size / 8] === 0; i++) pass(nic, 10);
  const landedBefore = dst.bytes.indexOf(0);
  t.ok(landedBefore > 0 && landedBefore < size, `the read is under way: ${landedBefore} of ${size} bytes landed`);
  const watch = watchWrites(nic, c, [dst]);
  watch.stop();
  must(c.destroy(), 'destroy c');
  watch.start();
  const requests = counters(nic)['packetsSent']!;
  pass(nic, 500_000);
  watch.stop();
  t.same(watch.landed, [], 'no DMA write landed in c\'s rings or the read\'s destination after destroy returned');
  t.ok(dst.bytes.subarray(landedBefore).every((x) => x === 0),
    'nothing landed past what had landed before the destroy');
  t.equal(counters(nic)['packetsSent'], requests,
    'c never asked again for the responses it lost (it would have, after its ACK timeout)');
  // d, the peer that served the read, fails its next send once the retries end.
  d.send(src, 0, 10);
  t.same(d.wait('send', 5e6), error(RETRY_EXCEEDED), 'the peer\'s send fails after its retries');
  t.equal(controls(nic).engine.dmaWritesAfterDestroy(), 0);
  t.equal(counters(nic)['internalErrors'], 0);
});
