// Issue 12 item 4 (the model): variable-size WQE mode, Thor2's default (Linux bnxt_re main.c
// bnxt_re_set_drv_mode). The SQ is a ring of 16-byte slots; a WQE takes wqe_size of them
// (2 header slots + one per SGE, qplib_fp.c bnxt_qplib_required_slots) and may wrap at the
// ring's end; the SQ doorbell names the slot after the last one posted (max_slot 1). A success
// CQE's sq_cons_idx counts WQEs (rdma-core providers/bnxt_re verbs.c bnxt_re_poll_success_scqe),
// a failed WQE's CQE names its first slot (qplib_fp.c __is_err_cqe_for_var_wqe,
// bnxt_qplib_get_cqe_sq_cons). The MSN table's start_slot_idx is that slot too. WQE, doorbell and
// CQE bytes are written and read by hand from roce_hsi.h / bnxt_hsi.h offsets (the harness).
import t from 'tap';
import { ACCESS_MR, DB, REQ, RES, TestNic, doorbellHalves, DOORBELL, pattern } from './helpers/emu-engine-harness.ts';
import { Opcode } from '../drivers/emu/model/wire/index.ts';

const MTU = 1024;
const SLOTS = 256; // the smallest variable-mode SQ (a multiple of 256 slots)
// creq_qp_error_notification req_err_state_reason (roce_hsi.h): REQ_WQE_FORMAT_ERROR, REQ_RETX_SETUP_ERROR.
const REQ_WQE_FORMAT_ERROR = 0x11;
const REQ_RETX_SETUP_ERROR = 0x1c;
const LOCAL_QP_OPERATION_ERR = 3; // cq_req status

t.test('WQEs of 3 and 5 slots wrap the ring slot by slot; every byte arrives, sq_cons_idx counts WQEs', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, sqSlots: SLOTS, rqEntries: 128, cqEntries: 512 });
  const n = 100; // 100 WQEs of 3 or 5 slots: 400 slots, past the end of the 256-slot ring
  const size = 600;
  const src = nic.alloc(n * size);
  src.bytes.set(pattern(n * size, 9));
  const dst = nic.alloc(n * size);
  const smr = nic.mr(src, 0);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  const firstSlots: number[] = [];
  let done = 0;
  for (let i = 0; i < n; i++) {
    b.recv([{ va: dst.iova + i * size, lkey: dmr.key, size }]);
    // Odd WQEs carry their 600 bytes in three SGEs (5 slots), even ones in one (3 slots).
    const sges = i % 2 === 0
      ? [{ va: src.iova + i * size, lkey: smr.key, size }]
      : [0, 1, 2].map((k) => ({ va: src.iova + i * size + k * 200, lkey: smr.key, size: 200 }));
    firstSlots.push(a.post({ sges }));
    if (i % 20 === 19) {
      // Take completions as they come so the ring never holds more than it has slots for.
      t.ok(nic.runUntil(() => a.scq.cq.producer >= i + 1, 5e9), `WQEs up to ${i} complete`);
      done = i + 1;
    }
  }
  t.equal(done, n);
  t.same(firstSlots.slice(0, 4), [0, 3, 8, 11], 'WQEs start where the previous one ended');
  t.ok(firstSlots.some((s, i) => i > 0 && s < firstSlots[i - 1]!), 'the producer wrapped the ring');
  const req = a.scq.pollAll();
  t.equal(req.length, n);
  t.ok(req.every((c) => c.status === REQ.OK), 'every send succeeded');
  t.same(req.map((c) => c.sqConsIdx), Array.from({ length: n }, (_, i) => i + 1), 'sq_cons_idx: the WQEs done so far');
  t.ok(b.rcq.pollAll().every((c) => c.status === RES.OK && c.length === size));
  t.same(dst.bytes, src.bytes, 'every byte where it belongs, the wrapped WQEs too');
});

t.test('send WQEs whose slots cross a page of an SQ laid out out of order are read slot by slot', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  // 512 slots: two 4 KiB pages of WQEs and the MSN table's two, the SQ's first three pages at the
  // buffer's pages 2, 0 and 1: in memory the first page's last slot is followed by the MSN table's
  // last page, not by the second page's first slot.
  const [a, b] = nic.pair({ mtu: MTU, sqSlots: 2 * SLOTS, sqPageOrder: [2, 0, 1], rqEntries: 256, cqEntries: 512 });
  const n = 150; // 600 slots: across the page boundary at slot 256 and the ring's end at 512
  const size = 600;
  const src = nic.alloc(n * size);
  src.bytes.set(pattern(n * size, 5));
  const dst = nic.alloc(n * size);
  const smr = nic.mr(src, 0);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  const spans: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    b.recv([{ va: dst.iova + i * size, lkey: dmr.key, size }]);
    // The first WQE takes 4 slots (two SGEs), then 5 and 3 alternate: WQEs start at 4 and 9 mod
    // 8, so the one at slot 252 runs into the second page and the one at 508 past the ring's end.
    const pieces = i === 0 ? 2 : i % 2 === 0 ? 1 : 3;
    const sges = Array.from({ length: pieces }, (_, k) => (
      { va: src.iova + i * size + k * (size / pieces), lkey: smr.key, size: size / pieces }));
    spans.push([a.post({ sges, remoteVa: 0x1234_5678_9abc, rkey: 0x55 }), sges.length + 2]);
    if (i % 20 === 19 || i === n - 1) t.ok(nic.runUntil(() => a.scq.cq.producer >= i + 1, 5e9), `WQEs up to ${i}`);
  }
  t.ok(spans.some(([s, k]) => s < SLOTS && s + k > SLOTS), 'a WQE crosses from the first page to the second');
  t.ok(spans.some(([s, k]) => s + k > 2 * SLOTS), 'a WQE wraps the ring');
  t.ok(a.scq.pollAll().every((c) => c.status === REQ.OK), 'every send succeeded');
  t.ok(b.rcq.pollAll().every((c) => c.status === RES.OK && c.length === size));
  t.same(dst.bytes, src.bytes, 'every byte where it belongs, from the WQEs across the page too');
});

t.test('variable-mode receive WQEs take (2 + rq_sge) slots: 48-byte receives, one across a page', async (t) => {
  // Found by Linux 6.12 on a served BCM57608 (docs/bnxt-en-bringup.md): rdma-core posts a receive
  // of rq_sge 1 in 3 slots (bnxt_re_get_rq_slots), so receive n starts at byte 48 n; the model
  // read 128-byte entries and took the second receive's bytes for garbage. The RQ's two pages lie
  // in reverse order in memory: receive 85 (bytes 4080-4127) has its header in one, its SGE in the other.
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, sqSlots: SLOTS, rqEntries: 128, rqSge: 1, cqEntries: 512 });
  t.equal(b.qp.rq.entryBytes, 48);
  const n = 100;
  const size = 64;
  const src = nic.alloc(n * size);
  src.bytes.set(pattern(n * size, 5));
  const dst = nic.alloc(n * size);
  const smr = nic.mr(src, 0);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  for (let i = 0; i < n; i++) {
    b.recv([{ va: dst.iova + i * size, lkey: dmr.key, size }]);
    a.post({ sges: [{ va: src.iova + i * size, lkey: smr.key, size }] });
    if (i % 20 === 19) t.ok(nic.runUntil(() => a.scq.cq.producer >= i + 1, 5e9), `sends up to ${i} complete`);
  }
  const res = b.rcq.pollAll();
  t.equal(res.length, n);
  t.ok(res.every((c) => c.status === RES.OK && c.length === size), 'every receive succeeded');
  t.same(res.map((c) => c.wrId), Array.from({ length: n }, (_, i) => i), 'in order, each its own wr_id');
  t.same(dst.bytes, src.bytes, 'each message in its own receive buffer, receive 85 too');
});

t.test('a variable-mode receive whose SGEs cross a page of an RQ laid out out of order', async (t) => {
  // rq_sge 3: 80-byte receives in 4 pages, laid out in reverse order in memory. Receive 153 (bytes
  // 12240-12319) has its first SGE in the RQ's third page and the other two in its fourth, which
  // lies before the third in memory: after the third page in memory comes the second.
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, sqSlots: SLOTS, rqEntries: 160, rqSge: 3, cqEntries: 512 });
  t.equal(b.qp.rq.entryBytes, 80);
  const n = 160;
  const size = 48;
  const src = nic.alloc(n * size);
  src.bytes.set(pattern(n * size, 7));
  const dst = nic.alloc(n * size);
  const smr = nic.mr(src, 0);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  for (let i = 0; i < n; i++) {
    // Three 16-byte pieces, the last first: the bytes land where each SGE says.
    b.recv([2, 0, 1].map((k) => ({ va: dst.iova + i * size + k * 16, lkey: dmr.key, size: 16 })));
    a.post({ sges: [{ va: src.iova + i * size + 32, lkey: smr.key, size: 16 },
      { va: src.iova + i * size, lkey: smr.key, size: 32 }] });
    if (i % 20 === 19) t.ok(nic.runUntil(() => a.scq.cq.producer >= i + 1, 5e9), `sends up to ${i} complete`);
  }
  const res = b.rcq.pollAll();
  t.equal(res.length, n);
  t.ok(res.every((c) => c.status === RES.OK && c.length === size), 'every receive succeeded');
  t.same(dst.bytes, src.bytes, 'every byte where its SGE says, receive 153 too');
});

t.test('a failed WQE\'s CQE names its first slot', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, sqSlots: SLOTS });
  const src = nic.alloc(4096);
  const dst = nic.alloc(4096);
  const smr = nic.mr(src, 0);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  for (let i = 0; i < 2; i++) b.recv([{ va: dst.iova + i * 1024, lkey: dmr.key, size: 1024 }]);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }] }); // slots 0-2
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }, { va: src.iova, lkey: smr.key, size: 100 }] }); // 3-6
  a.post({ sges: [{ va: src.iova, lkey: 0xdead, size: 100 }] }); // slots 7-9: no region has that key
  nic.runUntil(() => a.scq.cq.producer >= 3, 5e9);
  const req = a.scq.pollAll();
  t.same(req.slice(0, 2).map((c) => [c.status, c.sqConsIdx]), [[REQ.OK, 1], [REQ.OK, 2]], 'successes count WQEs');
  t.same([req[2]?.status, req[2]?.sqConsIdx], [REQ.LOCAL_PROTECTION, 7], 'the failure names slot 7, its first');
});

t.test('a static-mode doorbell (a WQE count) on a variable-mode QP: the WQE fails with a format error', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, sqSlots: SLOTS });
  const src = nic.alloc(4096);
  const dst = nic.alloc(4096);
  b.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size: 4096 }]);
  // The WQE takes slots 0-2; a static-mode driver rings index 1 (one WQE posted).
  a.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size: 100 }] }, false);
  const [lo, hi] = doorbellHalves(DB.SQ, a.qpn, 1, 0);
  nic.model.engine.doorbell(DOORBELL, lo, hi, true);
  nic.runUntil(() => a.scq.cq.producer >= 1, 5e9);
  nic.runFor(1e7);
  t.equal(nic.counters()['sqFormatErrors'], 1, 'the model caught the doorbell ending inside the WQE');
  t.equal(nic.counters()['packetsSent'], 0, 'nothing was sent');
  const req = a.scq.pollAll();
  t.same([req[0]?.status, req[0]?.sqConsIdx], [LOCAL_QP_OPERATION_ERR, 0], 'LOCAL_QP_OPERATION_ERR at slot 0');
  t.same(nic.tables.qpErrors.map((e) => e.req), [REQ_WQE_FORMAT_ERROR], 'the QP erred: REQ_WQE_FORMAT_ERROR');
  t.equal(b.rcq.pollAll().length, 0, 'the peer received nothing');
});

t.test('a wqe_size below the 2 header slots is malformed too', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU, sqSlots: SLOTS });
  a.post({ sges: [], wqeSize: 1, advance: 1 });
  nic.runUntil(() => a.scq.cq.producer >= 1, 5e9);
  t.equal(nic.counters()['sqFormatErrors'], 1);
  t.equal(a.scq.pollAll()[0]?.status, LOCAL_QP_OPERATION_ERR);
});

/** Writes MSN entry `msn` of a variable-mode QP: start | next << 24 | slot << 48, after the SQ's slots. */
function writeMsn(view: DataView, slots: number, tableEntries: number, msn: number, e: [number, number, number]): void {
  const at = slots * 16 + (msn % tableEntries) * 8;
  view.setUint32(at, (e[0] & 0xffffff) | ((e[1] & 0xff) << 24), true);
  view.setUint32(at + 4, ((e[1] >>> 8) & 0xffff) | (e[2] << 16), true);
}

for (const [what, slotOf, intact] of [
  ['the WQEs\' first slots: resent from the table, bytes intact', (i: number) => 3 * i, true],
  ['a wrong start slot: the QP fails with REQ_RETX_SETUP_ERROR', (i: number) => (i === 1 ? 8 : 3 * i), false],
] as const) {
  t.test(`variable mode, MSN entries naming ${what}`, async (t) => {
    const nic = new TestNic();
    t.teardown(() => nic.close());
    const [a, b] = nic.pair({ mtu: MTU, sqSlots: SLOTS });
    a.qp.msnEntries = SLOTS / 2; // roundup_pow_of_two(256 slots) / 2 (qplib_fp.c bnxt_qplib_create_qp)
    const size = 3 * MTU;
    const src = nic.alloc(3 * size);
    src.bytes.set(pattern(3 * size, 4));
    const dst = nic.alloc(3 * size);
    const smr = nic.mr(src, 0);
    const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
    nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_MIDDLE, 0x1004, 1); // WQE 1's MIDDLE, once
    for (let i = 0; i < 3; i++) {
      b.recv([{ va: dst.iova + i * size, lkey: dmr.key, size }]);
      writeMsn(a.sq.view, SLOTS, SLOTS / 2, i, [0x1000 + 3 * i, 0x1003 + 3 * i, slotOf(i)]);
      a.post({ sges: [{ va: src.iova + i * size, lkey: smr.key, size }] }, false);
    }
    a.ringSq();
    nic.runUntil(() => a.scq.cq.producer >= 3 || nic.counters()['msnLookupFailures']! > 0, 5e9);
    nic.runFor(1e8);
    const c = nic.counters();
    t.equal(c['faultTxDropped'], 1);
    if (intact) {
      t.ok(c['msnRetransmissions']! >= 1, 'the rewind was found in the table');
      t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK, REQ.OK, REQ.OK]);
      t.same(dst.bytes, src.bytes, 'every byte where it belongs');
    } else {
      t.equal(c['msnLookupFailures'], 1, 'the model caught the entry');
      t.same(nic.tables.qpErrors.map((e) => e.req), [REQ_RETX_SETUP_ERROR]);
      const req = a.scq.pollAll();
      t.same(req.slice(0, 2).map((x) => [x.status, x.sqConsIdx]), [[REQ.OK, 1], [LOCAL_QP_OPERATION_ERR, 3]],
        'WQE 0 done; WQE 1 fails, its CQE naming slot 3');
    }
  });
}
