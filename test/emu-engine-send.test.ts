/**
 * The RoCE engine's data path on a loop cable, stepped on a virtual clock: SENDs of every
 * size class around the path MTU, READs, and the completions both sides see.
 */
import t, { type Test } from 'tap';
import { ACCESS_MR, FLAG, REQ, RES, TestNic, WQE, pattern } from './helpers/emu-engine-harness.ts';

const MTU = 1024;

/**
 * A NIC with a connected pair (path MTU MTU) closed at the test's end, a three-page source filled
 * with pattern(seed) and registered for local access, and a three-page destination registered
 * for local write.
 */
function threePagePair(t: Test, seed: number) {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(3 * 4096);
  src.bytes.set(pattern(src.bytes.length, seed));
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(3 * 4096);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  return { nic, a, b, src, smr, dst, dmr };
}

t.test('a SEND of 1, MTU-1, MTU, MTU+1 and 3xMTU+5 bytes lands intact, with a requester and a responder ' +
  'CQE', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const sizes = [1, MTU - 1, MTU, MTU + 1, 3 * MTU + 5];
  for (const [i, size] of sizes.entries()) {
    const src = nic.alloc(size);
    src.bytes.set(pattern(size, i));
    const dst = nic.alloc(size + 100);
    const smr = nic.mr(src, 0);
    const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
    const framesBefore = nic.counters()['packetsSent']!;
    b.recv([{ va: dst.iova, lkey: dmr.key, size: size + 100 }]);
    const wqe = a.post({ sges: [{ va: src.iova, lkey: smr.key, size }] });
    t.ok(nic.runUntil(() => b.rcq.cq.producer > i && a.scq.cq.producer > i), `size ${size}: both completions`);
    const req = a.scq.pollAll();
    const res = b.rcq.pollAll();
    t.equal(req.length, 1, `size ${size}: one requester CQE`);
    t.equal(res.length, 1, `size ${size}: one responder CQE`);
    t.match(req[0], { type: 0, status: REQ.OK, sqConsIdx: wqe + 1 },
      `size ${size}: sq_cons_idx names the WQE after it`);
    t.match(res[0], { type: 1, status: RES.OK, length: size, wrId: i },
      `size ${size}: length and wr_id of the receive`);
    t.same(dst.bytes.subarray(0, size), pattern(size, i), `size ${size}: the bytes`);
    t.ok(dst.bytes.subarray(size).every((x) => x === 0), `size ${size}: nothing past the message`);
    t.equal(nic.counters()['packetsSent']! - framesBefore, Math.ceil(size / MTU),
      `size ${size}: ${Math.ceil(size / MTU)} packets`);
  }
  const c = nic.counters();
  t.equal(c['packetsRetransmitted'], 0);
  t.equal(c['internalErrors'], 0);
  t.equal(c['framesDropped'], 0);
});

t.test('packets that end exactly where an SGE ends: each packet is gathered from and scattered into the next ' +
  'SGE, in order', async (t) => {
  const { nic, a, b, src, smr, dst, dmr } = threePagePair(t, 5);
  // Three SGEs of one MTU each, one per page: every packet is one SGE, on both sides.
  const from = [100, 4096 + 200, 8192 + 300];
  const to = [50, 4096 + 60, 8192 + 70];
  b.recv(to.map((o) => ({ va: dst.iova + o, lkey: dmr.key, size: MTU })));
  a.post({ sges: from.map((o) => ({ va: src.iova + o, lkey: smr.key, size: MTU })) });
  // Then two SGEs of half an MTU each into one packet, scattered into two halves again.
  const half = MTU / 2;
  b.recv([{ va: dst.iova + 2000, lkey: dmr.key, size: half }, { va: dst.iova + 3000, lkey: dmr.key, size: half }]);
  a.post({ sges: [6000, 5000].map((o) => ({ va: src.iova + o, lkey: smr.key, size: half })) });
  t.ok(nic.runUntil(() => b.rcq.cq.producer === 2 && a.scq.cq.producer === 2));
  t.same(b.rcq.pollAll().map((c) => [c.status, c.length]), [[RES.OK, 3 * MTU], [RES.OK, MTU]]);
  for (let k = 0; k < 3; k++) {
    const got = dst.bytes.subarray(to[k]!, to[k]! + MTU);
    t.same(got, src.bytes.subarray(from[k]!, from[k]! + MTU), `packet ${k}: SGE ${k}`);
  }
  t.same(dst.bytes.subarray(2000, 2000 + MTU / 2), src.bytes.subarray(6000, 6000 + MTU / 2), 'first half');
  t.same(dst.bytes.subarray(3000, 3000 + MTU / 2), src.bytes.subarray(5000, 5000 + MTU / 2), 'second half');
});

t.test('SEND with gather and scatter lists spanning pages, inline SEND and zero-length SEND', async (t) => {
  const { nic, a, b, src, smr, dst, dmr } = threePagePair(t, 9);
  // Gather 3000 bytes from two places (one crossing a page), scatter into three.
  b.recv([
    { va: dst.iova + 10, lkey: dmr.key, size: 1000 },
    { va: dst.iova + 4000, lkey: dmr.key, size: 1500 },
    { va: dst.iova + 9000, lkey: dmr.key, size: 1000 },
  ]);
  a.post({
    sges: [{ va: src.iova + 3500, lkey: smr.key, size: 2000 }, { va: src.iova + 100, lkey: smr.key, size: 1000 }],
  });
  const inline = pattern(77, 3);
  const dst2 = nic.alloc(100);
  const dmr2 = nic.mr(dst2, ACCESS_MR.LOCAL_WRITE);
  b.recv([{ va: dst2.iova, lkey: dmr2.key, size: 100 }]);
  a.post({ inline });
  b.recv([]);
  a.post({ sges: [] });
  t.ok(nic.runUntil(() => b.rcq.cq.producer === 3 && a.scq.cq.producer === 3));
  const res = b.rcq.pollAll();
  t.same(res.map((c) => [c.status, c.length, c.wrId]), [[0, 3000, 0], [0, 77, 1], [0, 0, 2]]);
  const message = new Uint8Array(3000);
  message.set(src.bytes.subarray(3500, 5500), 0);
  message.set(src.bytes.subarray(100, 1100), 2000);
  const got = new Uint8Array(3000);
  got.set(dst.bytes.subarray(10, 1010), 0);
  got.set(dst.bytes.subarray(4000, 5500), 1000);
  got.set(dst.bytes.subarray(9000, 9500), 2500);
  t.same(got, message, 'gathered in SGE order, scattered in SGE order');
  t.equal(dst.bytes[9500], 0, 'the last receive SGE got only what was left');
  t.same(dst2.bytes.subarray(0, 77), inline, 'inline bytes came from the WQE');
  t.same(a.scq.pollAll().map((c) => c.status), [0, 0, 0]);
});

t.test('SEND with immediate and solicited event: the responder CQE carries them', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(10);
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(10);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  b.recv([{ va: dst.iova, lkey: dmr.key, size: 10 }]);
  a.post({
    type: WQE.SEND_W_IMM, flags: FLAG.SIGNAL | FLAG.SE, imm: 0x11223344,
    sges: [{ va: src.iova, lkey: smr.key, size: 10 }],
  });
  t.ok(nic.runUntil(() => b.rcq.cq.producer === 1));
  const [res] = b.rcq.pollAll();
  t.match(res, { status: 0, length: 10, imm: 0x11223344 });
  t.equal(res!.flags & 0x2, 0x2, 'the IMM flag (cq_res_rc flags bit 1)');
});

t.test('unsignalled WQEs complete silently; a signalled one after them names the WQE after it', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(64);
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(64 * 4);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  for (let i = 0; i < 3; i++) b.recv([{ va: dst.iova + 64 * i, lkey: dmr.key, size: 64 }]);
  a.post({ flags: 0, sges: [{ va: src.iova, lkey: smr.key, size: 64 }] }, false);
  a.post({ flags: 0, sges: [{ va: src.iova, lkey: smr.key, size: 64 }] }, false);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 64 }] }, false);
  a.ringSq();
  t.ok(nic.runUntil(() => b.rcq.cq.producer === 3 && a.scq.cq.producer >= 1));
  nic.runFor(1e6);
  t.same(a.scq.pollAll().map((c) => [c.status, c.sqConsIdx]), [[0, 3]], 'one CQE, sq_cons_idx 3');
  t.equal(b.rcq.pollAll().length, 3, 'every receive completes');
});

t.test('READ of 1, MTU and 3xMTU+5 bytes: READ responses land in the local SGEs', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  for (const [i, size] of [1, MTU, 3 * MTU + 5, 0].entries()) {
    const remote = nic.alloc(Math.max(size, 1) + 50);
    remote.bytes.set(pattern(remote.bytes.length, 20 + i));
    const rmr = nic.mr(remote, ACCESS_MR.REMOTE_READ);
    const local = nic.alloc(Math.max(size, 1) + 50);
    const lmr = nic.mr(local, ACCESS_MR.LOCAL_WRITE);
    const before = nic.counters();
    a.post({
      type: WQE.READ, sges: size ? [{ va: local.iova + 7, lkey: lmr.key, size }] : [], remoteVa: remote.iova + 30,
      rkey: rmr.key,
    });
    t.ok(nic.runUntil(() => a.scq.cq.producer === i + 1), `size ${size}: completes`);
    const [req] = a.scq.pollAll();
    t.match(req, { status: REQ.OK }, `size ${size}: status OK`);
    t.same(local.bytes.subarray(7, 7 + size), remote.bytes.subarray(30, 30 + size), `size ${size}: the bytes`);
    t.equal(local.bytes[7 + size], 0, `size ${size}: nothing past them`);
    const after = nic.counters();
    t.equal(after['readResponsesSent']! - before['readResponsesSent']!, Math.max(1, Math.ceil(size / MTU)),
      `size ${size}: one response per MTU`);
    t.equal(after['packetsSent']! - before['packetsSent']!, 1, `size ${size}: one READ request`);
  }
  t.equal(b.rcq.pollAll().length, 0, 'a READ consumes no receive at the responder');
});

t.test('RDMA WRITE lands in the remote region; with immediate it also completes a receive', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(2500);
  src.bytes.set(pattern(2500, 5));
  const smr = nic.mr(src, 0);
  const remote = nic.alloc(3000);
  const rmr = nic.mr(remote, ACCESS_MR.REMOTE_WRITE | ACCESS_MR.LOCAL_WRITE);
  a.post({
    type: WQE.WRITE, sges: [{ va: src.iova, lkey: smr.key, size: 2500 }], remoteVa: remote.iova + 100, rkey: rmr.key,
  });
  b.recv([]);
  a.post(
    { type: 0x05, imm: 7, sges: [{ va: src.iova, lkey: smr.key, size: 16 }], remoteVa: remote.iova, rkey: rmr.key },
  );
  t.ok(nic.runUntil(() => a.scq.cq.producer === 2 && b.rcq.cq.producer === 1));
  t.same(a.scq.pollAll().map((c) => c.status), [0, 0]);
  t.same(remote.bytes.subarray(100, 2600), src.bytes.subarray(0, 2500));
  t.same(remote.bytes.subarray(0, 16), src.bytes.subarray(0, 16));
  const [res] = b.rcq.pollAll();
  t.match(res, { status: 0, length: 16, imm: 7 });
  t.equal(res!.flags & 0xa, 0xa, 'IMM and RDMA flags');
});

t.test('CQE toggle: 1 on the first lap of the ring, 0 on the second, 1 on the third', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const scq = nic.cq(4);
  const a = nic.qp({ scq });
  const b = nic.qp();
  nic.connect(a, b.qpn, { sqPsn: 1, rqPsn: 1 });
  nic.connect(b, a.qpn, { sqPsn: 1, rqPsn: 1 });
  const src = nic.alloc(8);
  const smr = nic.mr(src, 0);
  const toggles: number[] = [];
  for (let i = 0; i < 10; i++) {
    b.recv([]);
    a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 0 }] });
    t.ok(nic.runUntil(() => scq.cq.producer === i + 1));
    const slot = i % 4;
    toggles.push(scq.ring.bytes[slot * 32 + 24]! & 1);
    t.ok(scq.poll(), `CQE ${i} is seen with the expected toggle`);
  }
  t.same(toggles, [1, 1, 1, 1, 0, 0, 0, 0, 1, 1]);
});

t.test('an armed CQ gets one NQ notification on its next CQE; CQ_ARMSE waits for a solicited one', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(8);
  const smr = nic.mr(src, 0);
  a.scq.arm();
  b.rcq.arm(0x5);
  for (let i = 0; i < 3; i++) b.recv([]);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 0 }] });
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 0 }] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 2 && b.rcq.cq.producer === 2));
  t.same(nic.tables.notifications, [a.scq.cq.id],
    'one notification for the requester CQ; none for two unsolicited receives');
  a.post({ flags: FLAG.SIGNAL | FLAG.SE, sges: [{ va: src.iova, lkey: smr.key, size: 0 }] });
  t.ok(nic.runUntil(() => b.rcq.cq.producer === 3));
  t.same(nic.tables.notifications, [a.scq.cq.id, b.rcq.cq.id], 'the solicited receive notifies');
});
