/**
 * The RoCE engine recovering from loss on READs, under seeded random faults with SENDs and
 * READs mixed, across a driver-requested error and reset, between two NICs over UDP, and
 * when built by openEmu with the real firmware beside it.
 */
import t from 'tap';
import { ACCESS_MR, REQ, RES, TestNic, WQE, pattern, type TestQp } from './helpers/emu-engine-harness.ts';
import { Opcode } from '../drivers/emu/model/wire/index.ts';
import { EmuQpState } from '../drivers/emu/model/objects.ts';
import { openEmu } from '../drivers/emu/host/device.ts';

const MTU = 1024;

function readSetup(nic: TestNic, size: number, seed: number) {
  const remote = nic.alloc(size);
  remote.bytes.set(pattern(size, seed));
  const rmr = nic.mr(remote, ACCESS_MR.REMOTE_READ);
  const local = nic.alloc(size);
  const lmr = nic.mr(local, ACCESS_MR.LOCAL_WRITE);
  return {
    remote, local,
    wqe: { type: WQE.READ, sges: [{ va: local.iova, lkey: lmr.key, size }], remoteVa: remote.iova, rkey: rmr.key },
  };
}

t.test('a lost READ response: the requester asks again from the first missing PSN, the responder replays from ' +
  'memory', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU });
  const size = 5 * MTU + 100;
  const { remote, local, wqe } = readSetup(nic, size, 4);
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, 0x1002, 1);
  a.post(wqe);
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1, 1e9));
  const c = nic.counters();
  t.equal(c['faultTxDropped'], 1, 'the response with PSN 0x1002 was lost');
  t.equal(c['packetsSent'], 2, 'the READ request, then one for the rest');
  t.equal(c['readResponsesSent'], 6 + 4, 'all six, then the four from the missing one');
  t.equal(c['ackTimeouts'], 0, 'recovered without a timeout');
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK]);
  t.same(local.bytes, remote.bytes);
});

t.test('a lost READ request is sent again after the ACK timeout', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU });
  const { remote, local, wqe } = readSetup(nic, 3000, 5);
  nic.model.controls.engine.dropFrames('tx', Opcode.RC_RDMA_READ_REQUEST, -1, 1);
  a.post(wqe);
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1, 1e9));
  t.equal(nic.counters()['ackTimeouts'], 1);
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK]);
  t.same(local.bytes, remote.bytes);
});

t.test('SENDs and READs in both directions under seeded random loss, reordering, duplication and ' +
  'corruption', async (t) => {
  const seed = Number(process.env['SEED'] ?? 20261129);
  const nic = new TestNic({ seed });
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU, timeout: 8, sqEntries: 128, rqEntries: 128 });
  nic.model.controls.engine.setFaults('both', { drop: 0.03, duplicate: 0.03, reorder: 0.03, corrupt: 0.02 });
  type Check = () => boolean;
  const checks: Check[] = [];
  const work = (from: TestQp, to: TestQp, n: number, base: number) => {
    for (let i = 0; i < n; i++) {
      const size = 1 + ((i * 1237 + base) % (4 * MTU));
      if (i % 3 === 2) {
        const r = readSetup(nic, size, base + i);
        from.post(r.wqe);
        checks.push(() => r.local.bytes.every((x, k) => x === r.remote.bytes[k]));
      } else {
        const src = nic.alloc(size);
        src.bytes.set(pattern(size, base + i));
        const dst = nic.alloc(size);
        to.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size }]);
        from.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size }] });
        checks.push(() => dst.bytes.every((x, k) => x === src.bytes[k]));
      }
    }
  };
  work(a, b, 30, 100);
  work(b, a, 30, 200);
  const ok = nic.runUntil(() => a.scq.cq.producer === 30 && b.scq.cq.producer === 30, 120e9);
  t.ok(ok, `every WQE completed (seed ${seed})`);
  t.same(a.scq.pollAll().map((x) => x.status), new Array(30).fill(0), `a: all OK, in order (seed ${seed})`);
  t.same(b.scq.pollAll().map((x) => x.status), new Array(30).fill(0), `b: all OK, in order (seed ${seed})`);
  t.same(a.rcq.pollAll().map((x) => x.wrId), Array.from({ length: 20 }, (_, i) => i),
    `a's receives once each, in order (seed ${seed})`);
  t.same(b.rcq.pollAll().map((x) => x.wrId), Array.from({ length: 20 }, (_, i) => i),
    `b's receives once each, in order (seed ${seed})`);
  t.ok(checks.every((c) => c()), `every byte where it belongs (seed ${seed})`);
  const c = nic.counters();
  t.ok(
    c['retransmitEvents']! > 0 &&
      c['dropBAD_ICRC']! + c['dropBAD_IP_CHECKSUM']! + c['dropBAD_UDP_LENGTH']! + c['dropNOT_ROCEV2_PORT']! > 0,
    `faults happened and were recovered from (seed ${seed})`,
  );
  t.equal(c['internalErrors'], 0);
  t.equal(nic.tables.qpErrors.length, 0, `no QP failed (seed ${seed})`);
});

t.test('MODIFY_QP to ERR: everything outstanding and everything posted later is flushed, without a ' +
  'notification', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a] = nic.pair({ mtu: MTU });
  const src = nic.alloc(100);
  const smr = nic.mr(src, 0);
  // the peer has no receive: RNR
  for (let i = 0; i < 3; i++) a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }] });
  a.recv([]);
  nic.runFor(1e6);
  a.modify(EmuQpState.ERR);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }] });
  nic.runFor(1e6);
  t.same(a.scq.pollAll().map((x) => [x.status, x.sqConsIdx]), [
    [REQ.FLUSHED, 1], [REQ.FLUSHED, 2], [REQ.FLUSHED, 3], [REQ.FLUSHED, 4],
  ]);
  t.same(a.rcq.pollAll().map((x) => [x.status, x.wrId]), [[RES.FLUSHED, 0]]);
  t.equal(nic.tables.qpErrors.length, 0, 'the driver asked for it: no QP error notification');
  const sent = nic.counters()['packetsSent'];
  nic.runFor(1e9);
  t.equal(nic.counters()['packetsSent'], sent, 'nothing is sent in ERR');
});

t.test('ERR -> RESET -> connected again: the QP starts over from index 0', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(100);
  src.bytes.set(pattern(100, 1));
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(100);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }] });
  nic.runFor(1e6);
  a.modify(EmuQpState.ERR);
  b.modify(EmuQpState.ERR);
  nic.runFor(1e6);
  a.scq.pollAll();
  for (const q of [a, b]) {
    q.modify(EmuQpState.RESET);
    q.sqProd = q.rqProd = 0;
  }
  nic.connect(a, b.qpn, { mtu: MTU, sqPsn: 0x500, rqPsn: 0x600 });
  nic.connect(b, a.qpn, { mtu: MTU, sqPsn: 0x600, rqPsn: 0x500 });
  b.recv([{ va: dst.iova, lkey: dmr.key, size: 100 }]);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 100 }] });
  t.ok(nic.runUntil(() => b.rcq.cq.producer >= 1 && a.scq.consumer < a.scq.cq.producer));
  t.same(a.scq.pollAll().map((x) => [x.status, x.sqConsIdx]), [[REQ.OK, 1]]);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.wrId]), [[RES.OK, 0]]);
  t.same(dst.bytes.subarray(0, 100), src.bytes.subarray(0, 100));
});

t.test('two NICs cabled by UDP on 127.0.0.1: frames from the socket are taken by run()', async (t) => {
  const base = 20000 + ((process.pid * 7) % 20000) * 2;
  const macA = Uint8Array.from([2, 0, 0, 0, 0, 0xa]);
  const macB = Uint8Array.from([2, 0, 0, 0, 0, 0xb]);
  const nicA = new TestNic({
    mac: macA, ipv4: Uint8Array.from([10, 77, 0, 1]), cable: { kind: 'udp', localPort: base, remotePort: base + 1 },
  });
  const nicB = new TestNic({
    mac: macB, ipv4: Uint8Array.from([10, 77, 0, 2]), cable: { kind: 'udp', localPort: base + 1, remotePort: base },
  });
  t.teardown(() => { nicA.close(); nicB.close(); });
  let kicks = 0;
  nicB.model.onExternalWork = () => { kicks++; };
  const a = nicA.qp();
  const b = nicB.qp();
  nicA.connect(a, b.qpn, { mtu: MTU, sqPsn: 7, rqPsn: 9 }, nicB);
  nicB.connect(b, a.qpn, { mtu: MTU, sqPsn: 9, rqPsn: 7 }, nicA);
  const size = 3 * MTU + 5;
  const src = nicA.alloc(size);
  src.bytes.set(pattern(size, 77));
  const dst = nicB.alloc(size);
  b.recv([{ va: dst.iova, lkey: nicB.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size }]);
  a.post({ sges: [{ va: src.iova, lkey: nicA.mr(src, 0).key, size }] });
  const start = Date.now();
  while (a.scq.cq.producer < 1 && Date.now() - start < 10_000) {
    nicA.model.runOnce(nicA.nowNs);
    nicB.model.runOnce(nicB.nowNs);
    await new Promise((r) => setImmediate(r));
  }
  t.equal(a.scq.cq.producer, 1, 'the sender completed');
  t.same(a.scq.pollAll().map((x) => x.status), [REQ.OK]);
  t.same(b.rcq.pollAll().map((x) => [x.status, x.length]), [[RES.OK, size]]);
  t.same(dst.bytes.subarray(0, size), src.bytes.subarray(0, size));
  t.ok(kicks > 0, 'frames from the socket told the worker (onExternalWork)');
  t.equal(nicB.counters()['framesReceived'], 4);
});

t.test('openEmu in stepped mode builds the engine beside the real firmware', async (t) => {
  const d = openEmu({
    mac: Uint8Array.from([2, 0, 0, 0, 1, 1]), ipv4: Uint8Array.from([10, 77, 1, 1]), mtu: 1500, cable: { kind: 'loop' },
    pcapPath: undefined, seed: 3, mode: 'stepped',
  });
  t.ok(d.ok, d.ok ? 'opened' : d.error);
  if (!d.ok) return;
  t.teardown(() => d.value.close());
  const counters = d.value.emu.engine.counters();
  t.equal(counters['framesSent'], 0);
  // A doorbell for a QP the firmware does not have is refused and counted, nothing more.
  d.value.bar(2).doorbell64(0x10000, 0, (5 | (1 << 26)) >>> 0);
  d.value.clock.relax();
  t.equal(d.value.emu.engine.counters()['doorbellsRejected'], 1);
});

t.test('with a pcap path, every frame sent on a loop cable is written once to the capture', async (t) => {
  const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'emu-engine-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'loop.pcap');
  const nic = new TestNic({ pcapPath: path });
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(2000);
  const dst = nic.alloc(2000);
  b.recv([{ va: dst.iova, lkey: nic.mr(dst, ACCESS_MR.LOCAL_WRITE).key, size: 2000 }]);
  a.post({ sges: [{ va: src.iova, lkey: nic.mr(src, 0).key, size: 2000 }] });
  t.ok(nic.runUntil(() => a.scq.cq.producer === 1));
  const sent = nic.counters()['framesSent']!;
  nic.close();
  const file = readFileSync(path);
  t.equal(file.readUInt32LE(0), 0xa1b2c3d4, 'pcap magic');
  // Walk the records: 16-byte header (incl_len at 8), then the frame.
  let records = 0;
  const lengths: number[] = [];
  for (let at = 24; at < file.length; records++) {
    const incl = file.readUInt32LE(at + 8);
    lengths.push(incl);
    at += 16 + incl;
  }
  t.equal(records, sent, 'one record per frame sent');
  // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 [+ AETH 4] + payload + ICRC 4, in the order sent.
  t.same(lengths, [14 + 20 + 8 + 12 + 1024 + 4, 14 + 20 + 8 + 12 + 976 + 4, 14 + 20 + 8 + 12 + 4 + 4],
    'SEND FIRST, SEND LAST, ACK');
});
