// Qp.waitAsync (issue 14 item 5): wait's meaning (the completion of the oldest due entry, or
// undefined at the bound with the entry still due; the same misuse throws), while the event
// loop keeps running: timers fire during the wait, and a send posted from a timer completes it.
import t from 'tap';
import { InvalidArgument, Nic, Qp, Region } from '../lib/index.ts';
import { must, type QpPair } from './helpers/qp-data.ts';

// One NIC per mode for the whole file (a thread-mode NIC starts a worker, which is slow on a
// loaded machine); each test makes its own queue pairs and regions on it.
const nics = new Map<string, Nic>();
t.teardown(() => { for (const nic of nics.values()) nic.close(); });

function openPair(options: { stepped?: boolean }): QpPair {
  const mode = options.stepped ? 'stepped' : 'thread';
  let nic = nics.get(mode);
  if (nic === undefined) {
    nic = must(Nic.open('emu', options), 'Nic.open');
    nics.set(mode, nic);
  }
  const a = must(Qp.make(nic), 'Qp.make a');
  const b = must(Qp.make(nic), 'Qp.make b');
  const ra = must(Region.alloc(nic, 1 << 16), 'Region.alloc a');
  const rb = must(Region.alloc(nic, 1 << 16), 'Region.alloc b');
  must(a.connect(b.endpoint), 'connect a');
  must(b.connect(a.endpoint), 'connect b');
  // Closing a test's pair gives its queue pairs and regions back; the NIC stays for the next test.
  const pairNic = { close: () => { a.destroy(); b.destroy(); ra.deregister(); rb.deregister(); } } as unknown as Nic;
  return { nic: pairNic, a, b, ra, rb };
}

for (const mode of ['thread', 'stepped'] as const) {
  const options = mode === 'stepped' ? { stepped: true } : {};

  t.test(`${mode}: a timer ticks while it waits, and the wait ends at its bound with the entry still ` +
    'due', async (t) => {
    const p = openPair(options);
    t.teardown(() => p.nic.close());
    p.b.receive(p.rb, 0, 64);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    // A stepped NIC's clock is virtual and jumps while nothing happens: give it a longer bound.
    const waited = await p.b.waitAsync('receive', mode === 'stepped' ? 10e6 : 200_000);
    clearInterval(timer);
    t.equal(waited, undefined, 'no message: undefined at the bound');
    t.ok(ticks >= 1, `the event loop ran timers during the wait (${ticks} ticks)`);
    t.equal(p.b.room('receive'), 4094, 'the receive is still due');
    // It is still the same entry: a message now completes it.
    p.ra.bytes.fill(7, 0, 10);
    p.a.send(p.ra, 0, 10);
    t.same(await p.b.waitAsync('receive', 10e6), { ok: true, value: 10 }, 'the same receive takes the message');
    t.same(await p.a.waitAsync('send', 10e6), { ok: true, value: 10 });
    t.same([...p.rb.bytes.subarray(0, 10)], Array(10).fill(7), 'bytes intact');
  });

  t.test(`${mode}: a send posted from a timer during the wait completes it`, async (t) => {
    const p = openPair(options);
    t.teardown(() => p.nic.close());
    p.b.receive(p.rb, 0, 64);
    p.ra.bytes.set([1, 2, 3, 4, 5], 0);
    setTimeout(() => p.a.send(p.ra, 0, 5), 20);
    t.same(await p.b.waitAsync('receive', 30e6), { ok: true, value: 5 }, 'Ok 5: the length of the message');
    t.same(await p.a.waitAsync('send', 30e6), { ok: true, value: 5 });
    t.same([...p.rb.bytes.subarray(0, 5)], [1, 2, 3, 4, 5]);
  });

  t.test(`${mode}: a completion already there resolves at once, in ring order`, async (t) => {
    const p = openPair(options);
    t.teardown(() => p.nic.close());
    for (const n of [3, 4, 5]) p.b.receive(p.rb, 0, 64);
    for (const n of [3, 4, 5]) p.a.send(p.ra, 0, n);
    for (const n of [3, 4, 5]) t.same(await p.a.waitAsync('send', 10e6), { ok: true, value: n }, `send ${n}`);
    for (const n of [3, 4, 5]) t.same(await p.b.waitAsync('receive', 10e6), { ok: true, value: n }, `receive of ${n}`);
  });

  t.test(`${mode}: a failed entry is an Error, as wait gives it`, async (t) => {
    const p = openPair(options);
    t.teardown(() => p.nic.close());
    p.b.receive(p.rb, 0, 8); // a send longer than the receive fails both queue pairs
    p.a.send(p.ra, 0, 100);
    const r = await p.b.waitAsync('receive', 10e6);
    t.equal(r?.ok, false, 'the receive fails');
    t.match(r && !r.ok ? r.error : '', /./, 'with a message');
    const s = await p.a.waitAsync('send', 10e6);
    t.equal(s?.ok, false, 'the sender fails too');
  });
}

t.test('misuse throws at the call, before any promise, as wait does', async (t) => {
  const p = openPair({ stepped: true });
  t.teardown(() => p.nic.close());
  t.throws(() => p.b.waitAsync('receive', 1000), InvalidArgument, 'nothing due');
  p.b.receive(p.rb, 0, 8);
  t.throws(() => p.b.waitAsync('receive', -1), InvalidArgument, 'us < 0');
  t.throws(() => p.b.waitAsync('receive', Number.NaN), InvalidArgument, 'us NaN');
  t.throws(() => p.b.waitAsync('both' as 'send', 10), InvalidArgument, 'not a side');
  t.equal(p.b.room('receive'), 4094, 'nothing changed');
});

t.test('destroyed while waiting: the wait ends undefined and reads nothing more', async (t) => {
  const p = openPair({});
  t.teardown(() => p.nic.close());
  p.b.receive(p.rb, 0, 8);
  const waiting = p.b.waitAsync('receive', 30e6);
  setTimeout(() => must(p.b.destroy(), 'destroy b'), 10);
  t.equal(await waiting, undefined);
});
