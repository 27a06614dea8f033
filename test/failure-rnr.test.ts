// Issue 5, failure rule 5: a send while the peer has posted no receive is retried without end
// (RNR NAKs, rnr_retry 7): tested for several seconds of the NICs' clock, then the receive is
// posted and the send completes, its bytes intact. Two stepped NICs cabled to each other.
import t from 'tap';
import { openTwoNics, connectedPair, region, counters, pass, okBytes } from './failure-setup.ts';
import { fillPattern, firstDifference } from './helpers/qp-data.ts';

const SECONDS = 4;

t.test(`rule 5: a send to a peer with no receive posted is retried for ${SECONDS} s without failing, then completes once the receive comes`, async (t) => {
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
