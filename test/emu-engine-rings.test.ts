/**
 * Ring positions across every wrap: producer doorbells (index + epoch = position modulo
 * twice the ring), sq_cons_idx in requester CQEs, CQ consumer doorbells.
 */
import t from 'tap';
import { producerCount } from '../drivers/emu/model/engine/doorbells.ts';
import { ACCESS_MR, DB, DOORBELL, REQ, TestNic, doorbellHalves } from './helpers/emu-engine-harness.ts';

t.test('producerCount recovers the driver\'s free-running producer from (index, epoch) at every wrap', async (t) => {
  for (const entries of [1, 2, 3, 4, 7, 8, 64]) {
    let p = 0;
    let seen = 0;
    let ok = true;
    // Steps of 0..entries WQEs (a full ring is legal when the consumer is behind by a whole ring).
    for (let step = 0; step < 6 * entries + 10; step++) {
      const n = (step * 5 + 3) % (entries + 1);
      p += n;
      const got = producerCount(seen, entries, p % entries, Math.floor(p / entries) % 2);
      if (got !== p) ok = false;
      seen = p;
    }
    t.ok(ok, `${entries}-entry ring`);
    t.equal(producerCount(0, entries, entries, 0), -1, `${entries}-entry ring: index ${entries} is outside it`);
  }
});

t.test('a 4-entry send ring and receive ring wrap many times: every WQE completes once, sq_cons_idx wraps with the ' +
  'ring', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: 1024, sqEntries: 4, rqEntries: 4, cqEntries: 8 });
  const src = nic.alloc(100);
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(100);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  const consIdx: number[] = [];
  const wrIds: number[] = [];
  for (let round = 0; round < 7; round++) {
    const batch = (round % 4) + 1; // 1, 2, 3, 4 WQEs under one doorbell (4 = the whole ring)
    for (let i = 0; i < batch; i++) b.recv([{ va: dst.iova, lkey: dmr.key, size: 100 }], (round * 10 + i) & 0xfffff);
    for (let i = 0; i < batch; i++) a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }] }, false);
    a.ringSq();
    t.ok(nic.runUntil(() => a.scq.cq.producer === a.sqProd), `round ${round}`);
    consIdx.push(...a.scq.pollAll().map((c) => (c.status === REQ.OK ? c.sqConsIdx : -1)));
    wrIds.push(...b.rcq.pollAll().map((c) => c.wrId));
  }
  const total = 1 + 2 + 3 + 4 + 1 + 2 + 3;
  t.same(consIdx, Array.from({ length: total }, (_, i) => (i + 1) % 4), 'sq_cons_idx = WQE index + 1, modulo 4');
  t.equal(wrIds.length, total, 'every receive completed once');
  t.equal(nic.counters()['doorbellsRejected'], 0);
});

t.test('a producer doorbell that would post more WQEs than the ring holds is refused', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: 1024, sqEntries: 4 });
  // Nothing completed yet: position 5 (index 1, epoch 1) would mean 5 WQEs in a 4-entry ring.
  const [lo, hi] = doorbellHalves(DB.SQ, a.qpn, 1, 1);
  nic.model.engine.doorbell(DOORBELL, lo, hi, true);
  t.equal(nic.counters()['doorbellsRejected'], 1);
  nic.runFor(1e6);
  t.equal(nic.counters()['packetsSent'], 0);
});

t.test('CQ consumer doorbells: the epoch names the lap; a consumer past the producer is refused', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const cq = nic.cq(2);
  for (let i = 0; i < 2; i++) t.equal(nic.model.controls.engine.injectUnknownCqe(cq.cq.id), true);
  t.equal(nic.model.controls.engine.injectUnknownCqe(cq.cq.id), false, 'full: the third is refused');
  t.ok(cq.poll());
  t.equal(nic.model.controls.engine.injectUnknownCqe(cq.cq.id), true, 'one consumed: one more fits');
  t.ok(cq.poll());
  t.ok(cq.poll(), 'the third, on the second lap (toggle 0)');
  const before = nic.counters()['doorbellsRejected']!;
  // The consumer is at 3 (index 1, epoch 1); index 0 epoch 0 would be a consumer that went back.
  const [lo, hi] = doorbellHalves(DB.CQ, cq.cq.id, 0, 0);
  nic.model.engine.doorbell(DOORBELL, lo, hi, true);
  t.equal(nic.counters()['doorbellsRejected']! - before, 1);
});
