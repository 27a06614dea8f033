// The ICRC a port need not check again: a frame the port built itself, handed to its own loop
// cable in memory (LoopCable.sendBuffer) and delivered as that same buffer, is taken without
// comparing its ICRC (counted in icrcTrusted; docs/hardware.md, "Frames a port hands to itself").
// Every other frame is checked: one handed in as if from the wire, one a fault injector corrupted
// on either side of the loop, one from another NIC over a pair cable. Corrupted frames are made
// by flipping one byte of a frame the NIC sent, so their ICRC is wrong by construction.
import t from 'tap';
import {
  openNic, openTwoNics, connectedPair, region, counters, controls, okBytes, sendIntact, sendOnlyFrame,
} from './failure-setup.ts';
import { fillPattern, firstDifference } from './helpers/qp-data.ts';

const BTH = 42;

t.test('a loop NIC takes its own handed-over frames without the ICRC comparison; the data arrives intact',
  async (t) => {
    const nic = openNic();
    t.teardown(() => nic.close());
    const [a, b] = connectedPair(nic);
    const ra = region(nic, 1 << 16);
    const rb = region(nic, 1 << 16);
    const before = counters(nic);
    for (let i = 0; i < 20; i++) {
      // one packet, and three (path MTU 4096)
      sendIntact(t, [a, b], [ra, rb], i % 2 === 0 ? 64 : 9000, i, `message ${i}`);
    }
    const c = counters(nic);
    const received = c.framesReceived - before.framesReceived;
    t.ok(received >= 40, `${received} frames looped back`);
    t.equal(c.icrcTrusted - before.icrcTrusted, received, 'every one of them was the port\'s own, handed over');
    t.equal(c.dropBAD_ICRC, 0, 'none refused');
  });

t.test('a frame handed in as from the wire is checked: a corrupted copy of the NIC\'s own frame is refused ' +
  'BAD_ICRC, an intact copy passes the check', async (t) => {
    const nic = openNic();
    t.teardown(() => nic.close());
    const [a, b] = connectedPair(nic);
    const ra = region(nic, 1 << 16);
    const rb = region(nic, 1 << 16);
    const request = sendOnlyFrame(t, nic, [a, b], [ra, rb], 100);
    const before = counters(nic);
    const bad = Uint8Array.from(request);
    bad[BTH + 12 + 7] ^= 0x20; // a payload byte: the ICRC no longer matches
    controls(nic).engine.injectFrame(bad);
    let c = counters(nic);
    t.equal(c.dropBAD_ICRC - before.dropBAD_ICRC, 1, 'the corrupted copy was refused BAD_ICRC');
    t.equal(c.icrcTrusted, before.icrcTrusted, 'and was not taken on trust');
    controls(nic).engine.injectFrame(Uint8Array.from(request));
    c = counters(nic);
    t.equal(c.dropBAD_ICRC - before.dropBAD_ICRC, 1, 'the intact copy passed its ICRC check');
    t.equal(c.duplicateRequests - before.duplicateRequests, 1, 'and was answered as the duplicate it is');
    t.equal(c.framesSent - before.framesSent, 1, 'the port answered with one ACK');
    t.equal(c.icrcTrusted - before.icrcTrusted, 1, 'which alone was taken on trust: the injected copy was checked');
  });

for (const direction of ['rx', 'tx'] as const) {
  t.test(`frames the fault injector corrupts (${direction}) on a loop are refused BAD_ICRC; the message gets ` +
    'through once the faults stop', async (t) => {
    const nic = openNic({ seed: direction === 'rx' ? 7 : 8 });
    t.teardown(() => nic.close());
    const [a, b] = connectedPair(nic);
    const ra = region(nic, 1 << 16);
    const rb = region(nic, 1 << 16);
    fillPattern(ra.bytes, 0, 5000, 3);
    const before = counters(nic);
    controls(nic).engine.setFaults(direction, { corrupt: 1 });
    b.receive(rb, 0, 5000);
    a.send(ra, 0, 5000);
    t.equal(b.wait('receive', 20_000), undefined, 'nothing is received while every frame is corrupted');
    const mid = counters(nic);
    t.ok(mid.faultCorrupted > 0, `${mid.faultCorrupted} frames corrupted`);
    t.equal(mid.dropBAD_ICRC - before.dropBAD_ICRC, mid.faultCorrupted, 'every corrupted frame was refused BAD_ICRC');
    t.equal(mid.icrcTrusted, before.icrcTrusted, 'none was taken on trust');
    controls(nic).engine.clearFaults();
    t.same(b.wait('receive', 2_000_000), okBytes(5000), 'received after the retransmission');
    t.same(a.wait('send', 2_000_000), okBytes(5000), 'sent');
    t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, 5000), -1, 'intact');
    t.ok(counters(nic).icrcTrusted > mid.icrcTrusted, 'the clean frames after it are the port\'s own again');
  });
}

t.test('two NICs on a pair cable check every frame: nothing is taken on trust', async (t) => {
  const [nicA, nicB] = openTwoNics(31);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  for (let i = 0; i < 4; i++) {
    b.receive(rb, 0, 256);
    a.send(ra, 0, 256);
    t.same(b.wait('receive', 1_000_000), okBytes(256), `message ${i} received`);
    t.same(a.wait('send', 1_000_000), okBytes(256), `message ${i} sent`);
  }
  const ca = counters(nicA);
  const cb = counters(nicB);
  t.ok(ca.framesReceived > 0 && cb.framesReceived > 0, 'frames went both ways');
  t.equal(ca.icrcTrusted + cb.icrcTrusted, 0, 'none was taken without its ICRC check');
});
