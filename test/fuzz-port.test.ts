// Issue 5, bad input and memory protection on the software NIC's port: crafted frames on the
// cable (a remote peer that forges) can never read or write outside what was granted, and can
// never read through a queue pair whose peer is on another NIC. Directed cases first, then a
// short seeded fuzz run (npm run fuzz runs 10^6 frames); SEED=n replays it.
import t, { type Test } from 'tap';
import type { Nic, Qp, Region } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { Opcode, RoceFrame, encodeFrame } from '../drivers/emu/model/wire/index.ts';
import { fuzzPort } from '../scripts/stress/fuzz-port.ts';
import {
  openTwoNics, connectedPair, region, controls, counters, transport, pass, seedFor, okBytes,
} from './failure-setup.ts';

const FRAMES = 40_000;

function ipOf(nic: Nic): number {
  return nic.info.ipv4.split('.').reduce((x, b) => ((x << 8) | Number(b)) >>> 0, 0);
}

/** The responder's expected PSN of `qp` (what a forger who saw the traffic would use). */
function ePsn(nic: Nic, qp: Qp): number {
  return transport(nic, qp.number).ePsn;
}

interface Craft {
  readonly opcode: number;
  readonly to: Qp;
  readonly psn: number;
  readonly srcMac: Uint8Array;
  readonly srcIp: number;
  readonly rkey?: number;
  readonly va?: number;
  readonly length?: number;
  readonly payload?: number;
}

/** One crafted frame from the cable into V (from `srcMac` / `srcIp`, to V), then 100 us of V's time. */
function inject(V: Nic, c: Craft): void {
  const f = new RoceFrame();
  f.dstMac.set(nicInternals(V).func.info.mac);
  f.srcMac.set(c.srcMac);
  f.srcIp = c.srcIp;
  f.dstIp = ipOf(V);
  f.opcode = c.opcode;
  f.destQp = c.to.number;
  f.psn = c.psn;
  f.ackReq = 1;
  f.rethRkey = c.rkey ?? 0;
  f.rethVaHi = Math.floor((c.va ?? 0) / 2 ** 32);
  f.rethVaLo = (c.va ?? 0) >>> 0;
  f.rethDmaLength = c.length ?? 0;
  f.payloadLength = c.payload ?? 0;
  const frame = new Uint8Array(9216);
  frame.fill(0xab, 54, 54 + 16 + f.payloadLength); // the payload, wherever the opcode's headers end
  const n = encodeFrame(frame, f);
  controls(V).engine.injectFrame(frame.slice(0, n));
  pass(V, 100);
}

/** What V sends (opcode, to itself or not, bytes) and its DMA writes into [va, va + length), as they happen. */
function watch(V: Nic, va: number, length: number): { sent: { opcode: number; toSelf: boolean; bytes: number }[];
  writes: string[]; } {
  const vMac = nicInternals(V).func.info.mac;
  const sent: { opcode: number; toSelf: boolean; bytes: number }[] = [];
  controls(V).engine.onTransmit((frame: Uint8Array, n: number) => {
    sent.push({ opcode: frame[42]!, toSelf: vMac.every((b, i) => frame[i] === b), bytes: n });
  });
  const writes: string[] = [];
  controls(V).model.onDmaWrite((iova: number, n: number) => {
    if (iova < va + length && va < iova + n) writes.push(`${n} bytes at 0x${iova.toString(16)}`);
  });
  return { sent, writes };
}

/** Step 4: SENDs through a fresh queue pair land in its posted receive, and nowhere else. */
function sendsLandInTheirReceive(t: Test, V: Nic, P: Nic, rv1: Region, writes: readonly string[]): void {
  const pMac = nicInternals(P).func.info.mac;
  const [s1] = connectedPair(V, P);
  rv1.bytes.fill(0);
  s1.receive(rv1, 1000, 2048);
  inject(V, { opcode: Opcode.RC_SEND_ONLY, to: s1, psn: ePsn(V, s1), srcMac: pMac, srcIp: ipOf(P), payload: 100 });
  t.same(s1.wait('receive', 1e6), okBytes(100),
    'a SEND with the peer\'s address and PSN lands in the posted receive: that is what a receive grants');
  t.ok(
    rv1.bytes.subarray(1000, 1100).every((b) => b === 0xab) && rv1.bytes.subarray(0, 1000).every((b) => b === 0) &&
      rv1.bytes.subarray(1100).every((b) => b === 0),
    'exactly there',
  );
  s1.receive(rv1, 8192, 2048);
  inject(V, { opcode: Opcode.RC_SEND_ONLY, to: s1, psn: ePsn(V, s1), srcMac: pMac, srcIp: ipOf(P), payload: 3000 });
  const long = s1.wait('receive', 1e6);
  t.equal(long?.ok, false, 'a SEND longer than the receive fails it');
  t.ok(rv1.bytes.subarray(8192 + 2048).every((b) => b === 0), 'and writes nothing past the receive');
  t.same(writes, [], 'still no write into the secret region');
}

t.test('crafted frames from the cable: no read through a queue pair whose peer is on another NIC, none through one ' +
  'whose peer is on this NIC, no write outside a posted receive', async (t) => {
  const [V, P] = openTwoNics(711);
  t.teardown(() => { V.close(); P.close(); });
  const [v1, p1] = connectedPair(V, P); // peer on another NIC: reads not granted
  const [v2, v3] = connectedPair(V, V); // peers on this NIC: each serves the other's reads
  const secret = region(V, 1 << 16);
  secret.bytes.fill(0x5e);
  const rv1 = region(V, 1 << 16);
  const vMac = nicInternals(V).func.info.mac;
  const pMac = nicInternals(P).func.info.mac;
  const vIp = ipOf(V);
  const pIp = ipOf(P);
  const secretVa = secret.vaHi * 2 ** 32 + secret.vaLo;
  // What V sends: READ responses and payload-carrying frames, by destination.
  const { sent, writes } = watch(V, secretVa, secret.length);
  const readResponses = () =>
    sent.filter((s) => s.opcode >= Opcode.RC_RDMA_READ_RESPONSE_FIRST && s.opcode <= Opcode.RC_RDMA_READ_RESPONSE_ONLY);
  /** A READ of 64 bytes of the secret region through `to`, at its expected PSN. */
  const readSecret = (to: Qp, srcMac: Uint8Array, srcIp: number) => inject(V, {
    opcode: Opcode.RC_RDMA_READ_REQUEST, to, psn: ePsn(V, to), srcMac, srcIp, rkey: secret.key, va: secretVa,
    length: 64,
  });

  // 1. A READ of the secret region through v2 (reads granted to its peer v3, on V), forged
  //    three ways: from P's address, from V's address with P's MAC, from V's MAC and address.
  const before = counters(V);
  readSecret(v2, pMac, pIp);
  readSecret(v2, pMac, vIp);
  readSecret(v2, vMac, vIp);
  const after = counters(V);
  t.equal(after['dropBadAddress']! - before['dropBadAddress']!, 1,
    'from P\'s address: dropped (v2 takes packets only from its peer\'s address)');
  t.equal(after['dropForgedSource']! - before['dropForgedSource']!, 2,
    'claiming V\'s own address or MAC from the cable: dropped as forged');
  t.same(readResponses(), [], 'no READ response was sent');
  t.equal(v2.failure, undefined, 'v2 did not fail');
  const rd = region(V, 4096);
  v2.read(secret, 0, rd, 0, 64);
  t.same(v2.wait('send', 1e6), okBytes(64), 'v2 still reads from its peer');

  // 2. A READ of the secret region through v1 (peer on P), right PSN, P's address and MAC.
  sent.length = 0;
  const naks = counters(V)['naksSent']!;
  readSecret(v1, pMac, pIp);
  t.same(readResponses(), [], 'no READ response: v1 grants no reads (its peer is on another NIC)');
  t.equal(counters(V)['naksSent']! - naks, 1, 'one NAK (remote access error) instead');
  t.equal(sent.every((s) => s.opcode === Opcode.RC_ACKNOWLEDGE), true, 'V sent nothing but the NAK');

  // 3. A WRITE into the secret region through a fresh v1, right PSN, P's address.
  const [w1] = connectedPair(V, P);
  inject(V, {
    opcode: Opcode.RC_RDMA_WRITE_ONLY, to: w1, psn: ePsn(V, w1), srcMac: pMac, srcIp: pIp, rkey: secret.key,
    va: secretVa, length: 64, payload: 64,
  });
  t.same(writes, [], 'no DMA write reached the secret region');
  t.ok(secret.bytes.every((b) => b === 0x5e), 'its bytes are unchanged');

  // 4. SENDs through a fresh queue pair: they land in its posted receive, and nowhere else.
  sendsLandInTheirReceive(t, V, P, rv1, writes);
  controls(V).engine.onTransmit(undefined);
  controls(V).model.onDmaWrite(undefined);
  t.equal(counters(V)['internalErrors'], 0);
  void p1; void v3;
});

t.test(`port fuzz: ${FRAMES} crafted frames (seeded); no crash, no write outside a receive or CQ, no byte sent that ` +
  `was not granted`, async (t) => {
  const seed = seedFor(0xf022);
  const r = fuzzPort({ seed, frames: FRAMES });
  t.comment(
    `seed ${seed}: ${r.frames} frames, ${r.parsed} parsed as RoCEv2 for the port, ${r.readsChecked} legitimate reads ` +
      `checked, ${r.receivesTaken} receives, ${r.rebuilds} rebuilds, ${(r.wallMs / 1000).toFixed(1)} s`,
  );
  t.same(r.violations, [], `no violation (replay: SEED=${seed})`);
  const c = r.counters;
  t.ok(r.parsed > FRAMES / 3, `most frames were whole RoCEv2 packets and reached the transport checks (SEED=${seed})`);
  t.ok(c['dropBadAddress']! > 0 && c['dropForgedSource']! > 0 && c['dropBAD_ICRC']! > 0 &&
    c['dropUNKNOWN_OPCODE']! > 0 && c['dropTRUNCATED']! > 0,
    `every kind of malformation came and was refused: ` +
      `${JSON.stringify(Object.fromEntries(Object.entries(c).filter(([k, v]) => k.startsWith('drop') && v > 0)))}`);
  t.ok(c['naksSent']! > 0 && c['readResponsesSent']! > r.readsChecked,
    `some reached the responder's key and range checks and were answered ` +
      `(${c['naksSent']} NAKs, ${c['readResponsesSent']} read responses) (SEED=${seed})`);
  t.ok(r.readsChecked > 100,
    `the legitimate reads between v2 and v3 went on, every byte right (${r.readsChecked}) (SEED=${seed})`);
});
