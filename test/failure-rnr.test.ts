// Issue 5, failure rule 5: a send while the peer has posted no receive is retried without end
// (RNR NAKs, rnr_retry 7): tested for several seconds of the NICs' clock, then the receive is
// posted and the send completes, its bytes intact. Two stepped NICs cabled to each other.
import t from 'tap';
import { openTwoNics, connectedPair, region, counters, controls, emuOf, pass, okBytes } from './failure-setup.ts';
import { fillPattern, firstDifference } from './helpers/qp-data.ts';

const SECONDS = 4;

t.test(`rule 5: a send to a peer with no receive posted is retried for ${SECONDS} s without failing, then completes ` +
  `once the receive comes`, async (t) => {
  const [nicA, nicB] = openTwoNics(51);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  fillPattern(ra.bytes, 0, 1000, 5);
  a.send(ra, 0, 1000);
  a.send(ra, 5000, 10);
  let naks = counters(nicB)['rnrNaksSent']!;
  for (let s = 1; s <= SECONDS; s++) {
    pass(nicA, 1_000_000);
    const now = counters(nicB)['rnrNaksSent']!;
    t.ok(now > naks, `second ${s}: the peer still answers "not ready" (${now} RNR NAKs so far)`);
    naks = now;
    t.equal(a.poll('send'), undefined, `second ${s}: the send has no completion`);
    t.equal(a.failure, undefined, `second ${s}: the queue pair has not failed`);
  }
  const c = counters(nicA);
  t.equal(c['rnrNaksReceived'], counters(nicB)['rnrNaksSent'], 'every RNR NAK reached the sender');
  t.equal(c['ackTimeouts'], 0, 'no retry of the 7 was spent: RNR retries are not counted');
  b.receive(rb, 0, 8192);
  t.same(a.wait('send', 1_000_000), okBytes(1000), 'once the receive is posted, the send completes');
  t.same(b.wait('receive', 1_000_000), okBytes(1000), 'the receive took the message');
  t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, 1000), -1, 'its bytes intact');
  t.equal(a.poll('send'), undefined, 'the next send waits for its own receive');
  b.receive(rb, 8192, 100);
  t.same(a.wait('send', 1_000_000), okBytes(10));
  t.same(b.wait('receive', 1_000_000), okBytes(10));
});

// Issue 15 item 3. The same rule when resends are lost on the way (a UDP cable under load loses
// frames): each lost resend costs one ACK timeout (67 ms), but the peer's next RNR NAK is an
// answer, so the 7 retries those timeouts spend are given back; ten lost resends, more
// than the 7 retries, and the send still waits, then completes. One stepped pair, faults
// placed by PSN: deterministic.
const MiB4 = 4 << 20;
const RC_SEND_FIRST = 0x00; // IBA Table 35 (BTH opcode, RC): SEND First
const RNR_TIMER_NS = 10_000; // the driver's min_rnr_timer code 1: 0.01 ms (IBA Table 45)

t.test('rule 5 on a lossy cable: resends lost while the peer has no receive spend no retries for good; the 4 MiB ' +
  'send waits on and completes', async (t) => {
  const [nicA, nicB] = openTwoNics(61);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, MiB4);
  const rb = region(nicB, MiB4);
  fillPattern(ra.bytes, 0, MiB4, 9);
  a.send(ra, 0, MiB4);
  pass(nicA, 50_000);
  t.ok(counters(nicB)['rnrNaksSent']! > 0, 'the peer answers "not ready"');
  const firstPsn = a.endpoint.psn;
  const LOST = 10;
  for (let i = 1; i <= LOST; i++) {
    const before = counters(nicA);
    // The next resend of the send's first packet is lost; the one after the timeout gets through.
    controls(nicA).engine.dropFrames('tx', RC_SEND_FIRST, firstPsn, 1);
    pass(nicA, 100_000);
    const after = counters(nicA);
    t.equal(after['ackTimeouts']! - before['ackTimeouts']!, 1, `lost resend ${i}: one ACK timeout`);
    t.ok(after['rnrNaksReceived']! > before['rnrNaksReceived']!,
      `lost resend ${i}: then the peer answers "not ready" again`);
    t.equal(a.poll('send'), undefined, `lost resend ${i}: the send has no completion`);
    t.equal(a.failure, undefined, `lost resend ${i}: the queue pair has not failed (${LOST} > 7 retries)`);
  }
  t.equal(counters(nicA)['ackTimeouts'], LOST, `${LOST} timeouts in all, each given back by the RNR NAK after it`);
  b.receive(rb, 0, MiB4);
  t.same(a.wait('send', 5_000_000), okBytes(MiB4), 'once the receive is posted, the send completes');
  t.same(b.wait('receive', 5_000_000), okBytes(MiB4), 'the receive took the whole message');
  t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, MiB4), -1, 'its bytes intact');
  t.equal(counters(nicA)['ackTimeouts'], LOST, 'no timeout after the receive came: the resend asked for its ACK');
});

t.test('rule 5, paced: while the peer has no receive, a 4 MiB send resends one packet per RNR NAK, at most one per ' +
  'RNR timer', async (t) => {
  const [nicA, nicB] = openTwoNics(71);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, MiB4);
  const rb = region(nicB, MiB4);
  fillPattern(ra.bytes, 0, MiB4, 3);
  a.send(ra, 0, MiB4);
  pass(nicA, 10_000);
  const clock = emuOf(nicA).clock;
  const before = counters(nicA);
  const nakedBefore = counters(nicB)['rnrNaksSent']!;
  const startNs = clock.nowNs();
  pass(nicA, 1_000_000);
  const elapsedNs = clock.nowNs() - startNs;
  const after = counters(nicA);
  const sent = after['packetsSent']! - before['packetsSent']!;
  const naks = counters(nicB)['rnrNaksSent']! - nakedBefore;
  t.ok(naks > 1000, `the peer keeps answering "not ready" (${naks} RNR NAKs in 1 s of NIC time)`);
  t.ok(naks <= elapsedNs / RNR_TIMER_NS,
    `no more than one resend per RNR timer of 0.01 ms (${naks} in ${elapsedNs / 1e6} ms)`);
  t.ok(sent <= naks + 1, `one packet per RNR NAK, not a window of them (${sent} packets for ${naks} NAKs)`);
  t.equal(after['ackTimeouts'], 0, 'no ACK timeout');
  b.receive(rb, 0, MiB4);
  t.same(a.wait('send', 5_000_000), okBytes(MiB4), 'the send completes once the receive is posted');
  t.same(b.wait('receive', 5_000_000), okBytes(MiB4));
  t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, MiB4), -1, 'its bytes intact');
});
