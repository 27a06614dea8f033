// Issue 12 item 3: the MSN table. Where QUERY_FUNC's dev_cap_ext_flags_2 names the host MSN
// table (REQ_RETRANSMISSION_SUPPORT HOST_MSN_TABLE, qplib_res.h _is_host_msn_table: the
// `current-msn` firmware) the driver writes, for each WQE it posts, the 8-byte roce_hsi.h
// sq_msn_search entry (start PSN bits 0-23, next PSN 24-47, start slot 48-63) after the SQ's
// 4096 x 128-byte WQEs, instead of the 16-byte sq_psn_search_ext (Linux qplib_fp.c
// bnxt_qplib_fill_psn_search -> bnxt_qplib_fill_msn_search); the software NIC retransmits from
// it, on the P5 layout (test/thor2.test.ts has P7's). Hardware retransmission with
// HOST_PSN_TABLE (`current`, what the real bnxt_re was run against) keeps PSN search, as the
// kernel does. Expected bytes are written out by hand from those bit positions.
import t from 'tap';
import type { NicOptions } from '../lib/index.ts';
import { driverQpOf } from '../lib/qp.ts';
import type { DmaBuffer } from '../drivers/device.ts';
import { emuOf, engineCounters, fillPattern, firstDifference, openPair } from './helpers/qp-data.ts';
import { lostMiddleIsResent } from './helpers/lost-packet.ts';

const AUX_AT = 4096 * 128; // the table (or PSN search) starts after the SQ's WQEs
const RC_SEND_MIDDLE = 0x01; // IBA Table 35 (BTH opcode, RC)

function sqOf(q: Parameters<typeof driverQpOf>[0]): DmaBuffer {
  return (driverQpOf(q) as unknown as { sq: { buffer: DmaBuffer } }).sq.buffer;
}

const le24 = (v: number) => [v & 0xff, (v >> 8) & 0xff, (v >> 16) & 0xff];

for (const firmware of ['current-msn', 'current', 'p5-legacy'] as const) {
  t.test(`${firmware}: the entry the driver writes for each WQE`, async (t) => {
    const p = openPair({ stepped: true, firmware, chip: 'BCM57508' } as NicOptions, 1 << 20, 1024);
    t.teardown(() => p.nic.close());
    const psn = p.a.endpoint.psn;
    p.b.receive(p.rb, 0, 4096);
    p.b.receive(p.rb, 4096, 4096);
    p.a.send(p.ra, 0, 1000); // one packet
    p.a.send(p.ra, 0, 3000); // three packets
    t.ok(p.a.wait('send', 1_000_000)?.ok && p.a.wait('send', 1_000_000)?.ok, 'both sends complete');
    const sq = sqOf(p.a).bytes;
    if (firmware === 'current-msn') {
      // Entry 0: start psn, next psn + 1, slot 0; entry 1: start psn + 1, next psn + 4, slot 8.
      const e0 = [...le24(psn), ...le24(psn + 1), 0, 0];
      const e1 = [...le24(psn + 1), ...le24(psn + 4), 8, 0];
      t.same([...sq.subarray(AUX_AT, AUX_AT + 16)], [...e0, ...e1], 'sq_msn_search entries 0 and 1');
    } else {
      // sq_psn_search_ext: opcode_start_psn (start 0-23, opcode 24-31 = SEND 0), flags_next_psn
      // (next 0-23), start_slot_idx u16 @8, 6 bytes reserved; 16 bytes per WQE.
      const e1 = [...le24(psn + 1), 0, ...le24(psn + 4), 0, 8, 0, 0, 0, 0, 0, 0, 0];
      t.same([...sq.subarray(AUX_AT + 16, AUX_AT + 32)], e1, 'sq_psn_search_ext entry 1');
    }
  });

  const how = firmware === 'current-msn' ? 'from the MSN table' : "from the engine's own record";
  t.test(`${firmware}: a lost packet is resent ${how}, bytes intact`, async (t) => {
    const c = lostMiddleIsResent(t, { stepped: true, firmware, chip: 'BCM57508' } as NicOptions);
    if (firmware === 'current-msn') t.ok(c['msnRetransmissions']! >= 1, 'the rewind was found in the MSN table');
    else t.equal(c['msnRetransmissions'], 0, 'no MSN table');
  });
}

t.test('current-msn: a driver entry with a wrong start PSN makes the retransmission fail the message', async (t) => {
  const p = openPair({ stepped: true, firmware: 'current-msn', chip: 'BCM57508' } as NicOptions, 1 << 20, 1024);
  t.teardown(() => p.nic.close());
  fillPattern(p.ra.bytes, 0, 3000, 6);
  const psn = p.a.endpoint.psn;
  emuOf(p.nic).emu.engine.dropFrames('tx', RC_SEND_MIDDLE, psn + 1, 1);
  p.b.receive(p.rb, 0, 4096);
  p.a.send(p.ra, 0, 3000);
  // Break entry 0's start PSN (one early) before the engine needs it for the resend.
  const sq = sqOf(p.a).bytes;
  sq.set(le24(psn - 1), AUX_AT);
  const sent = p.a.wait('send', 5_000_000);
  const got = p.b.wait('receive', 5_000_000);
  const intact = sent?.ok === true && got?.ok === true && got.value === 3000
    && firstDifference(p.rb.bytes, 0, p.ra.bytes, 0, 3000) === -1;
  t.notOk(intact, 'the message did not arrive as sent');
  t.ok(engineCounters(p.nic)['msnRetransmissions']! >= 1, 'the engine resent from the entry');
});
