// Issue 15, the hostile wire, deterministically: two stepped NICs cabled to each other, and
// frames a man in the middle could send handed to each NIC as if from the wire. Frames that
// fail the ICRC, are cut short or garbage, name a QP that does not exist, or carry PSNs far
// outside the window (ghost ACKs, NAKs and READ responses, old copies, random opcodes) must
// never count toward a queue pair's retries: IBA counts only ACK timeouts and sequence NAKs
// for packets that were lost. Frames are made from the NICs' own frames by header offsets
// (Ethernet 14 + IPv4 20 + UDP 8: BTH at 42, opcode 42, dest QP 47..49, PSN 51..53, AETH 54).
import t from 'tap';
import { openTwoNics, connectedPair, region, counters, controls, transport, okBytes } from './failure-setup.ts';
import { fillPattern, firstDifference } from './helpers/qp-data.ts';
import { seeded } from '../scripts/stress/seeded.ts';
import { computeIcrc, writeIcrc } from '../drivers/emu/model/wire/icrc.ts';

const BTH = 42;
const IP = 14;
const ACK = 0x11;
const READ_RESPONSE_ONLY = 0x10;
const FAR = 1 << 20;

const psnOf = (f: Uint8Array) => (f[BTH + 9]! << 16) | (f[BTH + 10]! << 8) | f[BTH + 11]!;
function setPsn(f: Uint8Array, psn: number): void {
  const p = ((psn % 0x1000000) + 0x1000000) % 0x1000000;
  f[BTH + 9] = p >>> 16; f[BTH + 10] = (p >>> 8) & 0xff; f[BTH + 11] = p & 0xff;
}
/** The frame's IPv4 total length says where its packet (and ICRC) ends. */
const packetEnd = (f: Uint8Array) => IP + ((f[IP + 2]! << 8) | f[IP + 3]!);
function resign(f: Uint8Array): Uint8Array {
  writeIcrc(f, packetEnd(f), computeIcrc(f, IP, packetEnd(f)));
  return f;
}

/** Hostile frames made from `f`, one of each kind that must count toward nothing. */
function hostile(f: Uint8Array, isResponse: boolean, r: () => number): Uint8Array[] {
  const out: Uint8Array[] = [];
  const copy = () => Uint8Array.from(f);
  const bad = copy();
  bad[BTH + 11] ^= 0x01; // PSN changed, ICRC not: fails the ICRC
  out.push(bad);
  out.push(copy().subarray(0, f.length - 5), copy().subarray(0, 30)); // cut short
  const garbage = new Uint8Array(200);
  for (let i = 0; i < garbage.length; i++) garbage[i] = r() & 0xff;
  out.push(garbage);
  const headersThenGarbage = copy();
  for (let i = BTH; i < headersThenGarbage.length; i++) headersThenGarbage[i] = r() & 0xff;
  out.push(headersThenGarbage);
  const noSuchQp = copy();
  noSuchQp[BTH + 5] = 0x0a; noSuchQp[BTH + 6] = 0xbc; noSuchQp[BTH + 7] = 0xde;
  out.push(resign(noSuchQp));
  const old = copy();
  setPsn(old, psnOf(f) - FAR);
  out.push(resign(old));
  const randomOpcode = copy();
  randomOpcode[BTH] = r() & 0xff;
  setPsn(randomOpcode, psnOf(f) - FAR - 7);
  out.push(resign(randomOpcode));
  if (isResponse) {
    // Ghost ACK, NAKs (sequence, RNR) and a READ response far ahead and far behind.
    for (const [syndrome, delta] of [[0x1f, FAR], [0x60, -FAR], [0x21, FAR], [0x60, FAR], [0x1f, -FAR]] as const) {
      const g = copy();
      g[BTH] = ACK;
      g[BTH + 12] = syndrome;
      setPsn(g, psnOf(f) + delta);
      out.push(resign(g));
    }
    const read = copy();
    read[BTH] = READ_RESPONSE_ONLY;
    setPsn(read, psnOf(f) + FAR);
    out.push(resign(read));
  } else {
    // A request copy far ahead: the responder answers one sequence NAK, naming its expected PSN.
    const future = copy();
    setPsn(future, psnOf(f) + FAR);
    out.push(resign(future));
  }
  return out;
}

t.test('frames that fail the ICRC, are garbage, name no QP or lie far outside the window count toward no ' +
  'retries', async (t) => {
  const [nicA, nicB] = openTwoNics(81);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  const fromA: Uint8Array[] = [];
  const fromB: Uint8Array[] = [];
  controls(nicA).engine.onTransmit((f, n) => { fromA.push(f.slice(0, n)); });
  controls(nicB).engine.onTransmit((f, n) => { fromB.push(f.slice(0, n)); });
  const r = seeded(81);
  const MESSAGES = 40;
  const BYTES = 20_000; // 5 packets at path MTU 4096
  let injected = 0;
  for (let i = 0; i < MESSAGES; i++) {
    fillPattern(ra.bytes, 0, BYTES, i);
    b.receive(rb, 0, BYTES);
    a.send(ra, 0, BYTES);
    // The NICs run once (packets out, ACKs on their way), then the hostile frames go in: mid-flight on
    // even messages, once the last message is done on odd ones (nothing outstanding).
    if (i % 2 === 1) t.same(a.wait('send', 1_000_000), okBytes(BYTES), `message ${i} sent`);
    const ca = controls(nicA);
    const cb = controls(nicB);
    for (const f of fromA.splice(0)) for (const h of hostile(f, false, r)) { cb.engine.injectFrame(h); injected++; }
    for (const f of fromB.splice(0)) for (const h of hostile(f, true, r)) { ca.engine.injectFrame(h); injected++; }
    if (i % 2 === 0) t.same(a.wait('send', 1_000_000), okBytes(BYTES), `message ${i} sent`);
    t.same(b.wait('receive', 1_000_000), okBytes(BYTES), `message ${i} received`);
    t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, BYTES), -1, `message ${i} intact`);
  }
  controls(nicA).engine.onTransmit(undefined);
  controls(nicB).engine.onTransmit(undefined);
  const c = [counters(nicA), counters(nicB)];
  t.comment(`${injected} hostile frames; A: ${JSON.stringify(pick(c[0]!))}; B: ${JSON.stringify(pick(c[1]!))}`);
  for (const [name, x] of [['A', c[0]!], ['B', c[1]!]] as const) {
    t.equal(x.ackTimeouts, 0, `NIC ${name}: no ACK timeout`);
    t.equal(x.retransmitEvents, 0, `NIC ${name}: no retransmission was started`);
    t.equal(x.packetsRetransmitted, 0, `NIC ${name}: no packet sent twice`);
  }
  t.equal(transport(nicA, a.endpoint.qp).retryLeft, 7, 'the sender still has its 7 retries');
  t.equal(a.failure, undefined);
  t.equal(b.failure, undefined);
  // Each kind reached the NIC and was refused for its own reason.
  t.ok(c[1]!.dropBAD_ICRC > 0 && c[0]!.dropBAD_ICRC > 0, 'ICRC failures dropped');
  t.ok(c[1]!.dropUnknownQp > 0 && c[0]!.dropUnknownQp > 0, 'frames to no QP dropped');
  t.ok(c[0]!.dropUnexpectedResponse > 0, 'responses for PSNs never sent dropped');
  t.ok(c[0]!.dropStaleResponse > 0, 'responses for PSNs long acknowledged dropped');
  t.ok(c[1]!.duplicateRequests > 0, 'old request copies answered as duplicates');
  t.ok(c[1]!.seqNaksSent > 0, 'request copies far ahead answered by a sequence NAK, which cost the sender nothing');
});

t.test('a sequence NAK naming the next PSN to send acknowledges every packet before it: a lost ACK costs no ' +
  'timeout', async (t) => {
  const [nicA, nicB] = openTwoNics(91);
  t.teardown(() => { nicA.close(); nicB.close(); });
  const [a, b] = connectedPair(nicA, nicB);
  const ra = region(nicA, 1 << 16);
  const rb = region(nicB, 1 << 16);
  const fromA: Uint8Array[] = [];
  controls(nicA).engine.onTransmit((f, n) => { fromA.push(f.slice(0, n)); });
  // The ACK of this one-packet send is lost on the way.
  controls(nicB).engine.dropFrames('tx', ACK, a.endpoint.psn, 1);
  fillPattern(ra.bytes, 0, 100, 1);
  b.receive(rb, 0, 100);
  a.send(ra, 0, 100);
  t.same(b.wait('receive', 1_000_000), okBytes(100), 'the message arrived; its ACK did not');
  controls(nicA).engine.onTransmit(undefined);
  t.equal(fromA.length, 1, 'one packet was sent');
  // A copy of it far ahead makes the responder answer a sequence NAK for the PSN it expects: the
  // one after the send, which is also the next PSN the sender would send.
  const future = Uint8Array.from(fromA[0]!);
  setPsn(future, psnOf(future) + FAR);
  controls(nicB).engine.injectFrame(resign(future));
  t.equal(counters(nicB).seqNaksSent, 1, 'the responder answered one sequence NAK');
  t.same(a.wait('send', 10_000), okBytes(100),
    'the NAK acknowledged the send: it completes within 10 ms of NIC time (the ACK timeout is 67 ms)');
  const c = counters(nicA);
  t.equal(c.ackTimeouts, 0, 'no ACK timeout');
  t.equal(c.retransmitEvents, 0, 'nothing resent');
  t.equal(transport(nicA, a.endpoint.qp).retryLeft, 7, 'no retry spent');
});

function pick(c: Record<string, number>): Record<string, number> {
  const keys = [
    'dropBAD_ICRC', 'dropTRUNCATED', 'dropBAD_LENGTH', 'dropUnknownQp', 'dropUnexpectedResponse', 'dropStaleResponse',
    'duplicateRequests', 'seqNaksSent', 'seqNaksReceived', 'framesDropped',
  ];
  return Object.fromEntries(keys.map((k) => [k, c[k] ?? 0]));
}
