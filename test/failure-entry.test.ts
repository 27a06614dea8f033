// Issue 5, failure rules 1, 6 and 7 (Rig_bnxt.Qp, first two paragraphs): an entry that fails
// fails its queue pair; a send longer than its receive fails both queue pairs; a failed queue
// pair stays failed. Stepped software NICs, through the public API.
import t from 'tap';
import { InvalidArgument } from '../lib/index.ts';
import {
  openNic, openTwoNics, connectedPair, region, counters, transport, pollAll, waitAll, okBytes, error, pass, hw, must,
} from './failure-setup.ts';

const LOCAL_PROTECTION =
  'local protection error: the region is not registered or the bytes lie outside it (LOCAL_PROTECTION_ERR)';
const REMOTE_INVALID =
  'the peer refused the request as invalid (e.g. a send longer than its receive) (REMOTE_INVALID_REQUEST_ERR)';
const TOO_LONG = 'the message is longer than the receive (LOCAL_LENGTH_ERR)';

t.test('rule 1: an entry that fails (error CQE) fails the QP; earlier entries keep their result, later ones of both ' +
  'rings complete with its error, in order', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [a, b] = connectedPair(nic);
  const ra = region(nic, 1 << 16);
  const rb = region(nic, 1 << 16);
  const doomed = region(nic, 4096);
  for (let i = 0; i < 4; i++) b.receive(rb, i * 4096, 4096);
  a.receive(ra, 32768, 100);
  a.receive(ra, 32868, 100);
  a.send(ra, 0, 100);
  a.send(ra, 100, 200);
  a.send(doomed, 0, 300); // its region goes before the NIC reads it: a local protection error
  a.send(ra, 300, 400);
  a.read(rb, 0, ra, 1024, 500);
  must(doomed.deregister(), 'deregister');
  pass(nic, 1000);

  // Nothing was taken before the failure: the driver reads it all now, in order.
  t.same(pollAll(a, 'send'), [
    okBytes(100), okBytes(200), error(LOCAL_PROTECTION), error(LOCAL_PROTECTION), error(LOCAL_PROTECTION),
  ],
    'send ring: two Ok, the failed entry with its error, then the rest with the failure\'s error');
  t.same(pollAll(a, 'receive'), [error(LOCAL_PROTECTION), error(LOCAL_PROTECTION)],
    'receive ring: every entry with the failure\'s error');
  t.equal(a.failure, LOCAL_PROTECTION, 'the queue pair has failed, with the failed entry\'s error');
  // Entries posted later complete with the failure's error too, on both rings, in order.
  a.send(ra, 0, 10);
  a.receive(ra, 0, 10);
  a.read(rb, 0, ra, 0, 10);
  t.same(waitAll(a, 'send', 2), [error(LOCAL_PROTECTION), error(LOCAL_PROTECTION)], 'a send and a read posted later');
  t.same(waitAll(a, 'receive', 1), [error(LOCAL_PROTECTION)], 'a receive posted later');
  t.equal(a.room('send'), 4095, 'every send slot is free again');
  t.equal(a.room('receive'), 4095, 'every receive slot is free again');
  // The peer is unharmed: it took the two sends that ran, and its queue pair has not failed.
  t.same(pollAll(b, 'receive'), [okBytes(100), okBytes(200)], 'the peer received the two sends before the failure');
  t.equal(b.failure, undefined, 'the peer has not failed');
  t.same(rb.bytes.subarray(0, 100), ra.bytes.subarray(0, 100));
  t.equal(counters(nic)['internalErrors'], 0);
});

t.test('rule 1: the driver reads the failure the same whether it polls before or after the NIC flushed, and from ' +
  'either ring first', async (t) => {
  for (const first of ['send', 'receive'] as const) {
    const nic = openNic();
    const [a, b] = connectedPair(nic);
    const ra = region(nic, 1 << 16);
    const doomed = region(nic, 4096);
    a.receive(ra, 8192, 64);
    b.receive(ra, 16384, 4096);
    a.send(ra, 0, 64);
    t.same(a.wait('send', 1e6), okBytes(64), `${first}: the first send completed and was taken`);
    a.send(doomed, 0, 64);
    a.send(ra, 64, 64);
    must(doomed.deregister(), 'deregister');
    pass(nic, 1000);
    if (first === 'receive')
      t.same(pollAll(a, 'receive'), [error(LOCAL_PROTECTION)],
        'receive first: the flushed receive already carries the failure\'s error');
    t.same(pollAll(a, 'send'), [error(LOCAL_PROTECTION), error(LOCAL_PROTECTION)],
      `${first}: the failed send carries its error, the next one too`);
    if (first === 'send') t.same(pollAll(a, 'receive'), [error(LOCAL_PROTECTION)], 'then the receive');
    t.equal(a.failure, LOCAL_PROTECTION);
    void b;
    nic.close();
  }
});

t.test('rule 6: a send longer than the receive it lands in fails the queue pair and its peer\'s (peer on another ' +
  'NIC)', async (t) => {
  const [nicA, nicB] = openTwoNics(61);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  for (let i = 0; i < 4; i++) ra.bytes[i * 1000] = i + 1;
  b.receive(rb, 0, 1000);
  b.receive(rb, 1000, 1000); // 1001 bytes will arrive
  b.receive(rb, 2000, 1000);
  b.send(rb, 8192, 50); // b's own send, queued behind nothing: it completes or is flushed in order
  a.receive(ra, 30000, 100);
  a.send(ra, 0, 1000);
  a.send(ra, 1000, 1001);
  a.send(ra, 3000, 10);
  const sends = waitAll(a, 'send', 3);
  t.same(sends, [okBytes(1000), error(REMOTE_INVALID), error(REMOTE_INVALID)],
    'sender: Ok, the long send fails with the peer\'s refusal, the next with the failure\'s error');
  const receives = waitAll(b, 'receive', 3);
  t.same(receives, [okBytes(1000), error(TOO_LONG), error(TOO_LONG)],
    'receiver: Ok, the receive it landed in fails, the next with the failure\'s error');
  t.equal(a.failure, REMOTE_INVALID, 'the sender\'s queue pair has failed');
  t.equal(b.failure, TOO_LONG, 'the receiver\'s queue pair has failed');
  // Both rings of both queue pairs: a's receive (b's send was received before or flushed).
  const aReceive = a.wait('receive', 1e6);
  const bSend = b.wait('send', 1e6);
  t.ok(aReceive !== undefined && bSend !== undefined, 'every entry of both rings completes');
  if (bSend && bSend.ok) t.same(aReceive, okBytes(50), 'b\'s send completed before the failure, and a took it');
  else t.same([aReceive, bSend], [error(REMOTE_INVALID), error(TOO_LONG)],
    'or both complete with their queue pair\'s failure');
  t.same(rb.bytes[0], 1, 'the first message landed');
});

t.test('rule 7: a failed queue pair stays failed; every entry posted on it completes with the failure\'s error; room ' +
  'stays consistent over ring wraps', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [a, b] = connectedPair(nic);
  const r = region(nic, 1 << 16);
  b.receive(r, 0, 10);
  a.send(r, 0, 11);
  t.same(a.wait('send', 1e6), error(REMOTE_INVALID));
  const failure = a.failure;
  t.equal(failure, REMOTE_INVALID);
  const sent = counters(nic)['packetsSent'];
  const before = transport(nic, a.number);
  // Three laps of each ring (past index 4095 three times), in batches of every size up to full.
  let posted = 0;
  for (const batch of [1, 7, 4095, 4095, 3000, 4095]) {
    for (let i = 0; i < batch; i++) {
      if (i % 3 === 2) a.read(r, 0, r, 100, 10);
      else a.send(r, 0, i);
      a.receive(r, 0, 10);
    }
    posted += batch;
    t.equal(a.room('send'), 4095 - batch, `after posting ${batch}: send room ${4095 - batch}`);
    t.equal(a.room('receive'), 4095 - batch, `after posting ${batch}: receive room ${4095 - batch}`);
    if (batch === 4095) {
      t.throws(() => a.send(r, 0, 1), InvalidArgument, 'a full ring of a failed queue pair still refuses a post');
      t.throws(() => a.receive(r, 0, 1), InvalidArgument);
    }
    const sends = pollAll(a, 'send', 5000);
    const receives = pollAll(a, 'receive', 5000);
    t.equal(sends.length, batch, `every send of the batch of ${batch} completes`);
    t.equal(receives.length, batch, `every receive of the batch of ${batch} completes`);
    t.ok(sends.every((x) => !x.ok && x.error === failure) && receives.every((x) => !x.ok && x.error === failure),
      'each with the failure\'s error');
    t.equal(a.poll('send'), undefined, 'then none is due');
    t.equal(a.room('send'), 4095);
    t.equal(a.room('receive'), 4095);
  }
  t.equal(a.failure, failure, 'still failed, with the same error');
  t.equal(counters(nic)['packetsSent'], sent, `the NIC ran none of the ${posted} entries posted after the failure`);
  const after = transport(nic, a.number);
  t.same([after.sqProducer, after.rqProducer], [before.sqProducer, before.rqProducer], 'nor did it hear of them');
  t.throws(() => a.connect(b.endpoint), InvalidArgument,
    'a failed queue pair is still connected: it cannot connect again');
  t.equal(hw(a).due(0), 0);
});
