// Issue 12, "What must hold" on a BCM57608 (Thor2, P7) software NIC, through the driver: the
// bring-up takes context memory V2 and two doorbell bases, queue pairs run variable-size WQEs
// with the MSN table (Linux bnxt_re main.c bnxt_re_set_drv_mode, qplib_fp.c bnxt_qplib_post_send,
// bnxt_qplib_fill_msn_search), and the model catches what a wrong driver would do. Expected
// bytes are written out by hand from roce_hsi.h offsets: sq_send_hdr (wqe_type byte 0, flags
// byte 1, wqe_size byte 2, length bytes 8-11), sq_sge (va 0-7, l_key 8-11, size 12-15) after the
// 32-byte header, sq_msn_search (start PSN bits 0-23, next PSN 24-47, start slot 48-63).
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Nic, type NicOptions } from '../lib/index.ts';
import { driverQpOf } from '../lib/qp.ts';
import type { Qp } from '../lib/index.ts';
import { parseTrace } from '../firmware-hwrm/trace.ts';
import { emuOf, engineCounters, fillPattern, firstDifference, openPair } from './helpers/qp-data.ts';
import { lostMiddleIsResent } from './helpers/lost-packet.ts';

// The current firmware: the older personality (p5-legacy, no hardware retransmission, so no MSN
// table) is a P5 firmware, and the tests below are about the P7's MSN table and slots.
const P7: NicOptions = { stepped: true, chip: 'BCM57608', firmware: 'current' };
const SLOT = 16;
const WQE_SLOTS = 3; // a 32-byte header and one SGE
const SQ_SLOTS = 4096 * WQE_SLOTS; // 12288: a multiple of 256 (bnxt_qplib_get_depth)
const MSN_AT = SQ_SLOTS * SLOT; // the MSN table follows the SQ's slots
const RC_SEND_MIDDLE = 0x01; // IBA Table 35 (BTH opcode, RC)

function sqBytes(q: Qp): Uint8Array {
  const d = driverQpOf(q) as unknown as { sq32: Uint32Array };
  return new Uint8Array(d.sq32.buffer, d.sq32.byteOffset, d.sq32.byteLength);
}

const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];
const le16 = (v: number) => [v & 0xff, (v >> 8) & 0xff];
const le32 = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

t.test('a BCM57608 comes up with context memory V2, and CREATE_QP asks for variable-size WQEs in slots', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-thor2-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const trace = join(dir, 'trace.jsonl');
  const p = openPair({ ...P7, trace } as NicOptions, 1 << 16);
  t.match(p.nic.info, { chip: 'BCM57608', chipNum: 0x1760, chipFamily: 'P7' });
  p.b.receive(p.rb, 0, 100);
  p.a.send(p.ra, 0, 100);
  t.same(p.a.wait('send', 1_000_000), { ok: true, value: 100 });
  const c = engineCounters(p.nic);
  p.nic.close();
  const records = parseTrace(readFileSync(trace, 'utf8'));
  const hwrm = records.filter((r) => r.ch === 'hwrm' && r.dir === 'req').map((r) => r.name);
  t.ok(hwrm.includes('HWRM_FUNC_BACKING_STORE_QCAPS_V2') && hwrm.includes('HWRM_FUNC_BACKING_STORE_CFG_V2'),
    'context memory V2 (FUNC_QCAPS flags_ext BS_V2_SUPPORTED)');
  t.notOk(hwrm.includes('HWRM_FUNC_BACKING_STORE_CFG'), 'no V1 CFG');
  const creates = records.filter((r) => r.ch === 'cmdq' && r.name === 'CREATE_QP');
  t.equal(creates.length, 2);
  for (const q of creates) {
    // CMDQ_CREATE_QP_QP_FLAGS: FORCE_COMPLETION 0x2 | RESERVED_LKEY_ENABLE 0x4 | FR_PMR_ENABLED 0x8 | VARIABLE 0x10
    t.equal(q.fields['qp_flags'], 0x1e, 'qp_flags with VARIABLE_SIZED_WQE_ENABLED');
    t.equal(q.fields['sq_size'], SQ_SLOTS, 'sq_size counts 16-byte slots');
    t.equal(q.fields['sq_sge'], 1);
  }
  // Every doorbell landed where the model takes its kind: the CREQ's at the NQ doorbell offset
  // (0x10800 on this model), the QP and CQ doorbells on DPI 0's page (0x11000).
  t.equal(c['doorbellsRejected'], 0, 'no doorbell refused');
  t.equal(c['doorbellsWrongBase'], 0);
  t.equal(c['sqFormatErrors'], 0);
});

t.test('WQEs of 3 slots one after another, slot-indexed MSN entries, bytes delivered', async (t) => {
  const p = openPair(P7, 1 << 20, 1024);
  t.teardown(() => p.nic.close());
  const psn = p.a.endpoint.psn;
  fillPattern(p.ra.bytes, 0, 8000, 3);
  const sizes = [1000, 3000, 100];
  let at = 0;
  for (const n of sizes) p.b.receive(p.rb, at, 4096), (at += 4096);
  at = 0;
  for (const n of sizes) p.a.send(p.ra, at, n), (at += n);
  for (const n of sizes) t.same(p.a.wait('send', 1_000_000), { ok: true, value: n });
  for (const n of sizes) t.same(p.b.wait('receive', 1_000_000), { ok: true, value: n });
  t.equal(firstDifference(p.rb.bytes, 4096, p.ra.bytes, 1000, 3000), -1, 'the second message intact');
  const sq = sqBytes(p.a);
  at = 0;
  sizes.forEach((n, i) => {
    const w = i * WQE_SLOTS * SLOT;
    t.same([...sq.subarray(w, w + 4)], [0x00, 0x01, 3, 0], `WQE ${i}: SEND, SIGNAL_COMP, wqe_size 3, at slot ${3 * i}`);
    t.same([...sq.subarray(w + 8, w + 12)], le32(n), `WQE ${i}: length`);
    t.same([...sq.subarray(w + 44, w + 48)], le32(n), `WQE ${i}: its SGE's size, in slot ${3 * i + 2}`);
    at += n;
  });
  // PSNs: 1 packet, 3 packets, 1 packet (MTU 1024).
  const e = (start: number, next: number, slot: number) => [...le24(start), ...le24(next), ...le16(slot)];
  const entries = [...e(psn, psn + 1, 0), ...e(psn + 1, psn + 4, 3), ...e(psn + 4, psn + 5, 6)];
  t.same([...sq.subarray(MSN_AT, MSN_AT + 24)], entries,
    'sq_msn_search entries 0-2 after the 12288 slots: start slots 0, 3, 6');
  t.same(engineCounters(p.nic)['sqFormatErrors'], 0);
});

t.test('a lost packet on P7 is resent from the MSN table with the right PSNs and bytes', async (t) => {
  const c = lostMiddleIsResent(t, P7);
  t.ok(c['msnRetransmissions']! >= 1, 'the rewind was found in the MSN table');
});

t.test('a wrong MSN entry on P7 is caught: a wrong start PSN sends wrong bytes, a wrong slot fails', async (t) => {
  for (const broken of ['start PSN', 'start slot'] as const) {
    const p = openPair(P7, 1 << 20, 1024);
    fillPattern(p.ra.bytes, 0, 6000, 6);
    const psn = p.a.endpoint.psn;
    emuOf(p.nic).emu.engine.dropFrames('tx', RC_SEND_MIDDLE, psn + 4, 1); // the second message's MIDDLE
    p.b.receive(p.rb, 0, 4096);
    p.b.receive(p.rb, 4096, 4096);
    p.a.send(p.ra, 0, 3000);
    p.a.send(p.ra, 3000, 3000);
    const sq = sqBytes(p.a);
    // Entry 1 (the second WQE: PSNs psn+3..psn+5, slot 3) before the engine needs it for the resend.
    if (broken === 'start PSN') sq.set(le24(psn + 2), MSN_AT + 8);
    else sq.set(le16(6), MSN_AT + 8 + 6);
    const sends = [p.a.wait('send', 5_000_000), p.a.wait('send', 5_000_000)];
    t.same(sends[0], { ok: true, value: 3000 }, `${broken}: the first message is done before`);
    if (broken === 'start PSN') {
      const got = p.b.wait('receive', 5_000_000) && p.b.wait('receive', 5_000_000);
      const intact = sends[1]?.ok === true && got?.ok === true
        && firstDifference(p.rb.bytes, 4096, p.ra.bytes, 3000, 3000) === -1;
      t.notOk(intact, 'the second message did not arrive as sent');
    } else {
      t.equal(sends[1]?.ok, false, 'the second send fails');
      t.equal(engineCounters(p.nic)['msnLookupFailures'], 1, 'the model caught the entry');
    }
    p.nic.close();
  }
});

t.test('a failed send\'s CQE names its first slot: the driver takes the entries before it as done', async (t) => {
  const p = openPair(P7);
  t.teardown(() => p.nic.close());
  for (let i = 0; i < 3; i++) p.b.receive(p.rb, i * 1024, 1024);
  for (let i = 0; i < 3; i++) p.a.send(p.ra, 0, 10 * (i + 1));
  const sq = sqBytes(p.a);
  sq[0 * WQE_SLOTS * SLOT + 1]! &= ~0x01; // WQEs 0 and 1 unsignaled: the error CQE completes them too
  sq[1 * WQE_SLOTS * SLOT + 1]! &= ~0x01;
  sq.fill(0, 2 * WQE_SLOTS * SLOT + 40, 2 * WQE_SLOTS * SLOT + 44); // WQE 2's l_key 0: no region
  const sends = [p.a.wait('send', 5e6), p.a.wait('send', 5e6), p.a.wait('send', 5e6)];
  t.same(sends.slice(0, 2), [{ ok: true, value: 10 }, { ok: true, value: 20 }], 'the two before it succeeded');
  t.equal(sends[2]?.ok, false);
  if (sends[2] && !sends[2].ok) {
    t.match(sends[2].error, /protection/i, 'the third carries its own error, not "out of order"');
  }
});

t.test('a doorbell at the other kind\'s base is refused: QP and CQ ones at the NQ offset, NQ ones on DPI 0',
  async (t) => {
  const p = openPair(P7);
  t.teardown(() => p.nic.close());
  const bar2 = emuOf(p.nic).bar(2);
  const before = engineCounters(p.nic);
  // bnxt_hsi.h dbc_dbc: lo = index | epoch << 24; hi = xid | valid (bit 26) | path ROCE (0) | type << 28.
  const hi = (xid: number, type: number) => (xid | (1 << 26) | (type << 28)) >>> 0;
  const d = driverQpOf(p.a) as unknown as { qpn: number; scq: { id: number } };
  const NQ_AT = 66 * 1024; // legacy_l2_db_size_kb x 1024 (this model's 66 KiB)
  const DPI_AT = 68 * 1024; // the same, page aligned
  bar2.doorbell64(NQ_AT, 0, hi(d.qpn, 0x0)); // DBC_DBC_TYPE_SQ
  bar2.doorbell64(NQ_AT, 0, hi(d.scq.id, 0x4)); // DBC_DBC_TYPE_CQ
  bar2.doorbell64(DPI_AT, 0, hi(1, 0xa)); // DBC_DBC_TYPE_NQ
  const after = engineCounters(p.nic);
  t.equal(after['doorbellsWrongBase']! - before['doorbellsWrongBase']!, 3, 'all three refused');
  t.equal(after['doorbellsRejected']! - before['doorbellsRejected']!, 3);
  // The queue pair is untouched: it still sends.
  p.b.receive(p.rb, 0, 64);
  p.a.send(p.ra, 0, 64);
  t.same(p.a.wait('send', 1_000_000), { ok: true, value: 64 });
});

t.test('the P5 stays one option away: static WQEs, context memory V1', async (t) => {
  const nic = Nic.open('emu', { stepped: true, chip: 'BCM57508' });
  if (!nic.ok) throw new Error(nic.error);
  t.teardown(() => nic.value.close());
  t.match(nic.value.info, { chip: 'BCM57508', chipFamily: 'P5' });
});
