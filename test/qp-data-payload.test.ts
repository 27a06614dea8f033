// Issue 4: payload integrity of sends and reads at the edges of the packet size (0, 1,
// MTU-1, MTU, MTU+1, 3*MTU+5) and large (1 MiB, 64 MiB; 2^31 is in qp-data-huge.test.ts),
// at path MTUs 4096 and 1024, at unaligned offsets, with the bytes around the destination
// untouched; reads between queue pairs of one NIC, a queue pair connected to itself included.
import t, { type Test } from 'tap';
import { Qp, Region } from '../lib/index.ts';
import { fillPattern, firstDifference, must, openPair, type QpPair } from './helpers/qp-data.ts';

const GUARD = 0xee;
const MIB = 1 << 20;

function edgeSizes(mtu: number): number[] {
  return [0, 1, mtu - 1, mtu, mtu + 1, 3 * mtu + 5];
}

/** Sends n bytes from offset `from` of a's region into a receive of exactly n bytes at `at` of b's. */
function sendChecked(t: Test, p: QpPair, n: number, from: number, at: number, seed: number, what: string): void {
  fillPattern(p.ra.bytes, from, n, seed);
  p.rb.bytes.fill(GUARD, at - 1, at + n + 1);
  p.b.receive(p.rb, at, n);
  p.a.send(p.ra, from, n);
  const s = p.a.wait('send', 60e6);
  const r = p.b.wait('receive', 60e6);
  t.same(s, { ok: true, value: n }, `${what}: the send completes with its ${n} bytes`);
  t.same(r, { ok: true, value: n }, `${what}: the receive took a message of ${n} bytes`);
  t.equal(firstDifference(p.rb.bytes, at, p.ra.bytes, from, n), -1, `${what}: every byte arrived`);
  t.ok(p.rb.bytes[at - 1] === GUARD && p.rb.bytes[at + n] === GUARD,
    `${what}: the bytes around the receive are untouched`);
}

/** Reads n bytes at `from` of b's region into `at` of a's region, through a (served by b). */
function readChecked(t: Test, p: QpPair, n: number, from: number, at: number, seed: number, what: string): void {
  fillPattern(p.rb.bytes, from, n, seed);
  p.ra.bytes.fill(GUARD, at - 1, at + n + 1);
  p.a.read(p.rb, from, p.ra, at, n);
  t.same(p.a.wait('send', 60e6), { ok: true, value: n }, `${what}: the read completes with its ${n} bytes`);
  t.equal(firstDifference(p.ra.bytes, at, p.rb.bytes, from, n), -1, `${what}: every byte was read`);
  t.ok(p.ra.bytes[at - 1] === GUARD && p.ra.bytes[at + n] === GUARD,
    `${what}: the bytes around the destination are untouched`);
}

for (const mtu of [4096, 1024]) {
  t.test(`send and read at the edges of a path MTU of ${mtu}`, async (t) => {
    // Path MTU 4096 is the NIC's own at Ethernet MTU 9000; 1024 is asked for at connect.
    const p = openPair({ stepped: true }, MIB, mtu === 4096 ? undefined : mtu);
    t.teardown(() => p.nic.close());
    let seed = mtu;
    for (const n of edgeSizes(mtu)) {
      sendChecked(t, p, n, 3, 5, ++seed, `send of ${n} (offsets 3 -> 5)`);
      sendChecked(t, p, n, 4096, 8192, ++seed, `send of ${n} (page-aligned offsets)`);
      readChecked(t, p, n, 7, 13, ++seed, `read of ${n} (offsets 7 -> 13)`);
      readChecked(t, p, n, 4096, 8192, ++seed, `read of ${n} (page-aligned offsets)`);
    }
    t.equal(p.a.failure ?? p.b.failure, undefined, 'no failure');
  });
}

t.test('send and read of 1 MiB and 64 MiB', async (t) => {
  const p = openPair({ stepped: true }, 64 * MIB + 8192);
  t.teardown(() => p.nic.close());
  sendChecked(t, p, MIB, 1, 4099, 1, 'send of 1 MiB');
  readChecked(t, p, MIB, 4099, 1, 2, 'read of 1 MiB');
  sendChecked(t, p, 64 * MIB, 3, 4096, 3, 'send of 64 MiB');
  readChecked(t, p, 64 * MIB, 4096, 5, 4, 'read of 64 MiB');
});

t.test('several messages in flight land in their own receives, in order', async (t) => {
  const p = openPair({ stepped: true }, 4 * MIB);
  t.teardown(() => p.nic.close());
  const sizes = [5000, 0, 1, 4096, 70_000, 4097, 12_345, 300_000, 2];
  let from = 0;
  let at = 1;
  const placed: [number, number, number][] = [];
  for (const n of sizes) {
    fillPattern(p.ra.bytes, from, n, n + 17);
    p.b.receive(p.rb, at, n + 10);
    placed.push([n, from, at]);
    from += n + 3;
    at += n + 10;
  }
  for (const [n, f] of placed) p.a.send(p.ra, f, n);
  for (const [n, f, a] of placed) {
    t.same(p.b.wait('receive', 30e6), { ok: true, value: n }, `receive of the ${n}-byte message`);
    t.equal(firstDifference(p.rb.bytes, a, p.ra.bytes, f, n), -1, `its ${n} bytes`);
    t.same(p.a.wait('send', 30e6), { ok: true, value: n });
  }
});

t.test('RDMA read between queue pairs of one NIC: either way, and a queue pair connected to itself', async (t) => {
  const p = openPair({ stepped: true }, MIB);
  t.teardown(() => p.nic.close());
  readChecked(t, p, 10_000, 100, 200, 1, 'a reads b\'s region');
  // b reads too, served by a; the source may be any region of the NIC.
  fillPattern(p.ra.bytes, 0, 9000, 2);
  p.b.read(p.ra, 0, p.rb, 64, 9000);
  t.same(p.b.wait('send', 10e6), { ok: true, value: 9000 }, 'b\'s read, served by a');
  t.equal(firstDifference(p.rb.bytes, 64, p.ra.bytes, 0, 9000), -1, 'its bytes');
  // A queue pair connected to itself serves its own reads and takes its own sends.
  const self = must(Qp.make(p.nic), 'QP');
  must(self.connect(self.endpoint), 'connect to itself');
  const r = must(Region.alloc(p.nic, 1 << 16), 'region');
  fillPattern(r.bytes, 0, 20_000, 3);
  self.read(r, 0, r, 30_000, 20_000);
  t.same(self.wait('send', 10e6), { ok: true, value: 20_000 }, 'a read served by the same queue pair');
  t.equal(firstDifference(r.bytes, 30_000, r.bytes, 0, 20_000), -1, 'copies the bytes');
  self.receive(r, 60_000, 5000);
  self.send(r, 7, 5000);
  t.same(self.wait('send', 10e6), { ok: true, value: 5000 }, 'a send to itself');
  t.same(self.wait('receive', 10e6), { ok: true, value: 5000 }, 'lands in its own receive');
  t.equal(firstDifference(r.bytes, 60_000, r.bytes, 7, 5000), -1, 'with the bytes');
});

t.test('traffic both ways at once: sends and reads in each direction complete in entry order with their ' +
  'bytes', async (t) => {
  for (const stepped of [true, false]) {
    const p = openPair({ stepped }, MIB);
    t.teardown(() => p.nic.close());
    const mode = stepped ? 'stepped' : 'thread';
    const N = 1500;
    fillPattern(p.ra.bytes, 0, 30_000, 5);
    fillPattern(p.rb.bytes, 0, 30_000, 6);
    const lenA = (i: number) => 1 + (i * 37) % 9000; // a -> b
    const lenB = (i: number) => (i * 53) % 5000; // b -> a
    for (let i = 0; i < N; i++) {
      p.a.receive(p.ra, 100_000 + (i % 64) * 10_000, 10_000);
      p.b.receive(p.rb, 100_000 + (i % 64) * 10_000, 10_000);
    }
    const bad: string[] = [];
    let posted = 0;
    const post = (i: number) => {
      p.a.send(p.ra, i % 100, lenA(i));
      p.b.send(p.rb, i % 100, lenB(i));
      if (i % 3 === 0) {
        p.a.read(p.rb, 0, p.ra, 50_000, 3000 + i);
        p.b.read(p.ra, 0, p.rb, 50_000, 3000 + i);
      }
    };
    // Up to 64 messages ahead each way, so a receive slot is read before it is used again.
    for (; posted < 64; posted++) post(posted);
    for (let i = 0; i < N && bad.length === 0; i++) {
      for (const [q, len, name] of [[p.a, lenA(i), 'a'], [p.b, lenB(i), 'b']] as const) {
        const s = q.wait('send', 10e6);
        if (s?.ok !== true || s.value !== len) bad.push(`${name}'s send ${i}: ${JSON.stringify(s)}, want ${len}`);
        if (i % 3 === 0) {
          const r = q.wait('send', 10e6);
          if (r?.ok !== true || r.value !== 3000 + i) bad.push(`${name}'s read ${i}: ${JSON.stringify(r)}`);
        }
      }
      if (i % 3 === 0) {
        if (firstDifference(p.ra.bytes, 50_000, p.rb.bytes, 0, 3000 + i) >= 0) bad.push(`a's read ${i}: bytes`);
        if (firstDifference(p.rb.bytes, 50_000, p.ra.bytes, 0, 3000 + i) >= 0) bad.push(`b's read ${i}: bytes`);
      }
      const ra = p.a.wait('receive', 10e6);
      const rb = p.b.wait('receive', 10e6);
      if (ra?.ok !== true || ra.value !== lenB(i)) bad.push(`a's receive ${i}: ${JSON.stringify(ra)}, want ${lenB(i)}`);
      if (rb?.ok !== true || rb.value !== lenA(i)) bad.push(`b's receive ${i}: ${JSON.stringify(rb)}, want ${lenA(i)}`);
      const slot = 100_000 + (i % 64) * 10_000;
      if (firstDifference(p.ra.bytes, slot, p.rb.bytes, i % 100, lenB(i)) >= 0) bad.push(`a's receive ${i}: bytes`);
      if (firstDifference(p.rb.bytes, slot, p.ra.bytes, i % 100, lenA(i)) >= 0) bad.push(`b's receive ${i}: bytes`);
      if (posted < N) post(posted++);
    }
    t.same(bad, [], `${mode}: ${N} messages and ${N / 3} reads each way`);
  }
});
