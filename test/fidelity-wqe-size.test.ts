// Issue 11 item 3: wqe_size in SQ and RQ WQE headers is the 16-byte units the WQE uses (header
// plus the SGEs present: 3 for one SGE), while static mode still gives each WQE 8 slots (Linux
// bnxt_re qplib_fp.c bnxt_qplib_required_slots; rdma-core providers/bnxt_re bnxt_re_required_slots,
// bnxt_re_post_recv). Expected bytes are read at roce_hsi.h offsets, not through the codec:
//   sq_send_hdr / sq_rdma_hdr: byte 0 wqe_type, 1 flags, 2 wqe_size; rq_wqe_hdr: byte 2 wqe_size.
//   sq_psn_search_ext: bytes 8..11 start_slot_idx (slot units: WQE index x 8 in static mode).
// And the software NIC's rule: a WQE whose wqe_size names more SGEs than the driver wrote (the
// old driver's 8, read as six SGEs of which five are zeroed) completes in error.
import t from 'tap';
import { driverQpOf } from '../lib/qp.ts';
import { nicInternals } from '../lib/nic.ts';
import type { Qp } from '../lib/index.ts';
import { must, openPair } from './helpers/qp-data.ts';

/** The P5 layout these checks are about (static 128-byte WQEs, context memory V1); test/thor2.test.ts has P7's. */
const P5 = { stepped: true, chip: 'BCM57508' } as const;

const WQE_BYTES = 128;
const SLOTS = 4096;
const PSN_AREA = SLOTS * WQE_BYTES;

function ringBytes(q: Qp): { sq: Uint8Array; rq: Uint8Array } {
  const d = driverQpOf(q) as unknown as { sq32: Uint32Array; rq32: Uint32Array };
  const bytes = (u: Uint32Array) => new Uint8Array(u.buffer, u.byteOffset, u.byteLength);
  return { sq: bytes(d.sq32), rq: bytes(d.rq32) };
}

/** The completion wait found within 5 s (a timeout is a failure here). */
function done(q: Qp, side: 'send' | 'receive', what: string): number {
  const r = q.wait(side, 5e6);
  if (r === undefined) throw new Error(`${what}: no completion`);
  return must(r, what);
}

function le32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

t.test('SEND, READ and RECV WQEs carry wqe_size 3 (header + one SGE); PSN entries count 8 slots each', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 64);
  p.a.send(p.ra, 0, 64);
  p.a.read(p.rb, 0, p.ra, 128, 32);
  const { sq } = ringBytes(p.a);
  const { rq } = ringBytes(p.b);
  t.equal(sq[0], 0x00, 'WQE 0: wqe_type SEND (0x00)');
  t.equal(sq[2], 3, 'WQE 0: wqe_size 3');
  t.equal(sq[WQE_BYTES], 0x06, 'WQE 1: wqe_type RDMA READ (0x06)');
  t.equal(sq[WQE_BYTES + 2], 3, 'WQE 1: wqe_size 3');
  t.equal(rq[0], 0x80, 'RQ WQE 0: wqe_type RCV (0x80)');
  t.equal(rq[2], 3, 'RQ WQE 0: wqe_size 3');
  if (nicInternals(p.nic).roce.msnTable) {
    // sq_msn_search (hardware retransmission): start_idx in bits 48-63 of the 8-byte entry.
    t.equal(sq[PSN_AREA + 14]! | (sq[PSN_AREA + 15]! << 8), 8, 'sq_msn_search of WQE 1: start_idx 8 (8 slots a WQE)');
  } else {
    t.equal(le32(sq, PSN_AREA + 16 + 8), 8, 'psn_search_ext of WQE 1: start_slot_idx 8 (static mode: 8 slots per WQE)');
  }
  t.same(done(p.a, 'send', 'send'), 64);
  t.same(done(p.a, 'send', 'read'), 32);
  t.same(done(p.b, 'receive', 'receive'), 64);
});

t.test('the software NIC fails a SEND whose wqe_size 8 names six SGEs where one was written', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 64);
  p.a.send(p.ra, 0, 64);
  ringBytes(p.a).sq[2] = 8; // before the stepped NIC runs: what the driver wrote before the fix
  const r = p.a.wait('send', 5e6);
  t.equal(r?.ok, false, 'the send completes in error');
  if (r && !r.ok) t.match(r.error, /protection/i, 'a local protection error: SGE 2 names no region');
});

t.test('the software NIC fails a receive whose wqe_size 8 names six SGEs where one was written', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 64);
  ringBytes(p.b).rq[2] = 8;
  p.a.send(p.ra, 0, 64);
  const r = p.b.wait('receive', 5e6);
  t.equal(r?.ok, false, 'the receive completes in error');
  const s = p.a.wait('send', 5e6);
  t.equal(s?.ok, false, 'and the send it was for fails too (the responder NAKs)');
});

t.test('a receive of one zero-length SGE with no key is accepted (rdma-core bnxt_re_post_recv)', async (t) => {
  const p = openPair(P5);
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 0);
  const { rq } = ringBytes(p.b);
  rq[40] = 0; rq[41] = 0; rq[42] = 0; rq[43] = 0; // the SGE's l_key (sq_sge bytes 8..11): not written by rdma-core
  p.a.send(p.ra, 0, 0);
  t.same(done(p.b, 'receive', 'receive'), 0, 'the empty receive takes the empty send');
  t.same(done(p.a, 'send', 'send'), 0);
});
