// Issue 5, failure rule 9: firmware refusals and silence during make, connect and destroy,
// composed with data-path state: a destroy refused after traffic, a make or connect refused
// while other queue pairs carry messages, a firmware gone silent while they do, and refusals
// drawn at random (seeded) through cycles of make, connect, traffic and destroy.
import t from 'tap';
import { Qp, Region, InvalidArgument } from '../lib/index.ts';
import {
  openNic, openTwoNics, connectedPair, region, controls, counters, pass, okBytes, emuOf, seedFor, must,
} from './failure-setup.ts';

// roce_hsi.h: CMDQ_BASE_OPCODE_*, CREQ_BASE_STATUS_FAIL.
const CREATE_QP = 0x01;
const DESTROY_QP = 0x02;
const FAIL = 0x1;

/** n messages a -> b of `size` bytes, each checked; true if all arrived Ok. */
function traffic(a: Qp, b: Qp, ra: Region, rb: Region, n: number, size: number): boolean {
  for (let i = 0; i < n; i++) {
    ra.bytes.fill((i * 7 + 1) & 0xff, 0, size);
    b.receive(rb, 0, size);
    a.send(ra, 0, size);
    const s = a.wait('send', 5e6);
    const r = b.wait('receive', 5e6);
    if (!s?.ok || s.value !== size || !r?.ok || r.value !== size || rb.bytes[size - 1] !== ((i * 7 + 1) & 0xff))
      return false;
  }
  return true;
}

t.test('rule 9: destroy refused after traffic: Error, the queue pair counts as destroyed, its rings stay allocated, ' +
  'and its peer still fails in order', async (t) => {
  const [nicA, nicB] = openTwoNics(91);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  t.ok(traffic(a, b, ra, rb, 20, 3000), 'twenty messages went a -> b');
  t.ok(traffic(b, a, rb, ra, 20, 5000), 'twenty went b -> a');
  a.receive(ra, 0, 100);
  a.send(ra, 0, 100); // b posted no receive: outstanding
  pass(nicA, 1000);
  const live = nicA.info.dmaBytes;
  controls(nicA).roce.refuseOpcode(DESTROY_QP, FAIL);
  const r = a.destroy();
  t.same(r, { ok: false, error: 'Qp.destroy: DESTROY_QP refused by the firmware: FAIL' }, 'destroy is an Error');
  controls(nicA).roce.clearFaults();
  t.same(a.destroy(), r, 'and so is every later call, with the firmware answering again');
  t.equal(a.connected, false, 'it counts as destroyed');
  t.throws(() => a.send(ra, 0, 1), InvalidArgument, 'it takes no more entries');
  t.equal(nicA.info.dmaBytes, live, 'its rings stay allocated');
  // The SQ (P5: 4096 x 128-byte WQEs + 16-byte PSN entries; P7: 12288 16-byte slots + 8192
  // 8-byte MSN entries), the RQ (4096 x 128) and two CQs (2 x 4096 x 32).
  const sqBytes = nicA.info.chipFamily === 'P7' ? 12288 * 16 + 8192 * 8 : 4096 * 144;
  t.ok(nicA.info.quarantinedBytes >= sqBytes + 4096 * (128 + 64), 'held until close');
  // The peer's data path is its own: it keeps working, then fails in order when a stops answering.
  const c = must(Qp.make(nicA), 'another queue pair beside it');
  const d = must(Qp.make(nicB), 'and its peer');
  must(c.connect(d.endpoint), 'connect c');
  must(d.connect(c.endpoint), 'connect d');
  t.ok(traffic(c, d, ra, rb, 10, 4097), 'other queue pairs of the NIC carry messages beside it');
  const dma = emuOf(nicA).dma;
  nicA.close();
  t.equal(dma.allocatedBytes, 0, 'close frees everything, the refused queue pair\'s rings included');
  b.send(rb, 0, 10);
  const failed = b.wait('send', 5e6);
  t.equal(failed?.ok, false, 'with its peer\'s NIC closed, b\'s send fails once its retries end');
  if (failed && !failed.ok) t.match(failed.error, /retry exceeded/);
});

t.test('rule 9: make and connect refused while other queue pairs carry messages: the refusal gives back what it took ' +
  'and the traffic is untouched', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [a, b] = connectedPair(nic);
  const ra = region(nic, 1 << 16);
  const rb = region(nic, 1 << 16);
  // Entries in flight across the refusals: receives posted, sends outstanding.
  for (let i = 0; i < 8; i++) b.receive(rb, i * 4096, 4096);
  for (let i = 0; i < 8; i++) a.send(ra, i * 100, 1000 + i);
  const before = nic.info.dmaBytes;
  controls(nic).roce.refuseOpcode(CREATE_QP, FAIL);
  const made = Qp.make(nic);
  t.same(made, { ok: false, error: 'Qp.make: CREATE_QP: CREATE_QP refused by the firmware: FAIL' }, 'make is an Error');
  t.equal(nic.info.dmaBytes, before, 'and gave back every ring it took');
  controls(nic).roce.clearFaults();
  const c = must(Qp.make(nic), 'make');
  const d = must(Qp.make(nic), 'make');
  controls(nic).roce.refuseNth(2, FAIL); // connect from INIT: MODIFY_QP to RTR, then to RTS (refused)
  const refused = c.connect(d.endpoint);
  t.equal(refused.ok, false, 'connect refused part-way is an Error');
  t.equal(c.connected, false);
  must(c.connect(d.endpoint), 'connect again: from reset');
  must(d.connect(c.endpoint), 'connect d');
  t.ok(traffic(c, d, ra, rb, 5, 200), 'the queue pair connected after a refusal carries messages');
  const sends = [];
  for (let i = 0; i < 8; i++) sends.push(a.wait('send', 5e6));
  t.same(sends, Array.from({ length: 8 }, (_, i) => okBytes(1000 + i)),
    'a\'s sends, posted before the refusals, all completed Ok in order');
  const receives = [];
  for (let i = 0; i < 8; i++) receives.push(b.wait('receive', 5e6));
  t.same(receives, Array.from({ length: 8 }, (_, i) => okBytes(1000 + i)), 'and b took them in order');
  t.equal(counters(nic)['qpErrors'], 0, 'no queue pair failed');
});

t.test('rule 9: a firmware gone silent during destroy after traffic: destroy, make and alloc are Errors; the data ' +
  'path of other queue pairs runs on (it needs no firmware)', async (t) => {
  const nic = openNic();
  const [a, b] = connectedPair(nic);
  const [c, d] = connectedPair(nic);
  const ra = region(nic, 1 << 16);
  const rb = region(nic, 1 << 16);
  t.ok(traffic(a, b, ra, rb, 10, 2000), 'traffic before');
  controls(nic).roce.silence();
  const r = a.destroy();
  t.equal(r.ok, false, 'destroy is an Error');
  if (!r.ok) t.match(r.error, /did not answer within 50 ms/);
  const made = Qp.make(nic);
  t.equal(made.ok, false, 'make is an Error at once (the channel knows the firmware stopped answering)');
  if (!made.ok) t.match(made.error, /stopped answering/);
  const alloc = Region.alloc(nic, 4096);
  t.equal(alloc.ok, false, 'so is Region.alloc');
  t.ok(traffic(c, d, ra, rb, 50, 4096), 'c and d still exchange messages: poll and wait need no firmware');
  t.ok(traffic(d, c, rb, ra, 50, 1), 'both ways');
  const dma = emuOf(nic).dma;
  nic.close();
  t.equal(dma.allocatedBytes, 0, 'close releases everything, the quarantine included');
});

t.test('rule 9: refusals drawn at random (seeded) through cycles of make, connect, traffic and destroy', async (t) => {
  const seed = seedFor(0x9e3779b9);
  const nic = openNic({ seed });
  t.teardown(() => nic.close());
  const ra = region(nic, 1 << 16);
  const rb = region(nic, 1 << 16);
  controls(nic).roce.setRandomFaults({ refuse: 0.15 });
  let made = 0;
  let connected = 0;
  let carried = 0;
  let refusals = 0;
  for (let cycle = 0; cycle < 40; cycle++) {
    const a = Qp.make(nic);
    const b = Qp.make(nic);
    for (const q of [a, b]) if (q.ok) made++; else refusals++;
    if (!a.ok || !b.ok) continue;
    const ca = a.value.connect(b.value.endpoint);
    const cb = b.value.connect(a.value.endpoint);
    if (!ca.ok || !cb.ok) {
      refusals++;
      continue;
    }
    connected++;
    if (!traffic(a.value, b.value, ra, rb, 3, 100 + cycle))
      t.fail(`cycle ${cycle}: a connected pair lost a message (SEED=${seed})`);
    else carried++;
    for (const q of [a.value, b.value]) if (!q.destroy().ok) refusals++;
  }
  t.ok(refusals > 0 && connected > 0,
    `random refusals came ` +
      `(${refusals}) and connected pairs carried messages (${carried} of ${connected}); made ${made} (SEED=${seed})`);
  t.equal(carried, connected, `every queue pair that connected carried its messages (SEED=${seed})`);
  t.equal(counters(nic)['internalErrors'], 0);
  controls(nic).roce.clearFaults();
  const dma = emuOf(nic).dma;
  nic.close();
  t.equal(dma.allocatedBytes, 0, `close releases every queue pair's memory, refused or not (SEED=${seed})`);
});
