// Issue 11 item 4: MODIFY_QP carries the read depths as slots, max_rd_atomic = ORD + 1 and
// max_dest_rd_atomic = 2 x IRD + 2 (Linux bnxt_re qplib_fp.c bnxt_qplib_modify_qp with
// ORD_LIMIT_TO_ORRQ_SLOTS / IRD_LIMIT_TO_IRRQ_SLOTS, qplib_fp.h): 17 and 34 for depth 16. The
// bytes are read from the CMDQ at roce_hsi.h cmdq_modify_qp offsets: byte 0 opcode (0x03),
// byte 24 bits 0-3 new_state, byte 76 max_rd_atomic, byte 77 max_dest_rd_atomic.
// And the software NIC's rule: a responder with IRD READs in flight NAKs the next one (Invalid
// Request), so the old raw 16 (IRD 7) fails a requester with 15 READs outstanding.
import t from 'tap';
import { nicInternals } from '../lib/nic.ts';
import type { Nic, NicOptions, Qp, Region } from '../lib/index.ts';
import { captureCmdq } from './helpers/cmdq-capture.ts';
import { engineCounters, openPair } from './helpers/qp-data.ts';

const MODIFY_QP = 0x03;
const RTR = 2;
const RTS = 3;

t.test('MODIFY_QP to RTR carries max_dest_rd_atomic 34 and to RTS max_rd_atomic 17 (depth 16, no IQM)', async (t) => {
  const capture = captureCmdq();
  t.teardown(() => capture.restore());
  const p = openPair();
  t.teardown(() => p.nic.close());
  const modifies = capture.of(MODIFY_QP);
  const rtr = modifies.filter((b) => (b[24]! & 0xf) === RTR);
  const rts = modifies.filter((b) => (b[24]! & 0xf) === RTS);
  t.equal(rtr.length, 2, 'one INIT -> RTR per queue pair');
  t.equal(rts.length, 2, 'one RTR -> RTS per queue pair');
  t.same(rtr.map((b) => b[77]), [34, 34], 'max_dest_rd_atomic = IRD_LIMIT_TO_IRRQ_SLOTS(16) = 34');
  t.same(rts.map((b) => b[76]), [17, 17], 'max_rd_atomic = ORD_LIMIT_TO_ORRQ_SLOTS(16) = 17');
});

/** Makes the driver of `nic` send the raw depth 16 in MODIFY_QP, as it did before the fix. */
function sendRawDepths(nic: Nic): void {
  const rcfw = nicInternals(nic).roce.rcfw;
  const send = rcfw.send.bind(rcfw);
  rcfw.send = ((cmd, body, names) => {
    const b = body as Record<string, unknown>;
    if (cmd.opcode === MODIFY_QP && b['max_dest_rd_atomic'] !== undefined) b['max_dest_rd_atomic'] = 16;
    if (cmd.opcode === MODIFY_QP && b['max_rd_atomic'] !== undefined) b['max_rd_atomic'] = 16;
    return send(cmd, body, names);
  }) as typeof rcfw.send;
}

function postReads(a: Qp, b: { rb: Region; ra: Region }, n: number, bytes: number): void {
  for (let i = 0; i < n; i++) a.read(b.rb, i * bytes, b.ra, i * bytes, bytes);
}

t.test('24 READs of 64 KiB complete: the responder\'s IRD (16) covers the requester\'s ORD (16)', async (t) => {
  const p = openPair({ stepped: true }, 1 << 21);
  t.teardown(() => p.nic.close());
  postReads(p.a, p, 24, 65536);
  const results = [];
  for (let i = 0; i < 24; i++) results.push(p.a.wait('send', 5e6));
  t.same(results.filter((r) => r?.ok !== true), [], 'all 24 READs completed (the requester holds at ORD 16)');
  t.equal(engineCounters(p.nic)['readsOverIrd'], 0, 'no READ met the responder\'s IRD');
});

t.test('the raw depth 16 (IRD 7 at the responder, ORD 15 at the requester) fails the QP', async (t) => {
  const { Nic, Qp, Region } = await import('../lib/index.ts');
  const nic = Nic.open('emu', { stepped: true });
  if (!nic.ok) return void t.fail(nic.error);
  t.teardown(() => nic.value.close());
  sendRawDepths(nic.value);
  const a = Qp.make(nic.value), b = Qp.make(nic.value);
  const ra = Region.alloc(nic.value, 1 << 21), rb = Region.alloc(nic.value, 1 << 21);
  if (!a.ok || !b.ok || !ra.ok || !rb.ok) return void t.fail('setup');
  t.ok(a.value.connect(b.value.endpoint).ok && b.value.connect(a.value.endpoint).ok, 'connected with the old depths');
  postReads(a.value, { ra: ra.value, rb: rb.value }, 15, 65536);
  const results = [];
  for (let i = 0; i < 15; i++) results.push(a.value.wait('send', 5e6));
  const failed = results.filter((r) => r !== undefined && !r.ok);
  t.ok(failed.length > 0, 'READs beyond IRD 7 fail the requester');
  t.ok(engineCounters(nic.value)['readsOverIrd']! > 0, 'the responder NAKed a READ beyond its IRD');
  const first = failed[0];
  // The NAK names the READ beyond IRD; the earlier READs' responses never come (the responder
  // failed), so the requester resends the oldest READ to a dead responder until its retries run out.
  const why = /invalid request|retry exceeded/i;
  if (first && !first.ok) t.match(first.error, why, 'NAKed, or retried against the failed responder');
});

// The other branch (issue 11 item 4): a device reporting internal queue memory (QUERY_FUNC
// dev_cap_flags INTERNAL_QUEUE_MEMORY, Broadcom's bnxt_re BNXT_RE_IQM; the software NIC's
// `current-iqm` firmware) takes the depths as they are: max_rd_atomic = ORD = 16 and
// max_dest_rd_atomic = IRD = 16, at the same cmdq_modify_qp bytes 76 and 77.
t.test('on a device with internal queue memory MODIFY_QP carries the raw depths, 16 and 16', async (t) => {
  const capture = captureCmdq();
  t.teardown(() => capture.restore());
  const p = openPair({ stepped: true, firmware: 'current-iqm' } as NicOptions, 1 << 21);
  t.teardown(() => p.nic.close());
  const modifies = capture.of(MODIFY_QP);
  const rtr = modifies.filter((b) => (b[24]! & 0xf) === RTR);
  const rts = modifies.filter((b) => (b[24]! & 0xf) === RTS);
  t.same(rtr.map((b) => b[77]), [16, 16], 'max_dest_rd_atomic = IRD 16');
  t.same(rts.map((b) => b[76]), [16, 16], 'max_rd_atomic = ORD 16');
  // The model holds them as the depths they are: 24 READs complete, none beyond the IRD.
  postReads(p.a, p, 24, 65536);
  const results = [];
  for (let i = 0; i < 24; i++) results.push(p.a.wait('send', 5e6));
  t.same(results.filter((r) => r?.ok !== true), [], 'all 24 READs completed');
  t.equal(engineCounters(p.nic)['readsOverIrd'], 0, 'no READ met the responder\'s IRD (16)');
});
