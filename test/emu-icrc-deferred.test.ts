// The ICRC a port need not compute: a frame the port builds for itself (to its own MAC) and hands
// to its own loop cable comes back to its own RoCE path alone, which takes it without reading the
// ICRC (emu-icrc-trusted.test.ts), so the port leaves the ICRC out (icrcDeferred; docs/hardware.md,
// "Frames a port hands to itself"). Whatever copies such a frame first completes the ICRC: the
// receive faults that hold, duplicate or corrupt it, so an intact copy passes its ICRC check and a
// corrupted one still fails it. Frames to another MAC, frames a test hook sees and frames through
// transmit faults are built with their ICRC.
import t from 'tap';
import { openNic, connectedPair, region, counters, controls, sendIntact } from './failure-setup.ts';
import { TestNic } from './helpers/emu-engine-harness.ts';
import { ACCESS_MR } from './helpers/emu-engine-harness.ts';
import { RoceFrame, parseFrame, ParseStatus } from '../drivers/emu/model/wire/index.ts';

t.test('a loop NIC\'s own frames are sent with their ICRC deferred and arrive intact', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [a, b] = connectedPair(nic);
  const ra = region(nic, 1 << 16);
  const rb = region(nic, 1 << 16);
  const before = counters(nic);
  for (let i = 0; i < 10; i++) sendIntact(t, [a, b], [ra, rb], i % 2 === 0 ? 64 : 9000, i, `message ${i}`);
  const c = counters(nic);
  const sent = c.framesSent - before.framesSent;
  t.ok(sent >= 20, `${sent} frames sent`);
  t.equal(c.icrcDeferred - before.icrcDeferred, sent, 'every one with its ICRC deferred');
  t.equal(c.icrcTrusted - before.icrcTrusted, sent, 'and every one taken back on trust');
  t.equal(c.dropBAD_ICRC, 0, 'none refused');
});

for (const [name, spec] of [
  ['delayed', { delayNs: 20_000 }], ['duplicated', { duplicate: 1 }], ['reordered', { reorder: 0.5 }],
] as const) {
  t.test(`frames the receive faults copy (${name}) have their ICRC completed first: they pass its check`,
    async (t) => {
      const nic = openNic({ seed: 11 });
      t.teardown(() => nic.close());
      const [a, b] = connectedPair(nic);
      const ra = region(nic, 1 << 16);
      const rb = region(nic, 1 << 16);
      controls(nic).engine.setFaults('rx', spec);
      const before = counters(nic);
      for (let i = 0; i < 6; i++) {
        sendIntact(t, [a, b], [ra, rb], i % 2 === 0 ? 100 : 6000, i + 40, `message ${i}`, 5_000_000);
      }
      const c = counters(nic);
      t.ok(c.icrcDeferred - before.icrcDeferred > 0, 'frames were sent with the ICRC deferred');
      t.equal(c.dropBAD_ICRC - before.dropBAD_ICRC, 0, 'no copy was refused BAD_ICRC');
      controls(nic).engine.clearFaults();
    });
}

t.test('frames to another MAC, and frames a transmit hook sees, carry their ICRC', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair();
  const payload = nic.alloc(64);
  const mr = nic.mr(payload, ACCESS_MR.LOCAL_WRITE);
  const send = (): void => {
    b.recv([{ va: payload.iova, lkey: mr.key, size: 64 }]);
    a.post({ sges: [{ va: payload.iova, lkey: mr.key, size: 64 }] });
    nic.runFor(1e6);
  };
  let c0 = nic.counters();
  send();
  let c = nic.counters();
  t.equal(c['icrcDeferred']! - c0['icrcDeferred']!, c['framesSent']! - c0['framesSent']!, 'to itself: deferred');
  // With a transmit hook the frames are built whole.
  const seen: Uint8Array[] = [];
  nic.model.controls.engine.onTransmit((frame, length) => { seen.push(frame.slice(0, length)); });
  c0 = nic.counters();
  send();
  c = nic.counters();
  t.equal(c['icrcDeferred']! - c0['icrcDeferred']!, 0, 'none deferred while a hook sees them');
  const rf = new RoceFrame();
  t.ok(seen.length >= 2, `${seen.length} frames seen`);
  for (const f of seen) t.equal(parseFrame(f, f.length, rf, nic.config.mac), ParseStatus.OK, 'whole, ICRC checked');
  nic.model.controls.engine.onTransmit(undefined);
  // To another MAC (the loop hands it to the L2 side, or drops it): built whole.
  a.qp.destMac.set([0x52, 0x54, 0, 0x12, 0x34, 0x56]);
  c0 = nic.counters();
  b.recv([{ va: payload.iova, lkey: mr.key, size: 64 }]);
  a.post({ sges: [{ va: payload.iova, lkey: mr.key, size: 64 }] });
  nic.runFor(1e5);
  c = nic.counters();
  t.ok(c['framesSent']! - c0['framesSent']! >= 1, 'the SEND went out');
  t.equal(c['icrcDeferred']! - c0['icrcDeferred']!, 0, 'with its ICRC');
});
