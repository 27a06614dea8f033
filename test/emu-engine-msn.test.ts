// Issue 12 item 3 (the model): hardware requester retransmission from the driver's MSN table.
// Entries are written by hand from roce_hsi.h sq_msn_search (start PSN bits 0-23, next PSN
// 24-47, start slot 48-63), at msn % table size after the SQ's WQEs (qplib_fp.c
// bnxt_qplib_pull_psn_buff, bnxt_qplib_fill_msn_search).
import t from 'tap';
import { ACCESS_MR, REQ, RES, TestNic, pattern, type TestQp } from './helpers/emu-engine-harness.ts';
import { Opcode } from '../drivers/emu/model/wire/index.ts';
import { msnTableEntries } from '../firmware-hwrm/roce/msn-table.ts';

const MTU = 1024;
const SIZE = 3 * MTU; // three packets: FIRST, MIDDLE, LAST
const SQ_PSN = 0x1000; // the harness pair's first PSN on side a

/** Writes entry `msn` of `q`'s table: the little-endian u64 start | next << 24 | slot << 48. */
function writeMsn(q: TestQp, msn: number, start: number, next: number, slot: number): void {
  const at = q.qp.sq.entries * 128 + (msn % q.qp.msnEntries) * 8;
  const v = q.sq.view;
  v.setUint32(at, (start & 0xffffff) | ((next & 0xff) << 24), true);
  v.setUint32(at + 4, ((next >>> 8) & 0xffff) | (slot << 16), true);
}

/** Three SENDs of three packets from a to b; entries by `entry(msn)` (undefined: none written). */
function sendThree(entry: (msn: number) => [number, number, number] | undefined, dropPsn: number) {
  const nic = new TestNic();
  const [a, b] = nic.pair({ mtu: MTU });
  a.qp.msnEntries = msnTableEntries(a.qp.sq.entries);
  const src = nic.alloc(3 * SIZE);
  src.bytes.set(pattern(3 * SIZE, 7));
  const dst = nic.alloc(3 * SIZE);
  const smr = nic.mr(src, 0);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  // The MIDDLE packet with that PSN is lost once.
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_MIDDLE, dropPsn, 1);
  for (let i = 0; i < 3; i++) {
    b.recv([{ va: dst.iova + i * SIZE, lkey: dmr.key, size: SIZE }]);
    const e = entry(i);
    if (e) writeMsn(a, i, ...e);
    a.post({ sges: [{ va: src.iova + i * SIZE, lkey: smr.key, size: SIZE }] }, false);
  }
  a.ringSq();
  nic.runUntil(() => a.scq.cq.producer >= 3 || nic.counters()['msnLookupFailures']! > 0, 5e9);
  nic.runFor(1e8);
  return { nic, a, b, src, dst };
}

/** The entries the driver should write: WQE i starts at PSN 0x1000 + 3i, slot 8i (static mode). */
const right = (msn: number): [number, number, number] => [SQ_PSN + 3 * msn, SQ_PSN + 3 * msn + 3, 8 * msn];

t.test('the table has roundup_pow_of_two(SQ size) entries, half that for an SQ in variable-mode slots', async (t) => {
  t.same([1, 2, 3, 64, 100, 4095, 4096].map((n) => msnTableEntries(n)), [1, 2, 4, 64, 128, 4096, 4096]);
  t.same([256, 12288, 32768].map((n) => msnTableEntries(n, true)), [128, 8192, 16384]);
});

t.test('a lost MIDDLE of the second WQE: resent from the WQE and PSN the MSN table names, bytes intact', async (t) => {
  const { nic, a, b, src, dst } = sendThree(right, SQ_PSN + 4);
  t.teardown(() => nic.close());
  const c = nic.counters();
  t.equal(c['faultTxDropped'], 1, 'PSN 0x1004 was lost');
  t.ok(c['msnRetransmissions']! >= 1, 'the rewind was found in the MSN table');
  t.equal(c['msnLookupFailures'], 0);
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK, REQ.OK, REQ.OK]);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.length]), [[RES.OK, SIZE], [RES.OK, SIZE], [RES.OK, SIZE]]);
  t.same(dst.bytes, src.bytes, 'every byte where it belongs');
});

t.test('an entry one PSN early: the resent packet carries the bytes the entry names, a wrong message', async (t) => {
  // WQE 1 really spans 0x1003..0x1005; the entry says it starts at 0x1002. The resend of 0x1004
  // is then taken as the WQE's third packet: its LAST bytes go out under the MIDDLE's PSN.
  const early = (msn: number): [number, number, number] => (msn === 1 ? [SQ_PSN + 2, SQ_PSN + 6, 8] : right(msn));
  const { nic, b, src, dst } = sendThree(early, SQ_PSN + 4);
  t.teardown(() => nic.close());
  t.ok(nic.counters()['msnRetransmissions']! >= 1, 'the rewind used the entry');
  const res = b.rcq.pollAll();
  const second = dst.bytes.subarray(SIZE, 2 * SIZE);
  const intact = res.length === 3 && res.every((x) => x.status === RES.OK && x.length === SIZE)
    && second.every((x, i) => x === src.bytes[SIZE + i]);
  t.notOk(intact, 'the second message did not arrive as sent');
});

t.test('an entry naming another WQE\'s slot fails the QP with REQ_RETX_SETUP_ERROR', async (t) => {
  const wrongSlot = (msn: number): [number, number, number] => (msn === 1 ? [SQ_PSN + 3, SQ_PSN + 6, 16] : right(msn));
  const { nic, a, src, dst } = sendThree(wrongSlot, SQ_PSN + 4);
  t.teardown(() => nic.close());
  t.equal(nic.counters()['msnLookupFailures'], 1, 'the model caught the entry');
  // creq_qp_error_notification req_err_state_reason REQ_RETX_SETUP_ERROR (roce_hsi.h: 0x1c).
  t.same(nic.tables.qpErrors.map((e) => e.req), [0x1c]);
  const req = a.scq.pollAll();
  t.equal(req[0]?.status, REQ.OK, 'the first WQE was acknowledged before');
  t.equal(req[1]?.status, 3, 'the second completes with LOCAL_QP_OPERATION_ERR (cq_req status 3)');
  t.notSame(dst.bytes.subarray(SIZE), src.bytes.subarray(SIZE));
});

t.test('no entries written: a retransmission finds nothing and fails the QP', async (t) => {
  const { nic, a } = sendThree(() => undefined, SQ_PSN + 1);
  t.teardown(() => nic.close());
  t.equal(nic.counters()['msnLookupFailures'], 1);
  t.equal(a.scq.pollAll()[0]?.status, 3);
});

t.test('without an MSN table the engine keeps its own record: the same loss recovers with no entries', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(SIZE);
  src.bytes.set(pattern(SIZE, 3));
  const dst = nic.alloc(SIZE);
  b.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size: SIZE }]);
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_MIDDLE, SQ_PSN + 1, 1);
  a.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size: SIZE }] });
  t.ok(nic.runUntil(() => b.rcq.cq.producer === 1 && a.scq.cq.producer === 1, 5e9));
  t.equal(nic.counters()['msnRetransmissions'], 0);
  t.same(dst.bytes, src.bytes);
});
