// Issue 3, Qp.destroy: one test per spec sentence (Rig_bnxt.Qp, "destroy"), on stepped software NICs.
import t from 'tap';
import { Qp, Region, InvalidArgument } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { emuChip } from '../drivers/emu/model/config.ts';
import { openNic, controls, holdings, requests, watchCommands, unwrap, OP, STATUS, emu } from './helpers/qp-control.ts';

const DESTROY_COMMANDS = ['DESTROY_QP', 'DESTROY_CQ', 'DESTROY_CQ'];
/**
 * A QP's rings: the SQ (static WQEs, P5: 4096 x (128 + 16) B; variable-size, P7: 12288 16-byte
 * slots and 8192 8-byte MSN entries), RQ 4096 x 128 B, two CQs of 4096 x 32 B.
 */
const SQ_BYTES = emuChip(undefined).wqeMode === 'variable' ? 12288 * 16 + 8192 * 8 : 4096 * 144;
const RING_BYTES = SQ_BYTES + 4096 * 128 + 2 * 4096 * 32;

t.test('destroy qp destroys qp and frees its rings: DESTROY_QP, then the CQs, then the memory', async (t) => {
  const nic = openNic();
  const start = holdings(nic);
  const made = watchCommands(nic);
  const qp = unwrap(Qp.make(nic));
  made.restore();
  unwrap(qp.connect(qp.endpoint));
  const cqIds =
    made.log.filter((c) => c.opcode === OP.CREATE_QP).map((c) => [c.body['scq_cid'], c.body['rcq_cid']])[0]!;
  const live = nic.info.dmaBytes;
  t.ok(live - start.dmaBytes >= RING_BYTES, 'the queue pair holds its rings');
  const watch = watchCommands(nic);
  t.same(qp.destroy(), { ok: true, value: undefined });
  watch.restore();
  t.same(watch.log.map((c) => c.name), DESTROY_COMMANDS, 'DESTROY_QP, then the two CQs');
  t.equal(watch.log[0]!.body['qp_cid'], qp.number, 'this queue pair');
  t.same(watch.log.slice(1).map((c) => c.body['cq_cid']).sort(), [...cqIds].sort(), 'its own CQs');
  t.ok(watch.log.every((c) => c.dmaBytesBefore === live),
    'no memory is freed before the firmware confirmed every command');
  t.same(holdings(nic), start, 'then every ring is freed and unmapped, and the firmware holds nothing of it');
  t.same(qp.destroy(), { ok: false, error: 'Qp.destroy: the queue pair is already destroyed' },
    'a second destroy is an Error');
  nic.close();
});

t.test('the NIC runs none of its entries and writes no memory for it once destroy returns Ok', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  unwrap(a.connect(b.endpoint));
  unwrap(b.connect(a.endpoint));
  const ra = unwrap(Region.alloc(nic, 64 * 1024));
  const rb = unwrap(Region.alloc(nic, 64 * 1024));
  ra.bytes.fill(0xee);
  rb.bytes.fill(0x11);
  // a has receives waiting and sends running (b posted no receive: they are RNR-retried forever).
  for (let i = 0; i < 8; i++) a.receive(ra, i * 4096, 4096);
  for (let i = 0; i < 8; i++) a.send(ra, i * 4096, 4096);
  const clock = nicInternals(nic).device.clock;
  clock.sleep(1000);
  const counters = () => controls(nic).engine.counters();
  t.ok(counters()['rnrNaksReceived']! > 0, 'a\'s sends are running');
  unwrap(a.destroy());
  const sent = counters()['packetsSent']!;
  clock.sleep(200_000); // 200 ms of virtual time
  t.equal(counters()['packetsSent'], sent, 'after destroy returned, nothing of a\'s is sent');
  // b now sends to a: a's receives must not take them.
  for (let i = 0; i < 4; i++) b.send(rb, i * 1024, 1024);
  b.wait('send', 2_000_000);
  t.ok(ra.bytes.every((v) => v === 0xee), 'a\'s receive memory is never written');
  t.equal(controls(nic).engine.dmaWritesAfterDestroy(), 0, 'the engine made no host write for it');
  t.ok(counters()['dropUnknownQp']! > 0, 'b\'s packets reach a QP number that no longer exists');
  unwrap(b.destroy());
  unwrap(ra.deregister());
  unwrap(rb.deregister());
  nic.close();
});

t.test('the entries of its peer\'s queue pair fail once their retries end', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  unwrap(a.connect(b.endpoint));
  unwrap(b.connect(a.endpoint));
  const r = unwrap(Region.alloc(nic, 4096));
  b.receive(r, 0, 64);
  b.receive(r, 64, 64);
  unwrap(a.destroy());
  const counters = () => controls(nic).engine.counters();
  const retries = counters()['retransmitEvents']!;
  b.send(r, 1024, 100);
  b.send(r, 2048, 100);
  const first = b.wait('send', 5_000_000);
  t.equal(first?.ok, false, 'the peer\'s send fails');
  if (first && !first.ok) t.match(first.error, /retry exceeded/);
  t.equal(counters()['retransmitEvents']! - retries, 7, 'once its 7 retries ended');
  t.equal(b.poll('send')?.ok, false, 'its next send fails too');
  t.equal(b.poll('receive')?.ok, false, 'and its receives');
  t.equal(b.poll('receive')?.ok, false);
  t.ok(b.failure, 'the peer\'s queue pair has failed');
  unwrap(b.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('it is Error msg if the firmware refuses; qp then counts as destroyed, and its rings stay allocated until ' +
  'close', async (t) => {
  for (let n = 1; n <= DESTROY_COMMANDS.length; n++) {
    const nic = openNic();
    const start = holdings(nic);
    const qp = unwrap(Qp.make(nic));
    unwrap(qp.connect(qp.endpoint));
    const live = nic.info.dmaBytes;
    controls(nic).roce.refuseNth(n, STATUS.FAIL);
    const r = qp.destroy();
    t.notOk(r.ok, `${DESTROY_COMMANDS[n - 1]} refused: destroy is an Error`);
    if (!r.ok) t.match(r.error, `${DESTROY_COMMANDS[n - 1]} refused by the firmware: FAIL`);
    // Every call after is an Error, and asks the firmware nothing.
    const asked = requests(nic);
    for (let i = 0; i < 3; i++) t.notOk(qp.destroy().ok, `destroy ${i + 2} is an Error`);
    t.same(requests(nic), asked, 'the later calls send no request');
    t.equal(qp.connected, false, 'it counts as destroyed: not connected');
    t.throws(() => qp.connect(qp.endpoint), InvalidArgument, 'it cannot be connected again');
    const region = unwrap(Region.alloc(nic, 4096));
    t.throws(() => qp.send(region, 0, 1), InvalidArgument, 'nor take sends');
    unwrap(region.deregister());
    t.equal(nic.info.dmaBytes, live, 'its rings stay allocated');
    t.ok(nic.info.quarantinedBytes >= RING_BYTES, 'held until close');
    t.notSame(holdings(nic).roce, start.roce, 'the firmware still holds part of it');
    const other = unwrap(Qp.make(nic));
    unwrap(other.destroy());
    t.equal(nic.info.dmaBytes, live, 'other queue pairs come and go beside it');
    const dma = emu(nic).dma;
    nic.close();
    t.equal(dma.allocatedBytes, 0, 'close frees them');
    t.equal(dma.allocatedBuffers, 0);
  }
});

t.test('it is Error msg for every call after one that an exception ended; the rings stay allocated until ' +
  'close', async (t) => {
  for (let n = 1; n <= DESTROY_COMMANDS.length; n++) {
    const nic = openNic();
    const qp = unwrap(Qp.make(nic));
    const live = nic.info.dmaBytes;
    const broken = watchCommands(nic, (k) => { if (k === n) throw new Error('injected failure'); });
    t.throws(() => qp.destroy(), /injected failure/, `an exception at ${DESTROY_COMMANDS[n - 1]} ends destroy`);
    broken.restore();
    const asked = requests(nic);
    const again = qp.destroy();
    t.notOk(again.ok, 'the next destroy is an Error');
    if (!again.ok) t.match(again.error, /did not finish/);
    t.notOk(qp.destroy().ok, 'and the one after');
    t.same(requests(nic), asked, 'sending no request');
    t.throws(() => qp.connect(qp.endpoint), InvalidArgument, 'it counts as destroyed');
    t.equal(nic.info.dmaBytes, live, 'its rings stay allocated');
    t.ok(nic.info.quarantinedBytes >= RING_BYTES, 'until close');
    const dma = emu(nic).dma;
    nic.close();
    t.equal(dma.allocatedBytes, 0, 'close frees them');
  }
});

t.test('a firmware silent during destroy: Error, the rings stay allocated and are never reused until ' +
  'close', async (t) => {
  for (let n = 1; n <= DESTROY_COMMANDS.length; n++) {
    const nic = openNic();
    const qp = unwrap(Qp.make(nic));
    const live = nic.info.dmaBytes;
    const watch = watchCommands(nic, (k) => { if (k === n) controls(nic).roce.silence(); });
    const r = qp.destroy();
    watch.restore();
    t.notOk(r.ok, `silent at ${DESTROY_COMMANDS[n - 1]}: destroy is an Error`);
    if (!r.ok) t.match(r.error, /did not answer/);
    t.equal(watch.log.length, n, 'nothing is sent after the unanswered command');
    t.notOk(qp.destroy().ok, 'every later destroy is an Error');
    t.ok(nic.info.dmaBytes >= live, 'the rings stay allocated');
    t.ok(nic.info.quarantinedBytes >= RING_BYTES, `${nic.info.quarantinedBytes} bytes quarantined`);
    const dma = emu(nic).dma;
    nic.close();
    t.equal(dma.allocatedBytes, 0, 'close releases them');
  }
});

t.test('close destroys the queue pairs left on the NIC', async (t) => {
  const nic = openNic();
  const qps = [unwrap(Qp.make(nic)), unwrap(Qp.make(nic))];
  unwrap(qps[0]!.connect(qps[1]!.endpoint));
  const dma = emu(nic).dma;
  const watch = watchCommands(nic);
  nic.close();
  watch.restore();
  t.same(watch.log.filter((c) => c.opcode === OP.DESTROY_QP).map((c) => c.body['qp_cid']).sort(),
    qps.map((q) => q.number).sort(), 'DESTROY_QP for each');
  t.equal(dma.allocatedBytes, 0, 'and every byte is given back');
  t.notOk(qps[0]!.destroy().ok, 'destroy after close is an Error');
});

t.test('after destroy, poll and wait read nothing of the freed rings: poll is None, wait raises "no entry due", room ' +
  'is 0', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  unwrap(a.connect(b.endpoint));
  unwrap(b.connect(a.endpoint));
  const r = unwrap(Region.alloc(nic, 1 << 16));
  // a has a send and a receive due: b posted no receive (the send is RNR-retried), nobody sends to a.
  a.send(r, 0, 100);
  a.receive(r, 4096, 100);
  unwrap(a.destroy());
  // A new pair is made where a's rings were (same sizes: the memory and IOVAs are handed out
  // again), and its send completes: a CQE lands in what was a's send CQ.
  const c = unwrap(Qp.make(nic));
  const d = unwrap(Qp.make(nic));
  unwrap(c.connect(d.endpoint));
  unwrap(d.connect(c.endpoint));
  d.receive(r, 8192, 100);
  c.send(r, 0, 100);
  t.same(d.wait('receive', 1e6), { ok: true, value: 100 }, 'the new pair\'s receive completes');
  const asked = requests(nic);
  for (const side of ['send', 'receive'] as const) {
    t.equal(a.poll(side), undefined, `a.poll('${side}') is None: no entry of a destroyed queue pair is due`);
    t.equal(a.pollBytes(side), -1, `a.pollBytes('${side}') is -1 too`);
    t.throws(() => a.wait(side, 1000), InvalidArgument, `a.wait('${side}') raises: no entry is due`);
    t.equal(a.room(side), 0, `a.room('${side}') is 0: a destroyed queue pair takes no entry`);
  }
  t.same(requests(nic), asked, 'none of it asks the firmware anything');
  t.same(c.wait('send', 1e6), { ok: true, value: 100 },
    'the new queue pair still takes its own completion: a consumed nothing of it');
  unwrap(b.destroy());
  unwrap(c.destroy());
  unwrap(d.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('after a destroy the firmware refused, poll is None too (the queue pair counts as destroyed)', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  unwrap(a.connect(a.endpoint));
  const r = unwrap(Region.alloc(nic, 4096));
  a.receive(r, 0, 64);
  a.send(r, 64, 64);
  a.send(r, 128, 64);
  controls(nic).roce.refuseNth(1, STATUS.FAIL);
  t.notOk(a.destroy().ok, 'DESTROY_QP refused');
  t.equal(a.poll('send'), undefined, 'send: None, whatever the rings the firmware kept now hold');
  t.equal(a.poll('receive'), undefined, 'receive: None');
  t.throws(() => a.wait('send', 10), InvalidArgument, 'wait raises');
  unwrap(r.deregister());
  nic.close();
});
