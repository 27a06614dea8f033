// Issue 4: the argument checks of send, read and receive (Rig_bnxt.Qp). Each misuse throws
// InvalidArgument before anything is written: the rings' memory, the rooms, the engine's
// producer indexes and its doorbell count stay as they were, and the queue pair still works.
import t, { type Test } from 'tap';
import { InvalidArgument, Nic, Qp, Region } from '../lib/index.ts';
import { engineCounters, engineQp, must, openPair, type QpPair } from './helpers/qp-data.ts';
import { driverQpOf } from '../lib/qp.ts';

/** The ring memory of a queue pair (its SQ with the PSN area, and its RQ), as the NIC reads it. */
function rings(q: Qp): { sq: Uint32Array; rq: Uint32Array } {
  const driverQp = driverQpOf(q) as unknown as { sq32: Uint32Array; rq32: Uint32Array };
  return { sq: driverQp.sq32, rq: driverQp.rq32 };
}

interface Snapshot { sq: Buffer; rq: Buffer; rooms: number[]; doorbells: number; producers: unknown[] }

function snapshot(p: QpPair, q: Qp): Snapshot {
  const r = rings(q);
  return {
    sq: Buffer.from(r.sq.slice().buffer),
    rq: Buffer.from(r.rq.slice().buffer),
    rooms: [p.a.room('send'), p.a.room('receive'), p.b.room('send'), p.b.room('receive')],
    doorbells: engineCounters(p.nic)['doorbells']!,
    producers: [p.a,
      p.b].map((x) => { const e = engineQp(p.nic, x.number); return [e['sqProducer'], e['rqProducer']]; }),
  };
}

/** `post` throws InvalidArgument whose message matches `why`, and nothing changed. */
function refused(t: Test, p: QpPair, q: Qp, what: string, why: RegExp, post: () => void): void {
  const before = snapshot(p, q);
  let thrown: unknown;
  try {
    post();
  } catch (e) {
    thrown = e;
  }
  t.ok(thrown instanceof InvalidArgument, `${what}: throws InvalidArgument`);
  t.match((thrown as Error | undefined)?.message ?? '', why, `${what}: says why`);
  const after = snapshot(p, q);
  t.ok(after.sq.equals(before.sq) && after.rq.equals(before.rq), `${what}: ring memory unchanged`);
  t.same(after.rooms, before.rooms, `${what}: rooms unchanged`);
  t.equal(after.doorbells, before.doorbells, `${what}: no doorbell`);
  t.same(after.producers, before.producers, `${what}: the NIC's producer indexes unchanged`);
}

/** One send a -> b of `n` bytes completes on both sides with the bytes moved: the pair still works. */
function stillWorks(t: Test, p: QpPair): void {
  p.ra.bytes.fill(0x3c, 100, 150);
  p.rb.bytes.fill(0, 0, 64);
  p.b.receive(p.rb, 0, 64);
  p.a.send(p.ra, 100, 50);
  t.same(p.a.wait('send', 5e6), { ok: true, value: 50 }, 'a later send completes');
  t.same(p.b.wait('receive', 5e6), { ok: true, value: 50 }, 'and its receive');
  t.equal(p.rb.bytes.subarray(0, 50).every((x) => x === 0x3c), true, 'with the bytes sent');
}

t.test('an object imitating a region (its prototype, a claimed length, a real key and address) is refused, as is ' +
  'changing a region', async (t) => {
  const p = openPair({ stepped: true }, 1 << 16);
  t.teardown(() => p.nic.close());
  const { a, b, ra, rb } = p;
  // Everything a Region shows, claimed: 1 GiB at ra's key and address, registered, of this NIC.
  const claims = {
    nic: p.nic, bytes: new Uint8Array(16), length: 1 << 30, key: ra.key, vaLo: ra.vaLo, vaHi: ra.vaHi, registered: true,
  };
  const forged =
    Object.assign(Object.create(Region.prototype) as object, claims,
    { driverRegion: { ...claims } }) as unknown as Region;
  t.ok(forged instanceof Region, 'the forgery passes instanceof');
  refused(t, p, a, 'send from a forged region', /not a region/, () => a.send(forged, 1 << 20, 4096));
  refused(t, p, b, 'receive into a forged region', /not a region/, () => b.receive(forged, 1 << 20, 4096));
  refused(t, p, a, 'read into a forged region', /not a region/, () => a.read(rb, 0, forged, 0, 16));
  refused(t, p, a, 'read from a forged region', /not a region/, () => a.read(forged, 0, ra, 0, 16));
  // A real region's fields cannot be changed to widen what the driver posts.
  const before = { length: ra.length, key: ra.key, vaLo: ra.vaLo, vaHi: ra.vaHi };
  for (const field of ['length', 'key', 'vaLo', 'vaHi'] as const) {
    t.throws(() => { (ra as unknown as Record<string, number>)[field] = 1 << 30; }, TypeError,
      `${field} cannot be assigned`);
  }
  t.same({ length: ra.length, key: ra.key, vaLo: ra.vaLo, vaHi: ra.vaHi }, before, 'the region is as it was made');
  refused(t, p, a, 'send past the real length', /do not lie in the region/, () => a.send(ra, ra.length, 1));
  stillWorks(t, p);
});

t.test('send, read and receive refuse misuse before writing anything', async (t) => {
  const p = openPair({ stepped: true }, 1 << 16);
  const other = must(Nic.open('emu', { stepped: true }), 'second NIC');
  t.teardown(() => { p.nic.close(); other.close(); });
  const foreign = must(Region.alloc(other, 1 << 16), 'region of the second NIC');
  const gone = must(Region.alloc(p.nic, 1 << 16), 'region to deregister');
  must(gone.deregister(), 'deregister');
  const unconnected = must(Qp.make(p.nic), 'unconnected QP');
  const { a, b, ra, rb } = p;
  const len = ra.length;
  const notRegion =
    { bytes: new Uint8Array(16), length: 16, key: ra.key, vaLo: ra.vaLo, vaHi: ra.vaHi } as unknown as Region;

  // send: Invalid_argument if qp is not connected, r is not a region of qp's NIC or is
  // deregistered, the bytes do not lie in r, n is over 2^31 (room 0: below).
  refused(t, p, unconnected, 'send on an unconnected QP', /not connected/, () => unconnected.send(ra, 0, 1));
  refused(t, p, a, 'send from a region of another NIC', /another NIC/, () => a.send(foreign, 0, 1));
  refused(t, p, a, 'send from a deregistered region', /deregistered/, () => a.send(gone, 0, 1));
  refused(t, p, a, 'send from something that is not a region', /not a region/, () => a.send(notRegion, 0, 1));
  refused(t, p, a, 'send of bytes past the end', /do not lie in the region/, () => a.send(ra, len - 10, 11));
  refused(t, p, a, 'send from offset = length, 1 byte', /do not lie in the region/, () => a.send(ra, len, 1));
  refused(t, p, a, 'send from a negative offset', /do not lie in the region/, () => a.send(ra, -1, 1));
  refused(t, p, a, 'send from a fractional offset', /do not lie in the region/, () => a.send(ra, 0.5, 1));
  refused(t, p, a, 'send of a negative length', /natural number/, () => a.send(ra, 0, -1));
  refused(t, p, a, 'send of a fractional length', /natural number/, () => a.send(ra, 0, 1.5));
  refused(t, p, a, 'send of NaN bytes', /natural number/, () => a.send(ra, 0, NaN));
  refused(t, p, a, 'send of 2^31 + 1 bytes', /over 2\^31/, () => a.send(ra, 0, 2 ** 31 + 1));

  // receive: as send does.
  refused(t, p, unconnected, 'receive on an unconnected QP', /not connected/, () => unconnected.receive(rb, 0, 1));
  refused(t, p, b, 'receive into a region of another NIC', /another NIC/, () => b.receive(foreign, 0, 1));
  refused(t, p, b, 'receive into a deregistered region', /deregistered/, () => b.receive(gone, 0, 1));
  refused(t, p, b, 'receive into something that is not a region', /not a region/, () => b.receive(notRegion, 0, 1));
  refused(t, p, b, 'receive into bytes past the end', /do not lie in the region/, () => b.receive(rb, 1, len));
  refused(t, p, b, 'receive at a negative offset', /do not lie in the region/, () => b.receive(rb, -4, 4));
  refused(t, p, b, 'receive of a negative length', /natural number/, () => b.receive(rb, 0, -1));
  refused(t, p, b, 'receive of 2^31 + 1 bytes', /over 2\^31/, () => b.receive(rb, 0, 2 ** 31 + 1));

  // read: as send for the destination r, and for the source s; and the peer must be a QP of this NIC.
  refused(t, p, unconnected, 'read on an unconnected QP', /not connected/, () => unconnected.read(rb, 0, ra, 0, 1));
  refused(t, p, a, 'read into a region of another NIC', /another NIC/, () => a.read(rb, 0, foreign, 0, 1));
  refused(t, p, a, 'read into a deregistered region', /deregistered/, () => a.read(rb, 0, gone, 0, 1));
  refused(t, p, a, 'read into bytes past the end', /destination.*do not lie/, () => a.read(rb, 0, ra, len - 3, 4));
  refused(t, p, a, 'read of 2^31 + 1 bytes', /over 2\^31/, () => a.read(rb, 0, ra, 0, 2 ** 31 + 1));
  refused(t, p, a, 'read from a region of another NIC', /source.*another NIC/, () => a.read(foreign, 0, ra, 0, 1));
  refused(t, p, a, 'read from a deregistered region', /source.*deregistered/, () => a.read(gone, 0, ra, 0, 1));
  refused(t, p, a, 'read from something that is not a region', /source.*not a region/,
    () => a.read(notRegion, 0, ra, 0, 1));
  refused(t, p, a, 'read from bytes past the end of the source', /source.*do not lie/,
    () => a.read(rb, len - 3, ra, 0, 4));
  refused(t, p, a, 'read from a negative source offset', /source.*do not lie/, () => a.read(rb, -1, ra, 0, 1));

  t.equal(a.room('send'), 4095, 'the send ring is untouched');
  t.equal(b.room('receive'), 4095, 'the receive ring is untouched');
  stillWorks(t, p);
});

t.test('read through a queue pair whose peer is on another NIC throws', async (t) => {
  const p = openPair({ stepped: true }, 1 << 16);
  const other = must(Nic.open('emu', { stepped: true }), 'second NIC');
  t.teardown(() => { p.nic.close(); other.close(); });
  const far = must(Qp.make(other), 'QP on the second NIC');
  const x = must(Qp.make(p.nic), 'QP on the first NIC');
  must(x.connect(far.endpoint), 'connect to the other NIC');
  must(far.connect(x.endpoint), 'and back');
  const farRegion = must(Region.alloc(other, 4096), 'region on the other NIC');
  // The source is a region of x's NIC: the only fault is where the peer lives.
  refused(t, p, x, 'read with the peer on another NIC', /peer is not a queue pair of this NIC/,
    () => x.read(p.rb, 0, p.ra, 0, 16));
  refused(t, p, x, 'read from the peer NIC\'s region', /another NIC/, () => x.read(farRegion, 0, p.ra, 0, 16));
  t.equal(x.room('send'), 4095);
  // Sends across NICs are fine (the peer is reached through x's cable): only read is refused.
  t.doesNotThrow(() => x.send(p.ra, 0, 16), 'send through the same QP is accepted');
  t.equal(x.room('send'), 4094);
});

t.test('a post at room 0 throws and writes nothing', async (t) => {
  const p = openPair({ stepped: true }, 1 << 16);
  t.teardown(() => p.nic.close());
  const { a, b, ra, rb } = p;
  // b posts no receive: a's sends wait for one (RNR, retried without end) and never complete.
  for (let i = 0; i < 4095; i++) a.send(ra, i % 64, 1);
  t.equal(a.room('send'), 0, '4095 sends fill the send ring');
  refused(t, p, a, 'send at room 0', /room 0/, () => a.send(ra, 0, 1));
  refused(t, p, a, 'read at room 0', /room 0/, () => a.read(rb, 0, ra, 0, 1));
  // a's receive ring is separate: it has all its room.
  for (let i = 0; i < 4095; i++) a.receive(ra, 0, 64);
  t.equal(a.room('receive'), 0, '4095 receives fill the receive ring');
  refused(t, p, a, 'receive at room 0', /room 0/, () => a.receive(ra, 0, 1));
  t.equal(a.room('send'), 0);
  t.equal(b.room('send'), 4095, 'the peer\'s rings are its own');
  t.equal(b.room('receive'), 4095);
  // Once b posts receives, a's sends go; each completion taken frees a slot.
  for (let i = 0; i < 4095; i++) b.receive(rb, 0, 64);
  const first = a.wait('send', 10e6);
  t.same(first, { ok: true, value: 1 }, 'the first send completes');
  t.equal(a.room('send'), 1, 'and its slot is free');
  a.send(ra, 0, 1);
  t.equal(a.room('send'), 0, 'a post fills it again');
});

t.test('the bytes lie in the region at its very edges: accepted and moved', async (t) => {
  const p = openPair({ stepped: true }, 1 << 16);
  t.teardown(() => p.nic.close());
  const { a, b, ra, rb } = p;
  const len = ra.length;
  // An empty range at the end lies in the region; so does the whole region.
  b.receive(rb, len, 0);
  a.send(ra, len, 0);
  t.same(a.wait('send', 5e6), { ok: true, value: 0 }, 'a send of 0 bytes at offset = length');
  t.same(b.wait('receive', 5e6), { ok: true, value: 0 }, 'into a receive of 0 bytes at offset = length');
  a.read(rb, len, ra, len, 0);
  t.same(a.wait('send', 5e6), { ok: true, value: 0 }, 'a read of 0 bytes at both ends');
  ra.bytes.fill(0x77);
  b.receive(rb, 0, len);
  a.send(ra, 0, len);
  t.same(a.wait('send', 5e6), { ok: true, value: len }, 'a send of the whole region');
  t.same(b.wait('receive', 5e6), { ok: true, value: len });
  t.equal(rb.bytes.every((x) => x === 0x77), true, 'fills the whole receiving region');
});

t.test('send and receive take exactly what regionHolds (checkRegion\'s test, which read uses) takes: the copy ' +
  'they write out is the same test', async (t) => {
  const p = openPair({ stepped: true }, 1 << 16);
  t.teardown(() => p.nic.close());
  const other = must(Nic.open('emu', { stepped: true }), 'Nic.open other');
  t.teardown(() => other.close());
  const { a, b, ra, rb } = p;
  const gone = must(Region.alloc(p.nic, 4096), 'Region.alloc');
  must(gone.deregister(), 'deregister');
  const foreign = must(Region.alloc(other, 4096), 'Region.alloc other');
  const forged = Object.assign(Object.create(Region.prototype) as object,
    { nic: p.nic, length: 1 << 30, key: ra.key, vaLo: ra.vaLo, vaHi: ra.vaHi }) as unknown as Region;
  const regions: [string, Region][] = [['ra', ra], ['rb', rb], ['deregistered', gone], ['foreign', foreign],
    ['forged', forged], ['null', null as unknown as Region]];
  const numbers = [0, 1, 4095, 4096, 65535, 65536, 65537, -1, 0.5, Number.NaN, Infinity, 2 ** 31, 2 ** 31 + 1,
    2 ** 53, '1' as unknown as number];
  const differ: string[] = [];
  let taken = 0;
  for (const [name, r] of regions) {
    for (const at of numbers) {
      for (const n of numbers) {
        for (const [side, q] of [['send', a], ['receive', b]] as const) {
          // The definition: regionHolds, asked of the queue pair (a private method, by name).
          const holds = q['regionHolds'](r, at, n);
          let threw = false;
          try {
            if (side === 'send') q.send(r, at, n);
            else q.receive(r, at, n);
          } catch (e) {
            threw = e instanceof InvalidArgument;
          }
          if (threw === holds) differ.push(`${side} ${name} at ${at} n ${n}: holds ${holds}, threw ${threw}`);
          if (!threw) taken++;
        }
      }
    }
  }
  t.same(differ, [], 'the same verdict for every region, offset and length');
  t.ok(taken > 0 && taken < 4095, `some posts taken (${taken}), within the rings`);
});
