/**
 * The requester's timers count from when their packet left (IBA 9.7.6.1.3: the local ACK
 * timeout runs from the transmission; Table 45: the RNR NAK's delay from its arrival), not from
 * when the run that sent it began. In real time a run may send for milliseconds, or be
 * descheduled halfway on a loaded machine; here a stepped NIC is given a live clock that reads
 * later than its run's clock while one run sends, and every transmission is timed on that live
 * clock, as the software NIC's own capture stamps it.
 */
import t from 'tap';
import { ACCESS_MR, REQ, RES, TestNic, liveClockOf, pattern } from './helpers/emu-engine-harness.ts';
import { Opcode } from '../drivers/emu/model/wire/index.ts';
import { ackTimeoutNs, rnrDelayNs } from '../drivers/emu/model/engine/timers.ts';

const MTU = 1024;
/** How much later than its run's clock the first run's frames leave. */
const LATE_NS = 400_000;

interface Sent { readonly opcode: number; readonly syndrome: number; readonly atNs: number }

/** A stepped NIC whose live clock runs `late()` ns after its run's clock, and the frames it sends, timed on it. */
function lateNic(late: () => number): { nic: TestNic; sent: Sent[] } {
  const nic = new TestNic();
  nic.model.bus.liveClock = liveClockOf(() => nic.nowNs + late());
  const sent: Sent[] = [];
  nic.model.controls.engine.onTransmit((frame) => {
    // BTH opcode at byte 42 (Ethernet 14 + IPv4 20 + UDP 8); AETH syndrome after the 12-byte BTH.
    sent.push({ opcode: frame[42]!, syndrome: frame[54]!, atNs: nic.model.bus.liveNow() });
  });
  return { nic, sent };
}

t.test('a lost SEND is resent a full ACK timeout after it left, though its run began earlier', async (t) => {
  let late = LATE_NS;
  const { nic, sent } = lateNic(() => late);
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, timeout: 8 });
  const src = nic.alloc(64);
  src.bytes.set(pattern(64, 1));
  const dst = nic.alloc(64);
  b.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size: 64 }]);
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_ONLY, -1, 1);
  a.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size: 64 }] });
  nic.model.runOnce(nic.nowNs);
  // Later runs send at once.
  late = 0;
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1 && b.rcq.cq.producer === 1, 1e9), 'the resend completes it');
  const sends = sent.filter((s) => s.opcode === Opcode.RC_SEND_ONLY);
  t.equal(sends.length, 2, 'sent, lost, sent again');
  const gap = sends[1]!.atNs - sends[0]!.atNs;
  t.ok(gap >= ackTimeoutNs(8),
    `resent ${(gap / 1e3).toFixed(1)} us after it left; the timeout is ${(ackTimeoutNs(8) / 1e3).toFixed(1)} us`);
  t.equal(nic.counters()['ackTimeouts'], 1);
  t.same(a.scq.pollAll().map((c) => c.status), [REQ.OK]);
  t.same(b.rcq.pollAll().map((c) => c.status), [RES.OK]);
  t.same(dst.bytes.subarray(0, 64), pattern(64, 1));
});

t.test('after an RNR NAK the SEND is resent no sooner than the delay the NAK asked for', async (t) => {
  let late = LATE_NS;
  const { nic, sent } = lateNic(() => late);
  t.teardown(() => nic.close());
  // minRnrTimer 14: the responder's RNR NAKs ask for 1.28 ms (IBA Table 45).
  const [a, b] = nic.pair({ mtu: MTU, minRnrTimer: 14 });
  const src = nic.alloc(64);
  src.bytes.set(pattern(64, 2));
  a.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size: 64 }] });
  // No receive yet: the SEND, its RNR NAK and the requester's reaction all happen in this run.
  nic.model.runOnce(nic.nowNs);
  late = 0;
  t.ok(nic.runUntil(() => sent.filter((s) => s.opcode === Opcode.RC_SEND_ONLY).length === 2, 1e9),
    'the SEND is resent');
  const nak = sent.find((s) => s.opcode === Opcode.RC_ACKNOWLEDGE && (s.syndrome >> 5) === 1);
  t.ok(nak !== undefined, 'the responder answered RNR NAK');
  const resend = sent.filter((s) => s.opcode === Opcode.RC_SEND_ONLY)[1]!;
  const gap = resend.atNs - nak!.atNs;
  t.ok(gap >= rnrDelayNs(14),
    `resent ${(gap / 1e3).toFixed(1)} us after the NAK; it asked for ${(rnrDelayNs(14) / 1e3).toFixed(1)} us`);
  const dst = nic.alloc(64);
  b.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size: 64 }]);
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1 && b.rcq.cq.producer === 1, 1e9));
  t.same(a.scq.pollAll().map((c) => c.status), [REQ.OK]);
  t.same(dst.bytes.subarray(0, 64), pattern(64, 2));
});
