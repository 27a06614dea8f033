// Issue 5, failure rule 2: the NIC reports a queue pair's failure (a QP error notification on
// the CREQ, injected in the model). Same outcome as a failed entry, read by poll and wait
// without any firmware request: the driver reads the CREQ from memory.
import t from 'tap';
import { ReqErrStateReason, ResErrStateReason } from '../firmware-hwrm/roce/creq.ts';
import {
  openNic, openTwoNics, connectedPair, region, controls, counters, pollAll, okBytes, error, pass, requestCount, emuOf,
} from './failure-setup.ts';

const REPORTED = 'the NIC reported the QP failed (requester: REQ_TIMEOUT_RETRY_LIMIT, responder: RES_EXCEEDS_WQE)';

t.test('rule 2: a QP error notification fails the queue pair: completed entries keep their result, every other entry ' +
  'of both rings fails with the report, and no request is sent', async (t) => {
  const [nicA, nicB] = openTwoNics(21);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  b.receive(rb, 0, 4096);
  b.receive(rb, 4096, 4096);
  a.receive(ra, 8192, 4096);
  a.receive(ra, 12288, 4096);
  b.send(rb, 100, 10); // lands in a's first receive
  a.send(ra, 0, 100);
  a.send(ra, 100, 200);
  a.send(ra, 300, 300); // b has no receive left: retried (RNR) until the failure
  a.send(ra, 600, 400);
  pass(nicA, 2000);
  t.ok(counters(nicA)['rnrNaksReceived']! > 0, 'the third send is being retried');
  const before = requestCount(nicA);
  t.equal(
    controls(nicA)
      .roce.injectQpError(a.number, ReqErrStateReason.REQ_TIMEOUT_RETRY_LIMIT, ResErrStateReason.RES_EXCEEDS_WQE),
    true, 'the NIC reports the failure',
  );
  const reported = requestCount(nicA);
  t.same(pollAll(a, 'send'), [okBytes(100), okBytes(200), error(REPORTED), error(REPORTED)],
    'send ring: the two the NIC completed keep their result, the rest fail with the report, in order');
  t.same(pollAll(a, 'receive'), [okBytes(10), error(REPORTED)],
    'receive ring: the one that took a message keeps it, the other fails');
  a.send(ra, 0, 1);
  a.receive(ra, 0, 1);
  t.same(a.wait('send', 1e6), error(REPORTED), 'an entry posted later fails with the report (wait)');
  t.same(a.wait('receive', 1e6), error(REPORTED));
  t.equal(a.failure, REPORTED);
  t.same(requestCount(nicA), reported,
    'poll and wait sent the firmware no request (RoCE or HWRM) and it took no command');
  t.same([reported.roce, reported.hwrm], [before.roce, before.hwrm], 'nor did the report itself come from a request');
  t.same(pollAll(b, 'receive'), [okBytes(100), okBytes(200)], 'the peer took the two sends that completed');
});

t.test('rule 2: read before the NIC flushed (poll finds the report on the CREQ) or after (flushed CQEs): the same ' +
  'errors', async (t) => {
  for (const how of ['poll at once', 'after the NIC flushed'] as const) {
    const nic = openNic();
    const [a, b] = connectedPair(nic);
    const r = region(nic, 1 << 16);
    a.receive(r, 0, 100);
    a.send(r, 1000, 50); // b posted no receive: retried until the failure
    a.send(r, 2000, 60);
    pass(nic, 1000);
    const before = requestCount(nic);
    controls(nic)
      .roce.injectQpError(a.number, ReqErrStateReason.REQ_TIMEOUT_RETRY_LIMIT, ResErrStateReason.RES_EXCEEDS_WQE);
    // Read without running the model: poll does not run it, so it has written no CQE yet.
    const cqes = () => emuOf(nic).emu.engine.counters()['cqesWritten'];
    const written = cqes();
    if (how === 'after the NIC flushed') pass(nic, 100);
    const flushed = cqes()! - written!;
    const results = [...pollAll(a, 'send'), ...pollAll(a, 'receive')];
    t.same(results, [error(REPORTED), error(REPORTED), error(REPORTED)], `${how}: every entry fails with the report`);
    if (how === 'poll at once') t.equal(flushed, 0, 'poll found no CQE: it read the report on the CREQ');
    else t.equal(flushed, 3,
      'the NIC had written a flushed CQE for each entry: the driver took the report\'s error for them');
    t.same(requestCount(nic), before, `${how}: no request`);
    void b;
    nic.close();
  }
});
