// The engine finds a frame's QP by its dest QP number, through a small cache in front of the
// firmware's table (engine.ts onFrame). Whatever the cache holds, frames reach exactly the QP the
// table names: two live QPs whose numbers share a cache slot take turns and each gets its own
// messages; frames for a destroyed QP go nowhere, also once a new QP took its slot.
import t from 'tap';
import { Qp } from '../lib/index.ts';
import {
  openNic, connectedPair, region, counters, controls, okBytes, must, sendOnlyFrame,
} from './failure-setup.ts';
import { fillPattern, firstDifference } from './helpers/qp-data.ts';

const CACHE_SLOTS = 64;

t.test('QPs whose numbers share a cache slot each get their own messages; a destroyed QP gets none', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [a, b] = connectedPair(nic);
  const ra = region(nic, 1 << 16);
  const rb = region(nic, 1 << 16);
  // A frame for b, kept to hand in again once b's number names another QP's cache slot only.
  const toB = sendOnlyFrame(t, nic, [a, b], [ra, rb], 64);
  // QP numbers go round robin: make and destroy until the next one shares b's slot.
  const slot = b.endpoint.qp % CACHE_SLOTS;
  let d: Qp | undefined;
  for (let i = 0; i < 4 * CACHE_SLOTS && d === undefined; i++) {
    const q = must(Qp.make(nic), 'Qp.make');
    if (q.endpoint.qp % CACHE_SLOTS === slot && q.endpoint.qp !== b.endpoint.qp) d = q;
    else must(q.destroy(), 'destroy');
  }
  if (d === undefined) throw new Error(`no QP number in b's cache slot ${slot}`);
  const c = must(Qp.make(nic), 'Qp.make c');
  must(c.connect(d.endpoint), 'connect c');
  must(d.connect(c.endpoint), 'connect d');
  t.not(d.endpoint.qp, b.endpoint.qp, `b (${b.endpoint.qp}) and d (${d.endpoint.qp}) share cache slot ${slot}`);
  const rc = region(nic, 1 << 16);
  const rd = region(nic, 1 << 16);
  for (let i = 0; i < 8; i++) {
    const n = 100 + i;
    fillPattern(ra.bytes, 0, n, 2 * i);
    fillPattern(rc.bytes, 0, n, 2 * i + 1);
    b.receive(rb, 0, n);
    d.receive(rd, 0, n);
    a.send(ra, 0, n);
    c.send(rc, 0, n);
    t.same(b.wait('receive', 1_000_000), okBytes(n), `b received message ${i}`);
    t.same(d.wait('receive', 1_000_000), okBytes(n), `d received message ${i}`);
    t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, n), -1, `b has a's bytes (${i})`);
    t.equal(firstDifference(rd.bytes, 0, rc.bytes, 0, n), -1, `d has c's bytes (${i})`);
    t.same(a.wait('send', 1_000_000), okBytes(n), `a sent ${i}`);
    t.same(c.wait('send', 1_000_000), okBytes(n), `c sent ${i}`);
  }
  // b goes; its old frame now names no QP, though its slot holds d.
  const before = counters(nic);
  must(b.destroy(), 'destroy b');
  controls(nic).engine.injectFrame(Uint8Array.from(toB));
  const after = counters(nic);
  t.equal(after.dropUnknownQp - before.dropUnknownQp, 1, 'the frame for the destroyed QP found none');
  t.equal(after.duplicateRequests, before.duplicateRequests, 'and was answered by nobody');
  // d still takes its own.
  d.receive(rd, 0, 64);
  c.send(rc, 0, 64);
  t.same(d.wait('receive', 1_000_000), okBytes(64), 'd still receives');
  t.equal(a.failure, undefined);
  t.equal(c.failure, undefined);
});
