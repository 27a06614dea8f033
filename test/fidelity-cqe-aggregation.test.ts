// Issue 11 item 9: one requester CQE may complete several send entries (CQE aggregation). Its
// sq_cons_idx (cq_req bytes 8-9) names the entry after the last it completes; every entry before
// that succeeded, and the last takes the CQE's status (Linux bnxt_re qplib_fp.c
// bnxt_qplib_cq_process_req, rdma-core providers/bnxt_re bnxt_re_poll_success_scqe). A CQE
// naming an index outside the due entries still fails the queue pair. The software NIC writes
// a requester CQE only for a signaled WQE or a failure, so WQEs whose SIGNAL_COMP flag (sq_send_hdr
// byte 1, bit 0) is cleared before the stepped NIC runs are completed by the next CQE.
import t from 'tap';
import { driverQpOf } from '../lib/qp.ts';
import type { Qp } from '../lib/index.ts';
import { engineCounters, openPair } from './helpers/qp-data.ts';
import { controls } from './helpers/qp-control.ts';

/** The P5 layout these checks are about (static 128-byte WQEs, context memory V1); test/thor2.test.ts has P7's. */
const P5 = { stepped: true, chip: 'BCM57508' } as const;

const WQE_BYTES = 128;

function sqBytes(q: Qp): Uint8Array {
  const d = driverQpOf(q) as unknown as { sq32: Uint32Array };
  return new Uint8Array(d.sq32.buffer, d.sq32.byteOffset, d.sq32.byteLength);
}

function unsignal(q: Qp, wqe: number): void {
  sqBytes(q)[wqe * WQE_BYTES + 1]! &= ~0x01;
}

t.test('one CQE for three sends: all three complete, with their own lengths, and the ring stays in step', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  const before = engineCounters(p.nic)['cqesWritten']!;
  for (let i = 0; i < 3; i++) p.b.receive(p.rb, i * 1024, 1024);
  for (let i = 0; i < 3; i++) p.a.send(p.ra, 0, 10 * (i + 1));
  unsignal(p.a, 0);
  unsignal(p.a, 1);
  const sends = [p.a.wait('send', 5e6), p.a.wait('send', 5e6), p.a.wait('send', 5e6)];
  const okBytes = (n: number) => ({ ok: true, value: n });
  t.same(sends, [okBytes(10), okBytes(20), okBytes(30)], 'three completions from one CQE');
  const receives = [p.b.wait('receive', 5e6), p.b.wait('receive', 5e6), p.b.wait('receive', 5e6)];
  t.same(receives.map((r) => r?.ok), [true, true, true]);
  const written = engineCounters(p.nic)['cqesWritten']! - before;
  t.equal(written, 1 + 3, 'the NIC wrote one requester CQE (and three receive CQEs)');
  t.equal(p.a.room('send'), 4095, 'every send slot is free again');
  p.b.receive(p.rb, 0, 64);
  p.a.send(p.ra, 0, 64);
  t.same(p.a.wait('send', 5e6), { ok: true, value: 64 }, 'the next send completes by its own CQE');
});

t.test('an aggregated CQE with an error: the entries before its last succeed, the last fails', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  for (let i = 0; i < 3; i++) p.b.receive(p.rb, i * 1024, 1024);
  for (let i = 0; i < 3; i++) p.a.send(p.ra, 0, 10 * (i + 1));
  unsignal(p.a, 0);
  unsignal(p.a, 1);
  const sq = sqBytes(p.a);
  sq.fill(0, 2 * WQE_BYTES + 40, 2 * WQE_BYTES + 44); // WQE 2's SGE l_key (sq_sge bytes 8-11): 0 names no region
  const sends = [p.a.wait('send', 5e6), p.a.wait('send', 5e6), p.a.wait('send', 5e6)];
  const done = [{ ok: true, value: 10 }, { ok: true, value: 20 }];
  t.same(sends.slice(0, 2), done, 'the two unsignaled sends before it succeeded');
  t.equal(sends[2]?.ok, false, 'the third carries the CQE\'s error');
  if (sends[2] && !sends[2].ok) t.match(sends[2].error, /protection/i);
});

t.test('a requester CQE naming an entry past the due ones still fails the queue pair', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  p.a.send(p.ra, 0, 8); // no receive posted: the NIC waits on RNR and completes nothing yet
  const scq = (driverQpOf(p.a) as unknown as { scq: { id: number } }).scq.id;
  const words = [0, 0, 5, 0, 0, 0, 0, 0]; // cq_req: sq_cons_idx 5 with one entry due; type REQ (0), status 0
  t.equal(controls(p.nic).engine.injectCqe(scq, words), true, 'the model wrote the completion');
  const r = p.a.wait('send', 5e6);
  t.equal(r?.ok, false, 'the send fails');
  if (r && !r.ok) t.match(r.error, /out of order/, 'as a completion out of order');
});
