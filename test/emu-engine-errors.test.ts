/**
 * The RoCE engine when things go wrong: receivers not ready, peers gone, messages too long,
 * lost and repeated frames, bad keys, full CQs, destroyed QPs, frames that are not ours.
 * Every run is on the virtual clock, so times are exact.
 */
import t from 'tap';
import {
  ACCESS_MR, ACCESS_QP, DOORBELL, REQ, RES, TestNic, WQE, doorbellHalves, pattern,
} from './helpers/emu-engine-harness.ts';
import { RoceFrame, encodeFrame, Opcode } from '../drivers/emu/model/wire/index.ts';

const MTU = 1024;
/** 4.096 us x 2^14. */
const ACK_TIMEOUT_NS = 4096 * 2 ** 14;

function sendBuffers(nic: TestNic, size: number, seed = 1) {
  const src = nic.alloc(size);
  src.bytes.set(pattern(size, seed));
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(size);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  return { src, dst, send: { va: src.iova, lkey: smr.key, size }, recv: { va: dst.iova, lkey: dmr.key, size } };
}

t.test('a receiver not ready answers RNR NAK; with rnr_retry 7 the sender retries until a receive is ' +
  'posted', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, minRnrTimer: 14 }); // 1.28 ms
  const { src, dst, send, recv } = sendBuffers(nic, 3000);
  a.post({ sges: [send] });
  nic.runFor(5e9);
  const c = nic.counters();
  t.ok(c['rnrNaksSent']! > 1000, `retried for 5 s of virtual time (${c['rnrNaksSent']} RNR NAKs)`);
  t.equal(c['rnrNaksReceived'], c['rnrNaksSent']);
  t.equal(a.scq.pollAll().length, 0, 'no completion while the receiver is not ready');
  t.equal(nic.tables.qpErrors.length, 0, 'nothing failed');
  t.equal(c['ackTimeouts'], 0, 'the ACK timer does not run while waiting out an RNR NAK');
  b.recv([recv]);
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1 && b.rcq.cq.producer === 1, 10e6), 'completes within one RNR delay');
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK]);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.length]), [[RES.OK, 3000]]);
  t.same(dst.bytes, src.bytes);
});

t.test('RNR retries run out when rnr_retry is below 7', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU, rnrRetry: 2, minRnrTimer: 1 });
  const { send } = sendBuffers(nic, 10);
  a.post({ sges: [send] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1, 1e9));
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.RNR_RETRY_EXCEEDED]);
  t.equal(nic.counters()['rnrNaksReceived'], 3, 'the first NAK and two retries');
  t.same(nic.tables.qpErrors[0], { qpn: a.qpn, req: 0x03, res: 0 }, 'QP error: REQ_RNR_TIMEOUT_RETRY_LIMIT');
});

t.test('a peer that never answers: 1 + 7 transmissions 67 ms apart, then retry exceeded and the rest flushed in ' +
  'order', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const a = nic.qp();
  const b = nic.qp();
  // Frames go to a MAC nobody has: the loop brings them back and the port drops them.
  nic.connect(a, b.qpn, { mtu: MTU, destMac: Uint8Array.from([2, 0, 0, 0, 0, 0x99]) });
  nic.connect(b, a.qpn, { mtu: MTU });
  const { send, recv } = sendBuffers(nic, 100);
  for (let i = 0; i < 3; i++) a.post({ sges: [send] });
  a.recv([recv]);
  const start = nic.nowNs;
  t.ok(nic.runUntil(() => a.scq.cq.producer >= 1, 2e9));
  const failedAt = nic.nowNs - start;
  t.ok(failedAt >= 8 * ACK_TIMEOUT_NS && failedAt < 8 * ACK_TIMEOUT_NS + 1e6,
    `fails after 8 timeouts (${(failedAt / 1e6).toFixed(1)} ms)`);
  nic.runFor(1e6);
  const c = nic.counters();
  t.equal(c['ackTimeouts'], 8);
  t.equal(c['retransmitEvents'], 7);
  // The window lets all three go at first; each retry after a timeout resends the oldest one
  // alone (the rest follow once it is acknowledged: completer.ts errorRetry).
  t.equal(c['packetsSent'], 3 + 7);
  t.equal(c['dropWRONG_DEST_MAC'], 3 + 7, 'every frame dropped for its MAC, and counted');
  t.same(a.scq.pollAll().map((x) => [x.status, x.sqConsIdx]), [
    [REQ.RETRY_EXCEEDED, 1], [REQ.FLUSHED, 2], [REQ.FLUSHED, 3],
  ]);
  t.same(a.rcq.pollAll().map((x) => [x.status, x.wrId]), [[RES.FLUSHED, 0]], 'the receive ring is flushed too');
  t.same(nic.tables.qpErrors, [{ qpn: a.qpn, req: 0x02, res: 0 }], 'QP error: REQ_TIMEOUT_RETRY_LIMIT');
  t.equal(a.qp.state, 6, 'the QP is in ERR');
  // Work posted after the failure completes flushed, with no frame sent.
  a.post({ sges: [send] });
  nic.runFor(1e6);
  t.same(a.scq.pollAll().map((x) => [x.status, x.sqConsIdx]), [[REQ.FLUSHED, 4]]);
  t.equal(nic.counters()['packetsSent'], 3 + 7);
});

t.test('a SEND longer than the receive fails the receiver and the sender', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const { send, recv } = sendBuffers(nic, 2500);
  b.recv([{ ...recv, size: 2000 }]);
  b.recv([recv]);
  a.post({ sges: [send] });
  a.post({ sges: [send] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 2 && b.rcq.cq.producer === 2, 1e9));
  t.same(b.rcq.pollAll().map((x) => x.status), [RES.LOCAL_LENGTH, RES.FLUSHED],
    'receiver: local length error, then flushed');
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.REMOTE_INVALID_REQUEST, REQ.FLUSHED],
    'sender: remote invalid request, then flushed');
  t.same(nic.tables.qpErrors.map((e) => [e.qpn, e.req, e.res]).sort(), [[a.qpn, 0x04, 0], [b.qpn, 0, 0x03]].sort(),
    'REQ_NAK_ARRIVAL_1 / RES_EXCEEDS_WQE');
  t.equal(a.qp.state, 6);
  t.equal(b.qp.state, 6);
});

t.test('a lost middle packet: one sequence NAK, go-back-N from it, the message intact, no timeout', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const size = 3 * MTU + 5;
  const { src, dst, send, recv } = sendBuffers(nic, size);
  b.recv([recv]);
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_MIDDLE, -1, 1);
  a.post({ sges: [send] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1 && b.rcq.cq.producer === 1, 1e9));
  const c = nic.counters();
  t.equal(c['faultTxDropped'], 1);
  t.equal(c['seqNaksSent'], 1, 'one NAK for the gap');
  t.equal(c['seqNaksReceived'], 1);
  t.equal(c['dropOutOfSequence'], 1, 'the packet after the NAK is dropped silently');
  t.equal(c['packetsRetransmitted'], 3, 'the lost MIDDLE and what followed it');
  t.equal(c['ackTimeouts'], 0);
  t.equal(nic.nowNs, 0, 'recovered without waiting for a timer');
  t.same(dst.bytes, src.bytes);
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK]);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.length]), [[RES.OK, size]]);
});

t.test('a lost ACK: the timer resends, the duplicate is ACKed again and not delivered twice', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const { send, recv } = sendBuffers(nic, 100);
  b.recv([recv]);
  b.recv([recv]);
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_ACKNOWLEDGE, -1, 1);
  a.post({ sges: [send] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1, 1e9));
  const c = nic.counters();
  t.equal(c['ackTimeouts'], 1);
  t.equal(c['duplicateRequests'], 1);
  t.equal(b.rcq.pollAll().length, 1, 'one receive completed; the second is still posted');
  t.equal(c['messagesReceived'], 1, 'the repeated SEND was not delivered again');
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK]);
});

t.test('every frame duplicated: each message is delivered once and completes once', async (t) => {
  const nic = new TestNic({ seed: 7 });
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  nic.model.controls.engine.setFaults('tx', { duplicate: 1 });
  const sizes = [10, 2000, 5000];
  const bufs = sizes.map((s, i) => sendBuffers(nic, s, i + 3));
  for (const x of bufs) b.recv([x.recv]);
  for (const x of bufs) a.post({ sges: [x.send] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 3 && b.rcq.cq.producer === 3, 1e9));
  nic.runFor(1e9);
  const c = nic.counters();
  t.ok(c['duplicateRequests']! >= 1, `duplicates seen (${c['duplicateRequests']})`);
  t.ok(c['dropStaleResponse']! >= 1, `duplicate ACKs ignored (${c['dropStaleResponse']})`);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.length]), sizes.map((s) => [0, s]), 'one CQE per message');
  t.same(a.scq.pollAll().map((x) => x.status), [0, 0, 0]);
  for (const x of bufs) t.same(x.dst.bytes, x.src.bytes);
  t.equal(nic.tables.qpErrors.length, 0);
});

t.test('seeded random loss, reordering and duplication: every message arrives once, in order, intact', async (t) => {
  const seed = 12345;
  const nic = new TestNic({ seed });
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, timeout: 8 });
  nic.model.controls.engine.setFaults('both', { drop: 0.05, duplicate: 0.05, reorder: 0.05 });
  const count = 40;
  const bufs = Array.from({ length: count }, (_, i) => sendBuffers(nic, 100 + ((i * 997) % 4000), i));
  for (const x of bufs) b.recv([x.recv]);
  for (const x of bufs) a.post({ sges: [x.send] });
  const done = nic.runUntil(() => a.scq.cq.producer === count && b.rcq.cq.producer === count, 60e9);
  t.ok(done, `all completed (seed ${seed})`);
  t.same(a.scq.pollAll().map((x) => x.status), new Array(count).fill(0), `requester CQEs in order (seed ${seed})`);
  t.same(b.rcq.pollAll().map((x) => x.wrId), Array.from({ length: count }, (_, i) => i),
    `receives in order (seed ${seed})`);
  bufs.forEach((x, i) => t.same(x.dst.bytes, x.src.bytes, `message ${i} (seed ${seed})`));
  t.equal(nic.tables.qpErrors.length, 0);
  t.equal(nic.counters()['internalErrors'], 0);
});

t.test('READ: a region without REMOTE_READ, or a QP without it, fails both sides with a remote access ' +
  'error', async (t) => {
  for (const [what, qpAccess, mrAccess] of [
    ['the region', ACCESS_QP.LOCAL_WRITE | ACCESS_QP.REMOTE_READ, ACCESS_MR.REMOTE_WRITE],
    ['the QP', ACCESS_QP.LOCAL_WRITE, ACCESS_MR.REMOTE_READ],
  ] as const) {
    const nic = new TestNic();
    const [a, b] = nic.pair({ mtu: MTU, access: qpAccess });
    const remote = nic.alloc(100);
    const rmr = nic.mr(remote, mrAccess);
    const local = nic.alloc(100);
    const lmr = nic.mr(local, ACCESS_MR.LOCAL_WRITE);
    a.post({
      type: WQE.READ, sges: [{ va: local.iova, lkey: lmr.key, size: 100 }], remoteVa: remote.iova, rkey: rmr.key,
    });
    t.ok(nic.runUntil(() => a.scq.cq.producer === 1, 1e9));
    t.same(a.scq.pollAll().map((x) => x.status), [REQ.REMOTE_ACCESS], `${what}: remote access error`);
    t.equal(b.qp.state, 6, `${what}: the responder fails too`);
    t.equal(nic.tables.qpErrors.find((e) => e.qpn === b.qpn)?.res, 0x0c, `${what}: RES_TX_NO_PERMISSION`);
    nic.close();
  }
});

t.test('a bad lkey or an SGE outside its region fails the WQE with a local protection error, in order', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const { send, recv } = sendBuffers(nic, 100);
  b.recv([recv]);
  a.post({ sges: [send] });
  a.post({ sges: [{ ...send, lkey: 0x7777 }] });
  a.post({ sges: [send] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 3, 1e9));
  t.same(a.scq.pollAll().map((x) => [x.status, x.sqConsIdx]),
    [[REQ.OK, 1], [REQ.LOCAL_PROTECTION, 2], [REQ.FLUSHED, 3]]);
  t.equal(nic.counters()['packetsSent'], 1, 'the bad WQE and what follows it never reached the wire');

  const nic2 = new TestNic();
  t.teardown(() => nic2.close());
  const [c] = nic2.pair({ mtu: MTU });
  const x = sendBuffers(nic2, 100);
  c.post({ sges: [{ ...x.send, size: x.src.bytes.length + 1 }] });
  t.ok(nic2.runUntil(() => c.scq.cq.producer === 1, 1e9));
  t.same(c.scq.pollAll().map((y) => y.status), [REQ.LOCAL_PROTECTION], 'out of bounds');
});

t.test('a full CQ is never overwritten: the QP fails instead', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const scq = nic.cq(2);
  const a = nic.qp({ scq });
  const b = nic.qp();
  nic.connect(a, b.qpn, { sqPsn: 5, rqPsn: 5 });
  nic.connect(b, a.qpn, { sqPsn: 5, rqPsn: 5 });
  const { send } = sendBuffers(nic, 10);
  for (let i = 0; i < 3; i++) b.recv([]);
  for (let i = 0; i < 3; i++) a.post({ sges: [{ ...send, size: 0 }] });
  t.ok(nic.runUntil(() => nic.tables.qpErrors.length > 0, 1e9));
  t.equal(nic.counters()['cqOverflows'], 1);
  t.same(nic.tables.qpErrors[0], { qpn: a.qpn, req: 0x0f, res: 0 }, 'REQ_CMP_ERROR');
  t.equal(scq.cq.producer, 2, 'two CQEs written, none over an unconsumed one');
  // Once the driver consumes, the rest completes flushed.
  t.same(scq.pollAll().map((x) => x.status), [0, 0]);
  nic.runFor(1e6);
  t.same(scq.pollAll().map((x) => x.status), [REQ.FLUSHED]);
});

t.test('after qpDestroyed the engine writes nothing for the QP and sends nothing for it', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const big = sendBuffers(nic, 200 * MTU);
  for (let i = 0; i < 4; i++) b.recv([big.recv]);
  for (let i = 0; i < 4; i++) a.post({ sges: [big.send] });
  // Every frame takes 10 us to arrive, so destroy finds the transfer half done.
  nic.model.controls.engine.setFaults('tx', { delayNs: 10_000 });
  nic.runFor(200_000);
  t.ok(b.rcq.cq.producer > 0 && b.rcq.cq.producer < 4, `traffic under way (${b.rcq.cq.producer} receives done)`);
  const owned = [b.sq, b.rq, b.scq.ring, b.rcq.ring, big.dst].map((x) => [x.iova, x.iova + x.bytes.length]);
  let writesToB = 0;
  nic.model.iommu.onWrite = (iova, length) => {
    for (const [lo, hi] of owned) if (iova < hi! && iova + length > lo!) writesToB++;
  };
  b.destroy();
  nic.runFor(2e9);
  t.equal(writesToB, 0, 'no DMA write into the destroyed QP\'s rings, CQs or buffers');
  t.equal(nic.model.controls.engine.dmaWritesAfterDestroy(), 0);
  t.ok(nic.counters()['dropUnknownQp']! > 0, 'frames for it are dropped as for no QP');
  // The peer's entries fail once its retries end.
  t.equal(a.scq.pollAll().find((x) => x.status !== REQ.OK)?.status, REQ.RETRY_EXCEEDED);
  nic.model.iommu.onWrite = undefined;

  // Destroying the sender stops its frames at once.
  const [c, d] = nic.pair({ mtu: MTU });
  for (let i = 0; i < 4; i++) d.recv([big.recv]);
  for (let i = 0; i < 4; i++) c.post({ sges: [big.send] });
  nic.runFor(200_000);
  const sentBefore = nic.counters()['packetsSent']!;
  c.destroy();
  nic.runFor(2e9);
  t.ok(sentBefore > 0);
  t.equal(nic.counters()['packetsSent'], sentBefore, 'no frame after destroy');
  t.equal(nic.model.controls.engine.dmaWritesAfterDestroy(), 0);
});

t.test('frames for another MAC, with a bad ICRC, or for no QP are dropped and counted by reason', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const { dst, recv } = sendBuffers(nic, 64);
  b.recv([recv]);
  const f = new RoceFrame();
  f.dstMac.set(nic.config.mac);
  f.srcMac.set([2, 0, 0, 0, 0, 7]);
  f.srcIp = 0x0a4d0001; // b's peer is a, on this NIC: its frames come from this NIC's address
  f.dstIp = 0x0a4d0001;
  f.opcode = Opcode.RC_SEND_ONLY;
  f.destQp = b.qpn;
  f.psn = 0x1000;
  f.ackReq = 1;
  f.payloadLength = 64;
  const frame = new Uint8Array(200);
  frame.fill(0xee, 54, 54 + 64);
  const length = encodeFrame(frame, f);
  const inject = (bytes: Uint8Array) => nic.model.controls.engine.injectFrame(bytes);

  const otherMac = frame.slice(0, length);
  otherMac[5] ^= 1;
  inject(otherMac);
  const badIcrc = frame.slice(0, length);
  badIcrc[length - 1] ^= 0x80;
  inject(badIcrc);
  const noQp = frame.slice(0, length);
  noQp[54 - 12 + 5 + 2] = 0x77; // BTH dest QP low byte (BTH starts at byte 42)
  const fixed = new RoceFrame();
  fixed.copyFrom(f);
  fixed.destQp = 0x77;
  const noQpFrame = new Uint8Array(200);
  noQpFrame.fill(0xee, 54, 54 + 64);
  inject(noQpFrame.slice(0, encodeFrame(noQpFrame, fixed)));
  inject(frame.slice(0, 10));
  nic.runFor(1e6);
  const c = nic.counters();
  t.equal(c['dropWRONG_DEST_MAC'], 1);
  t.equal(c['dropBAD_ICRC'], 1);
  t.equal(c['dropUnknownQp'], 1);
  t.equal(c['dropTRUNCATED'], 1);
  t.equal(b.rcq.pollAll().length, 0, 'none of them was delivered');
  t.ok(dst.bytes.every((x) => x === 0));
  // The good frame is taken (the peer's PSN matches, so it is a real delivery).
  inject(frame.slice(0, length));
  nic.runFor(1e6);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.length]), [[0, 64]]);
  t.ok(dst.bytes.subarray(0, 64).every((x) => x === 0xee));
  void a;
});

t.test('malformed doorbells are refused and counted: unknown QP or CQ, index outside the ring, more WQEs than the ' +
  'ring holds', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU, sqEntries: 8 });
  const ring = (type: number, xid: number, index: number, epoch = 0) => {
    const [lo, hi] = doorbellHalves(type, xid, index, epoch);
    nic.model.engine.doorbell(DOORBELL, lo, hi, true);
  };
  const before = nic.counters()['doorbellsRejected']!;
  ring(0, 999, 1); // no QP 999
  ring(0, a.qpn, 8); // index 8 of an 8-entry ring
  ring(4, 999, 0); // no CQ 999
  ring(4, a.scq.cq.id, 5); // consumer past the producer
  t.equal(nic.counters()['doorbellsRejected']! - before, 4);
  t.equal(nic.counters()['packetsSent'], 0, 'nothing was sent');
  // Two 32-bit halves (low first) make one doorbell.
  const [lo, hi] = doorbellHalves(0, 999, 0, 0);
  nic.model.engine.doorbell(DOORBELL, lo, 0, false);
  nic.model.engine.doorbell(DOORBELL + 4, hi, 0, false);
  t.equal(nic.counters()['doorbellsRejected']! - before, 5, 'decoded as one (for a QP that does not exist)');
});

t.test('injectUnknownCqe writes a CQE of a type no driver takes, with the right toggle', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const cq = nic.cq(4);
  t.equal(nic.model.controls.engine.injectUnknownCqe(cq.cq.id), true);
  const cqe = cq.poll();
  t.ok(cqe, 'visible (toggle 1 on the first lap)');
  t.equal(cqe!.type, 7);
});
