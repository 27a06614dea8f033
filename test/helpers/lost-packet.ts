/**
 * One scenario both chips' MSN-table tests run (test/thor2.test.ts on P7, test/qp-msn-table.test.ts
 * on P5's personalities): a 3000-byte SEND at MTU 1024 (FIRST, MIDDLE, LAST) whose MIDDLE the
 * model's port loses once, so the requester must go back to the MIDDLE's PSN and resend it (IBA
 * 9.7.5.1: go-back-N after a sequence error NAK or a timeout). What must hold on any chip and
 * firmware: the send and the receive succeed, the receiver has the bytes sent, and exactly one
 * frame was lost. The caller checks where the resend came from (the MSN table or the engine's
 * own record): the engine's counters are returned for it.
 */
import type { Test } from 'tap';
import type { NicOptions } from '../../lib/index.ts';
import type { EngineCounterReport } from '../../drivers/emu/model/engine/engine-controls.ts';
import { emuOf, engineCounters, fillPattern, firstDifference, openPair } from './qp-data.ts';

const RC_SEND_MIDDLE = 0x01; // IBA Table 35 (BTH opcode, RC)
const MESSAGE_BYTES = 3000;
const PATH_MTU = 1024;

export function lostMiddleIsResent(t: Test, options: NicOptions): EngineCounterReport {
  const p = openPair(options, 1 << 20, PATH_MTU);
  try {
    fillPattern(p.ra.bytes, 0, MESSAGE_BYTES, 5);
    const psn = p.a.endpoint.psn;
    emuOf(p.nic).emu.engine.dropFrames('tx', RC_SEND_MIDDLE, psn + 1, 1);
    p.b.receive(p.rb, 0, 4096);
    p.a.send(p.ra, 0, MESSAGE_BYTES);
    t.same(p.a.wait('send', 5_000_000), { ok: true, value: MESSAGE_BYTES }, 'the send completes');
    t.same(p.b.wait('receive', 5_000_000), { ok: true, value: MESSAGE_BYTES }, 'the receive completes');
    t.equal(firstDifference(p.rb.bytes, 0, p.ra.bytes, 0, MESSAGE_BYTES), -1, 'bytes intact');
    const c = engineCounters(p.nic);
    t.equal(c['faultTxDropped'], 1, 'the MIDDLE was lost once');
    return c;
  } finally {
    p.nic.close();
  }
}
