/**
 * What the requester does after an ACK timeout (completer.ts errorRetry; docs/hardware.md,
 * "After an ACK timeout"). IBA 9.7.6.1 fixes where a retransmission starts (the oldest
 * unacknowledged PSN) and when (a timeout or a NAK); these tests hold the model to that and to
 * the pacing it chose where the spec is silent:
 *   - the timer after a resend runs from when the resent packet left;
 *   - a responder that is only late (its ACKs come after the timeout) gets the oldest packet
 *     again, not the whole window, and sending goes on after the originals once their ACKs come;
 *   - packets really lost at the tail are all resent, one per ACK, with no second timeout.
 */
import t from 'tap';
import { ACCESS_MR, REQ, RES, TestNic, liveClockOf, pattern } from './helpers/emu-engine-harness.ts';
import { Opcode } from '../drivers/emu/model/wire/index.ts';
import { ackTimeoutNs } from '../drivers/emu/model/engine/timers.ts';

const MTU = 1024;
/** Timeout code 8: 1.049 ms (4.096 us x 2^8). */
const TIMEOUT = 8;
const us = (ns: number): string => (ns / 1e3).toFixed(1);

t.test('after a timeout the ACK timer runs from when the resent packet left, not when the retry began', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  // The live clock runs `late` ns after the run's clock; the first resend leaves 100 us after
  // the run that decided it began (a slow run on a loaded machine), later frames at once.
  let late = 0;
  nic.model.bus.liveClock = liveClockOf(() => nic.nowNs + late);
  const sends: number[] = [];
  nic.model.controls.engine.onTransmit((frame) => {
    // BTH opcode at byte 42 (Ethernet 14 + IPv4 20 + UDP 8).
    if (frame[42] !== Opcode.RC_SEND_ONLY) return;
    late = sends.length === 1 ? 100_000 : 0;
    sends.push(nic.model.bus.liveNow());
  });
  const [a, b] = nic.pair({ mtu: MTU, timeout: TIMEOUT });
  const src = nic.alloc(64);
  src.bytes.set(pattern(64, 1));
  const dst = nic.alloc(64);
  b.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size: 64 }]);
  // The first transmission and the first resend are lost.
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_ONLY, -1, 2);
  a.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size: 64 }] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1, 1e9), 'the second resend completes it');
  t.equal(sends.length, 3, 'sent, lost, resent, lost, resent');
  const gap = sends[2]! - sends[1]!;
  const timeout = ackTimeoutNs(TIMEOUT);
  t.ok(gap >= timeout, `the second resend left ${us(gap)} us after the first; the timeout is ${us(timeout)} us`);
  t.equal(nic.counters()['ackTimeouts'], 2);
  t.same(a.scq.pollAll().map((c) => c.status), [REQ.OK]);
  t.same(b.rcq.pollAll().map((c) => c.status), [RES.OK]);
  t.same(dst.bytes.subarray(0, 64), pattern(64, 1));
});

t.test('a responder whose ACKs come after the timeout gets the oldest packet again, not the window', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  // Every frame takes 0.7 ms on the wire: a round trip of 1.4 ms against a 1.05 ms timeout.
  nic.model.controls.engine.setFaults('tx', { delayNs: 700_000 });
  const [a, b] = nic.pair({ mtu: MTU, timeout: TIMEOUT });
  const SIZE = 2 * MTU;
  const MESSAGES = 4;
  const src = nic.alloc(SIZE * MESSAGES);
  for (let i = 0; i < MESSAGES; i++) src.bytes.set(pattern(SIZE, 10 + i), i * SIZE);
  const dst = nic.alloc(SIZE * MESSAGES);
  const srcKey = nic.mr(src, 0).key;
  const dstKey = nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key;
  for (let i = 0; i < MESSAGES; i++) b.recv([{ va: dst.iova + i * SIZE, lkey: dstKey, size: SIZE }]);
  for (let i = 0; i < MESSAGES; i++) a.post({ sges: [{ va: src.iova + i * SIZE, lkey: srcKey, size: SIZE }] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === MESSAGES && b.rcq.cq.producer === MESSAGES, 1e9), 'all complete');
  nic.runFor(5e6);
  const c = nic.counters();
  t.equal(c['ackTimeouts'], 1, 'one timeout: the first ACK came 1.4 ms after the window left');
  t.equal(c['packetsSent'], 2 * MESSAGES + 1, 'the window once, and the oldest packet again');
  t.equal(c['packetsRetransmitted'], 1, 'the originals\' ACKs stopped the resend after one packet (the window is 8)');
  t.same(a.scq.pollAll().map((x) => x.status), Array(MESSAGES).fill(REQ.OK));
  t.same(b.rcq.pollAll().map((x) => x.status), Array(MESSAGES).fill(RES.OK), 'each message received once');
  for (let i = 0; i < MESSAGES; i++) {
    t.same(dst.bytes.subarray(i * SIZE, (i + 1) * SIZE), pattern(SIZE, 10 + i), `message ${i} intact`);
  }
  t.equal(b.rcq.pollAll().length, 0, 'nothing delivered twice');
});

t.test('packets lost at the tail are resent after one timeout, each once the one before is acknowledged', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, timeout: TIMEOUT });
  const SIZE = 256;
  const MESSAGES = 6;
  const src = nic.alloc(SIZE * MESSAGES);
  for (let i = 0; i < MESSAGES; i++) src.bytes.set(pattern(SIZE, 20 + i), i * SIZE);
  const dst = nic.alloc(SIZE * MESSAGES);
  const srcKey = nic.mr(src, 0).key;
  const dstKey = nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key;
  for (let i = 0; i < MESSAGES; i++) b.recv([{ va: dst.iova + i * SIZE, lkey: dstKey, size: SIZE }]);
  const post = (i: number) => a.post({ sges: [{ va: src.iova + i * SIZE, lkey: srcKey, size: SIZE }] });
  post(0);
  post(1);
  t.ok(nic.runUntil(() => a.scq.cq.producer === 2, 1e9));
  // The last four go out together and are all lost: no later packet tells the responder, so
  // only the timer can.
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_SEND_ONLY, -1, 4);
  for (let i = 2; i < MESSAGES; i++) post(i);
  t.ok(nic.runUntil(() => a.scq.cq.producer === MESSAGES && b.rcq.cq.producer === MESSAGES, 1e9), 'all complete');
  const c = nic.counters();
  t.equal(c['ackTimeouts'], 1, 'one timeout');
  t.equal(c['packetsRetransmitted'], 4, 'each lost packet resent once');
  t.equal(c['seqNaksReceived'], 0, 'the responder never saw a gap');
  t.same(a.scq.pollAll().map((x) => x.status), Array(MESSAGES).fill(REQ.OK));
  t.same(b.rcq.pollAll().map((x) => x.status), Array(MESSAGES).fill(RES.OK));
  for (let i = 0; i < MESSAGES; i++) {
    t.same(dst.bytes.subarray(i * SIZE, (i + 1) * SIZE), pattern(SIZE, 20 + i), `message ${i} intact`);
  }
});
