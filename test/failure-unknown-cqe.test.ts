// Issue 5, failure rule 3: a completion of a kind its ring does not take (a responder CQE on
// the send CQ, a requester CQE on the receive CQ, a CQE of an unknown type; injected by the
// model) fails the queue pair. The NIC may go on running its entries until destroy; the
// driver stays consistent while it does, and after destroy returns the NIC writes nothing.
import t from 'tap';
import { CqeType } from '../firmware-hwrm/roce/cqe.ts';
import { CQ_BASE_CQE_TYPE_SHIFT as CQE_TYPE_SHIFT } from '../firmware-hwrm/roce/cqe.g.ts';
import {
  openNic, openTwoNics, connectedPair, region, controls, counters, pollAll, waitAll, okBytes, error, pass, hw,
  ringMemory, overlaps, must,
} from './failure-setup.ts';

/** A CQE's 8 words with only its type set (the model writes the toggle). */
function cqeOfType(type: number): number[] {
  const w = [0, 0, 0, 0, 0, 0, 0, 0];
  w[6] = (type << CQE_TYPE_SHIFT) >>> 0;
  return w;
}

const KINDS = [
  { name: 'a responder CQE on the send CQ', side: 'send', type: CqeType.RES_RC, label: 'RES_RC' },
  { name: 'a requester CQE on the receive CQ', side: 'receive', type: CqeType.REQ, label: 'REQ' },
  { name: 'a CQE of type 7 (undefined) on the send CQ', side: 'send', type: 7, label: 'UNKNOWN(0x7)' },
  { name: 'a TERMINAL CQE on the receive CQ', side: 'receive', type: CqeType.TERMINAL, label: 'TERMINAL' },
] as const;

for (const kind of KINDS) {
  t.test(`rule 3: ${kind.name} fails the queue pair; completions before it keep their result, ` +
    'the rest fail, in order', async (t) => {
    const nic = openNic();
    t.teardown(() => nic.close());
    const [a, b] = connectedPair(nic);
    const ra = region(nic, 1 << 16);
    const rb = region(nic, 1 << 16);
    const message = `the NIC wrote a completion of a kind the ${kind.side} ring does not take (CQE type ${kind.label})`;
    // Two entries of each ring complete, then the bad completion, then two more complete.
    for (let i = 0; i < 4; i++) {
      b.receive(rb, i * 1024, 1024);
      a.receive(ra, 8192 + i * 1024, 1024);
    }
    for (let i = 0; i < 2; i++) {
      a.send(ra, 0, 10 + i);
      b.send(rb, 4096, 20 + i);
    }
    pass(nic, 1000);
    const cq = kind.side === 'send' ? hw(a).scq : hw(a).rcq;
    t.equal(controls(nic).engine.injectCqe(cq.id, cqeOfType(kind.type)), true, 'the model wrote the bad completion');
    for (let i = 2; i < 4; i++) {
      a.send(ra, 0, 10 + i);
      b.send(rb, 4096, 20 + i);
    }
    pass(nic, 1000);
    const bad = kind.side;
    const good = kind.side === 'send' ? 'receive' : 'send';
    const sizes = bad === 'send' ? [10, 11] : [20, 21];
    t.same(pollAll(a, bad), [okBytes(sizes[0]!), okBytes(sizes[1]!), error(message), error(message)],
      `${bad} ring: the two completed before it keep their result; the entries whose CQEs came after it fail`);
    t.equal(a.failure, message, 'the queue pair has failed, saying why');
    const other = pollAll(a, good);
    const otherSizes = good === 'send' ? [10, 11, 12, 13] : [20, 21, 22, 23];
    t.same(other, otherSizes.map(okBytes),
      `${good} ring: what the NIC completed before the driver saw the failure keeps its result`);
    a.send(ra, 0, 1);
    a.receive(ra, 0, 1);
    t.same([a.wait('send', 1e6), a.wait('receive', 1e6)], [error(message), error(message)],
      'entries posted later fail with the failure\'s error');
    t.equal(a.room('send'), 4095);
    t.equal(a.room('receive'), 4095);
    t.equal(counters(nic)['internalErrors'], 0);
  });
}

t.test('rule 3: the NIC goes on running the failed queue pair\'s entries until destroy; ' +
  'the driver stays consistent; after destroy nothing lands', async (t) => {
  const [nicA, nicB] = openTwoNics(31);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 20);
  const rb = region(nicB, 1 << 20);
  // a has 3000 receives posted; b will send 3000 messages into them, most after a failed.
  for (let i = 0; i < 3000; i++) a.receive(ra, (i % 256) * 4096, 4096);
  for (let i = 0; i < 3000; i++) b.receive(rb, (i % 256) * 4096, 4096);
  for (let i = 0; i < 10; i++) b.send(rb, 0, 100);
  pass(nicA, 1000);
  t.equal(controls(nicA).engine.injectCqe(hw(a).scq.id, cqeOfType(CqeType.RES_RC)), true,
    'a bad completion on a\'s send CQ');
  a.send(ra, 0, 1); // its CQE comes after the bad one: the driver sees the failure here
  t.same(a.wait('send', 1e6),
    error('the NIC wrote a completion of a kind the send ring does not take (CQE type RES_RC)'));
  t.ok(a.failure, 'a has failed');
  const taken = pollAll(a, 'receive');
  t.same(taken.slice(0, 10), Array(10).fill(okBytes(100)), 'the ten receives completed before it keep their result');
  t.equal(taken.length, 3000, 'every other receive is due and completes at once');
  t.ok(taken.slice(10).every((x) => !x.ok && x.error === a.failure), 'with the failure\'s error');
  t.equal(a.room('receive'), 4095);
  // The NIC still runs a: b's sends land in a's (failed) receives, and b sees them acknowledged,
  // while a's driver goes on posting and taking entries that fail.
  for (let i = 0; i < 2990; i++) b.send(rb, 0, 100 + (i % 50));
  let bOk = 0;
  let aTaken = 0;
  for (let round = 0; round < 200 && bOk < 3000; round++) {
    pass(nicA, 100);
    for (const r of pollAll(b, 'send')) if (r.ok) bOk++;
    for (let i = 0; i < 50; i++) a.receive(ra, 0, 64);
    t.equal(a.room('receive'), 4095 - 50, 'a\'s receive room counts the entries still due');
    const later = pollAll(a, 'receive');
    aTaken += later.length;
    if (later.length !== 50 || later.some((x) => x.ok)) t.fail('an entry posted on the failed queue pair did not fail');
    t.equal(a.room('receive'), 4095);
  }
  t.equal(bOk, 3000, 'the NIC ran the failed queue pair\'s receives: b\'s 3000 sends completed Ok');
  t.ok(aTaken > 0, `a posted and took ${aTaken} more entries meanwhile, each an Error`);
  t.equal(b.failure, undefined, 'b has not failed');
  const c = counters(nicA);
  t.equal(c['cqOverflows'], 0, 'a\'s CQs never overflowed: the driver drained what the NIC wrote');
  t.equal(c['internalErrors'], 0);
  // destroy a; from then on the NIC writes no memory for it, though b still sends to it.
  const memory = ringMemory(a);
  const landed: string[] = [];
  controls(nicA).model.onDmaWrite((iova: number, length: number) => {
    const where = `0x${iova.toString(16)}+${length}`;
    for (const m of memory) if (overlaps(iova, length, m.iova, m.length)) landed.push(`${where} in a's rings`);
    if (overlaps(iova, length, ra.vaHi * 2 ** 32 + ra.vaLo, ra.length)) landed.push(`${where} in a's region`);
  });
  for (let i = 0; i < 100; i++) a.receive(ra, 0, 4096); // posted on a failed queue pair: never reach the NIC
  must(a.destroy(), 'destroy a');
  for (let i = 0; i < 4; i++) b.send(rb, 0, 64);
  const r = waitAll(b, 'send', 4, 5e6);
  t.ok(r.every((x) => x !== undefined && !x.ok && /retry exceeded/.test(x.error)),
    'b\'s later sends fail once their retries end');
  t.same(landed, [], 'no DMA write landed in a\'s rings or region after destroy returned');
  t.equal(controls(nicA).engine.dmaWritesAfterDestroy(), 0, 'nor did the engine try one');
  controls(nicA).model.onDmaWrite(undefined);
});
