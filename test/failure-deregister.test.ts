// Issue 15 item 1: the NIC never reads or writes a region's memory once deregister returned Ok.
// A send, a receive and a send waiting on RNR whose region is deregistered part-way, with a
// new region of the same size made at once (it gets the same memory and IOVA): the rest of the
// entry must not carry, nor land in, the new region's bytes. The entry fails with a protection
// error instead ("a failed entry may have moved some or all of its bytes": the old region's).
// Two stepped software NICs cabled to each other, on one virtual clock.
import t from 'tap';
import type { Region } from '../lib/index.ts';
import type { Nic } from '../lib/index.ts';
import { openTwoNics, connectedPair, region, counters, controls, pass, must, emuOf } from './failure-setup.ts';
import { fillPattern } from './helpers/qp-data.ts';

const MESSAGE = 64 << 20;
const LOCAL_PROTECTION = /local protection error/;

/** Runs the stepped models a turn at a time until `done()` (no time passes): stops a message part-way. */
function runUntil(nic: Nic, done: () => boolean, turns = 1_000_000): boolean {
  const clock = emuOf(nic).clock;
  for (let i = 0; i < turns && !done(); i++) clock.relax();
  return done();
}

function iovaOf(r: Region): number {
  return r.vaHi * 2 ** 32 + r.vaLo;
}

/** Words of `got` that are neither 0 (never written) nor the word of `expected` at the same place. */
function foreignWords(got: Uint8Array, expected: Uint8Array): number {
  const g = new Uint32Array(got.buffer, got.byteOffset, got.length >>> 2);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length >>> 2);
  let n = 0;
  for (let i = 0; i < g.length; i++) if (g[i] !== 0 && g[i] !== e[i]) n++;
  return n;
}

t.test('a send whose region is deregistered part-way carries none of the new region\'s bytes and fails with a ' +
  'protection error', async (t) => {
  const [nicA, nicB] = openTwoNics(151);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const x = region(nicA, MESSAGE);
  const rb = region(nicB, MESSAGE);
  fillPattern(x.bytes, 0, MESSAGE, 1);
  const sent = Uint8Array.from(x.bytes); // what X held: the only bytes the peer may see
  b.receive(rb, 0, MESSAGE);
  a.send(x, 0, MESSAGE);
  t.ok(runUntil(nicA, () => counters(nicA).packetsSent >= 4096), 'the send is running: 16 MiB of 64 sent');
  t.equal(a.poll('send'), undefined, 'and not complete');
  const xIova = iovaOf(x);
  must(x.deregister(), 'deregister X');
  const y = region(nicA, MESSAGE);
  t.equal(iovaOf(y), xIova, 'Y gets X\'s IOVA (the case that must be safe)');
  fillPattern(y.bytes, 0, MESSAGE, 2);
  const yBytes = Uint8Array.from(y.bytes);
  const done = a.wait('send', 5_000_000);
  t.equal(done?.ok, false, 'the send fails');
  if (done && !done.ok) t.match(done.error, LOCAL_PROTECTION, 'with a protection error');
  pass(nicA, 100_000);
  t.equal(foreignWords(rb.bytes, sent), 0, 'the peer\'s receive holds X\'s bytes or nothing: no word of Y');
  t.ok(y.bytes.every((v, i) => v === yBytes[i]), 'Y is untouched');
  t.equal(counters(nicA).internalErrors, 0);
  t.equal(counters(nicB).internalErrors, 0);
});

t.test('a receive whose region is deregistered part-way writes nothing into the new region and fails with a ' +
  'protection error', async (t) => {
  const [nicA, nicB] = openTwoNics(152);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, MESSAGE);
  const x = region(nicB, MESSAGE);
  fillPattern(ra.bytes, 0, MESSAGE, 3);
  b.receive(x, 0, MESSAGE);
  a.send(ra, 0, MESSAGE);
  t.ok(runUntil(nicA, () => counters(nicA).packetsSent >= 4096), 'the message is arriving: 16 MiB of 64 sent');
  t.equal(counters(nicB).messagesReceived, 0, 'and not complete');
  const xIova = iovaOf(x);
  must(x.deregister(), 'deregister X');
  const y = region(nicB, MESSAGE);
  t.equal(iovaOf(y), xIova, 'Y gets X\'s IOVA');
  const landed: string[] = [];
  controls(nicB).model.onDmaWrite((iova: number, length: number) => {
    if (iova < xIova + MESSAGE && xIova < iova + length) landed.push(`${length} bytes at 0x${iova.toString(16)}`);
  });
  fillPattern(y.bytes, 0, MESSAGE, 4);
  const yBytes = Uint8Array.from(y.bytes);
  const received = b.wait('receive', 5_000_000);
  t.equal(received?.ok, false, 'the receive fails');
  if (received && !received.ok) t.match(received.error, LOCAL_PROTECTION, 'with a protection error');
  const send = a.wait('send', 5_000_000);
  t.equal(send?.ok, false, 'and so does the peer\'s send');
  pass(nicA, 100_000);
  controls(nicB).model.onDmaWrite(undefined);
  t.same(landed.slice(0, 3), [], 'no DMA write lands in Y\'s memory');
  t.ok(y.bytes.every((v, i) => v === yBytes[i]), 'Y holds what its owner wrote');
  t.equal(counters(nicA).internalErrors, 0);
  t.equal(counters(nicB).internalErrors, 0);
});

t.test('a send waiting on RNR whose region is deregistered never carries the new region\'s bytes', async (t) => {
  const [nicA, nicB] = openTwoNics(153);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const size = 1 << 20;
  const x = region(nicA, size);
  const rb = region(nicB, size);
  fillPattern(x.bytes, 0, size, 5);
  const sent = Uint8Array.from(x.bytes);
  a.send(x, 0, size); // b has no receive: the send is RNR-NAKed and retried without end
  pass(nicA, 2000);
  t.ok(counters(nicA).rnrNaksReceived > 0, 'the send waits on RNR');
  const xIova = iovaOf(x);
  must(x.deregister(), 'deregister X');
  const y = region(nicA, size);
  t.equal(iovaOf(y), xIova, 'Y gets X\'s IOVA');
  fillPattern(y.bytes, 0, size, 6);
  b.receive(rb, 0, size); // now the retried send finds a receive
  const done = a.wait('send', 5_000_000);
  t.equal(done?.ok, false, 'the send fails');
  if (done && !done.ok) t.match(done.error, LOCAL_PROTECTION, 'with a protection error');
  pass(nicA, 100_000);
  t.equal(foreignWords(rb.bytes, sent), 0, 'the peer\'s receive holds X\'s bytes or nothing: no word of Y');
  t.notOk(b.poll('receive')?.ok, 'the peer\'s receive did not complete Ok');
});

t.test('a key is not handed out again at once: the old key names no region after deregister', async (t) => {
  const [nicA, nicB] = openTwoNics(154);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const x = region(nicA, 4096);
  const key = x.key;
  must(x.deregister(), 'deregister X');
  const again = Array.from({ length: 16 }, () => region(nicA, 4096));
  t.notOk(again.some((r) => r.key === key), 'none of the next 16 regions gets X\'s key');
  t.equal(controls(nicA).roce.mrAttributes(key), undefined, 'the firmware holds no region under it');
  void nicB;
});
