// Issue 3, Qp.connect: one test per spec sentence (Rig_bnxt.Qp, "connect"), on stepped software NICs.
import t, { type Test } from 'tap';
import { Qp, Region, InvalidArgument, type Endpoint, type Nic } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import {
  openNic, controls, qpAttributes, requests, watchCommands, unwrap, STATE, STATUS, emu,
} from './helpers/qp-control.ts';

// roce_hsi.h: CMDQ_MODIFY_QP_ACCESS_* (QP access bits).
const LOCAL_WRITE = 0x1;
const REMOTE_READ = 0x4;
/** Local ACK timeout: 4.096 us x 2^14 (rdma-core ibv_modify_qp(3), the timeout attribute). */
const ACK_TIMEOUT_NS = 4096 * 2 ** 14;
const FULL_CONNECT = ['MODIFY_QP RESET', 'MODIFY_QP INIT', 'MODIFY_QP RTR', 'MODIFY_QP RTS'];

function pair(nic: Nic): [Qp, Qp] {
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  return [a, b];
}

/** One 64-byte message from a to b (b's receive first); true if both sides completed it. */
/** Connects `a` again and checks the driver went RESET -> INIT -> RTR -> RTS and the QP is in RTS. */
function connectsAgainFromReset(t: Test, nic: Nic, a: Qp, b: Qp, what: string): void {
  const watch = watchCommands(nic);
  const again = a.connect(b.endpoint);
  watch.restore();
  t.ok(again.ok, what);
  t.same(watch.log.map((c) => c.name), FULL_CONNECT, 'RESET -> INIT -> RTR -> RTS');
  t.equal(qpAttributes(nic, a.number)?.state, STATE.RTS);
}

/** Connects `b` back, checks a message moves from a to b, then gives everything back. */
function trafficFlowsThenClose(t: Test, nic: Nic, a: Qp, b: Qp): void {
  unwrap(b.connect(a.endpoint));
  const region = unwrap(Region.alloc(nic, 4096));
  t.ok(messageMoves(a, b, region), 'and a message moves');
  for (const x of [a, b]) unwrap(x.destroy());
  unwrap(region.deregister());
  nic.close();
}

function messageMoves(a: Qp, b: Qp, r: Region): boolean {
  b.receive(r, 2048, 64);
  a.send(r, 0, 64);
  const s = a.wait('send', 1_000_000);
  const v = b.wait('receive', 1_000_000);
  return s?.ok === true && s.value === 64 && v?.ok === true && v.value === 64;
}

t.test('connect qp e connects qp to the peer\'s queue pair e and makes it ready to send', async (t) => {
  const nic = openNic();
  const [a, b] = pair(nic);
  const before = requests(nic);
  const watch = watchCommands(nic);
  t.same(a.connect(b.endpoint), { ok: true, value: undefined });
  watch.restore();
  t.same(watch.log.map((c) => c.name), ['MODIFY_QP RTR', 'MODIFY_QP RTS'], 'from INIT: to RTR, then RTS');
  t.equal(requests(nic).hwrm, before.hwrm, 'no HWRM request');
  t.equal(a.connected, true);
  const attr = qpAttributes(nic, a.number)!;
  t.equal(attr.state, STATE.RTS, 'the firmware has it in RTS');
  t.equal(attr.destQpn, b.endpoint.qp, 'destination: the peer\'s QP');
  t.equal(attr.rqPsn, b.endpoint.psn, 'it expects the peer\'s first PSN');
  t.equal(attr.sqPsn, a.endpoint.psn, 'and sends from its own');
  t.same([...attr.destGid], [...b.endpoint.gid], 'to the peer\'s GID');
  t.same([...attr.destMac], [...b.endpoint.mac], 'and MAC');
  unwrap(b.connect(a.endpoint));
  const r = unwrap(Region.alloc(nic, 4096));
  t.ok(messageMoves(a, b, r), 'a message moves from a to b');
  t.ok(messageMoves(b, a, r), 'and back');
  for (const x of [a, b]) unwrap(x.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('path MTU 4096, or the largest the NIC\'s MTU carries', async (t) => {
  for (const [mtu, pathMtu] of [[9000, 4096], [4200, 4096], [4000, 2048], [1500, 1024]] as const) {
    const nic = openNic({ mtu });
    const qp = unwrap(Qp.make(nic));
    unwrap(qp.connect(qp.endpoint));
    t.equal(qpAttributes(nic, qp.number)?.pathMtuBytes, pathMtu, `Ethernet MTU ${mtu}: path MTU ${pathMtu}`);
    unwrap(qp.destroy());
    nic.close();
  }
  const nic = openNic({ mtu: 1500 });
  const qp = unwrap(Qp.make(nic));
  unwrap(qp.connect(qp.endpoint, { pathMtu: 4096 }));
  t.equal(qpAttributes(nic, qp.number)?.pathMtuBytes, 1024, 'an option above what the NIC carries is cut to it');
  unwrap(qp.destroy());
  nic.close();
});

t.test('a send to the peer is retried while the peer has posted no receive, without end', async (t) => {
  const nic = openNic();
  const [a, b] = pair(nic);
  unwrap(a.connect(b.endpoint));
  unwrap(b.connect(a.endpoint));
  const attr = qpAttributes(nic, a.number)!;
  t.equal(attr.rnrRetry, 7, 'rnr_retry 7: retry forever (IBTA)');
  t.equal(attr.minRnrTimer, 1, 'min RNR timer code 1 (0.01 ms), the shortest delay');
  t.equal(qpAttributes(nic, b.number)?.minRnrTimer, 1, 'on the responder too (it is the responder\'s NAK delay)');
  const r = unwrap(Region.alloc(nic, 4096));
  r.bytes.set([1, 2, 3, 4], 0);
  const naks = () => controls(nic).engine.counters()['rnrNaksReceived']!;
  a.send(r, 0, 4);
  t.equal(a.wait('send', 200_000), undefined, 'no completion after 200 ms without a receive (virtual time)');
  t.ok(naks() > 1000, `${naks()} RNR NAKs, far past any finite retry count, and the send is still due`);
  t.equal(a.failure, undefined, 'the queue pair has not failed');
  b.receive(r, 1024, 16);
  t.same(a.wait('send', 1_000_000), { ok: true, value: 4 }, 'once the peer posts a receive the send completes');
  t.same(b.wait('receive', 1_000_000), { ok: true, value: 4 });
  t.same([...r.bytes.subarray(1024, 1028)], [1, 2, 3, 4]);
  for (const x of [a, b]) unwrap(x.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('a send the peer does not acknowledge is retried 7 times, each after 67 ms, before its completion ' +
  'fails', async (t) => {
  const nic = openNic();
  const [a, b] = pair(nic);
  unwrap(a.connect(b.endpoint));
  const attr = qpAttributes(nic, a.number)!;
  t.equal(attr.timeout, 14, 'timeout 14: 4.096 us x 2^14 = 67.1 ms');
  t.equal(attr.retryCnt, 7, 'retry_cnt 7');
  // b stays in INIT: it drops a's packets, so nothing is acknowledged.
  const r = unwrap(Region.alloc(nic, 4096));
  const clock = nicInternals(nic).device.clock;
  const counters = () => controls(nic).engine.counters();
  const c0 = counters();
  const t0 = clock.nowNs();
  a.send(r, 0, 100);
  const done = a.wait('send', 5_000_000);
  const elapsed = clock.nowNs() - t0;
  const c1 = counters();
  t.equal(done?.ok, false, 'the send\'s completion fails');
  if (done && !done.ok) t.match(done.error, /retry/i, 'with a retry-exceeded error');
  t.equal(c1['retransmitEvents']! - c0['retransmitEvents']!, 7, 'after 7 retries');
  t.equal(c1['ackTimeouts']! - c0['ackTimeouts']!, 8, 'each begun by an ACK timeout, and the 8th ends it');
  // Virtual time of the stepped NIC: deterministic.
  t.ok(elapsed >= 8 * ACK_TIMEOUT_NS && elapsed < 9 * ACK_TIMEOUT_NS,
    `failed after ${(elapsed / 1e6).toFixed(1)} ms (8 x 67.1 ms)`);
  for (const x of [a, b]) unwrap(x.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('e may be the endpoint of a queue pair of qp\'s own NIC, qp\'s own included; qp then serves its peer\'s ' +
  'reads', async (t) => {
  const nic = openNic();
  const self = unwrap(Qp.make(nic));
  t.same(self.connect(self.endpoint), { ok: true, value: undefined }, 'connected to itself');
  t.equal(qpAttributes(nic, self.number)?.access, LOCAL_WRITE | REMOTE_READ, 'remote read granted');
  const s = unwrap(Region.alloc(nic, 8192));
  const d = unwrap(Region.alloc(nic, 8192));
  for (let i = 0; i < s.length; i++) s.bytes[i] = (i * 7) & 0xff;
  self.read(s, 100, d, 10, 5000);
  t.same(self.wait('send', 1_000_000), { ok: true, value: 5000 }, 'a read from itself completes');
  t.ok(d.bytes.subarray(10, 5010).every((v, i) => v === (((i + 100) * 7) & 0xff)),
    'with the bytes of this process\'s region');
  // Another queue pair of the same NIC.
  const [a, b] = pair(nic);
  unwrap(a.connect(b.endpoint));
  unwrap(b.connect(a.endpoint));
  t.equal(qpAttributes(nic, a.number)?.access, LOCAL_WRITE | REMOTE_READ,
    'a peer on the same NIC: remote read granted');
  s.bytes.fill(0x5c, 0, 64);
  a.read(s, 0, d, 0, 64);
  t.same(a.wait('send', 1_000_000), { ok: true, value: 64 }, 'b serves a\'s read');
  t.ok(d.bytes.subarray(0, 64).every((v) => v === 0x5c));
  for (const x of [self, a, b]) unwrap(x.destroy());
  for (const x of [s, d]) unwrap(x.deregister());
  nic.close();
});

t.test('remote read is granted only to a queue pair of the same NIC', async (t) => {
  const nic = openNic();
  const other = openNic();
  const qp = unwrap(Qp.make(nic));
  const far = unwrap(Qp.make(other));
  unwrap(qp.connect(far.endpoint));
  t.equal(qpAttributes(nic, qp.number)?.access, LOCAL_WRITE, 'a queue pair of another NIC: no remote read');
  const r = unwrap(Region.alloc(nic, 4096));
  t.throws(() => qp.read(r, 0, r, 2048, 8), InvalidArgument, 'and qp cannot post reads to it');
  // An endpoint with this NIC's GID and MAC but no queue pair of it behind the number.
  const ghost = unwrap(Qp.make(nic));
  const e = { ...ghost.endpoint, qp: 0xabcde };
  unwrap(ghost.connect(e));
  t.equal(qpAttributes(nic, ghost.number)?.access, LOCAL_WRITE,
    'a number no queue pair of this NIC has: no remote read');
  for (const x of [qp, ghost]) unwrap(x.destroy());
  unwrap(far.destroy());
  unwrap(r.deregister());
  other.close();
  nic.close();
});

t.test('Error msg if the firmware refuses a change of qp\'s state', async (t) => {
  for (const [n, step, state] of [[1, 'RTR', STATE.INIT], [2, 'RTS', STATE.RTR]] as const) {
    const nic = openNic();
    const [a, b] = pair(nic);
    controls(nic).roce.refuseNth(n, STATUS.INVALID_PARAMETER);
    const r = a.connect(b.endpoint);
    t.notOk(r.ok, `MODIFY_QP to ${step} refused: connect is an Error`);
    if (!r.ok) {
      t.match(r.error, `MODIFY_QP to ${step}`, 'naming the change');
      t.match(r.error, 'INVALID_PARAMETER', 'and the firmware\'s status');
    }
    t.equal(a.connected, false, 'not connected');
    t.equal(qpAttributes(nic, a.number)?.state, state, 'the QP stays where the refusal left it');
    for (const x of [a, b]) unwrap(x.destroy());
    nic.close();
  }
});

t.test('a connect the firmware refused part-way, called again, takes qp back to reset and connects it from ' +
  'there', async (t) => {
  // [refusals (command of the connect that is refused), ...]: each connect refused at one step, then a clean one.
  const cases: [string, [number, string][]][] = [
    ['at RTR', [[1, 'MODIFY_QP RTR']]],
    ['at RTS', [[2, 'MODIFY_QP RTS']]],
    ['at RTR, then at INIT', [[1, 'MODIFY_QP RTR'], [2, 'MODIFY_QP INIT']]],
    ['at RTR, then at RESET', [[1, 'MODIFY_QP RTR'], [1, 'MODIFY_QP RESET']]],
    ['at RTS, then at RTS again', [[2, 'MODIFY_QP RTS'], [4, 'MODIFY_QP RTS']]],
  ];
  for (const [what, refusals] of cases) {
    const nic = openNic();
    const [a, b] = pair(nic);
    for (const [n, name] of refusals) {
      controls(nic).roce.refuseNth(n, STATUS.FAIL);
      const watch = watchCommands(nic);
      const r = a.connect(b.endpoint);
      watch.restore();
      t.notOk(r.ok, `${what}: refused at ${name}`);
      t.equal(watch.log.at(-1)?.name, name, `the refused command is ${name}`);
      t.equal(a.connected, false);
    }
    connectsAgainFromReset(t, nic, a, b, `${what}: connect again succeeds`);
    const attr = qpAttributes(nic, a.number)!;
    t.same([attr.destQpn, attr.rqPsn, attr.sqPsn, attr.timeout, attr.retryCnt, attr.rnrRetry, attr.pathMtuBytes],
      [b.endpoint.qp, b.endpoint.psn, a.endpoint.psn, 14, 7, 7, 4096], 'with every attribute of a first-time connect');
    trafficFlowsThenClose(t, nic, a, b);
  }
});

t.test('a connect an exception ended, called again, takes qp back to reset and connects it from there', async (t) => {
  // Before a command goes out: the channel's send throws on the RTR or RTS step.
  for (const step of [1, 2]) {
    const nic = openNic();
    const [a, b] = pair(nic);
    const broken = watchCommands(nic, (n) => { if (n === step) throw new Error('injected failure'); });
    t.throws(() => a.connect(b.endpoint), /injected failure/,
      `an exception at ${step === 1 ? 'RTR' : 'RTS'} ends the connect`);
    broken.restore();
    t.equal(a.connected, false);
    connectsAgainFromReset(t, nic, a, b, 'connect again succeeds');
    trafficFlowsThenClose(t, nic, a, b);
  }
  // While a command is out: the device's clock throws as the driver waits for RTR's answer, so
  // the firmware runs the command and its answer comes late.
  const nic = openNic();
  const [a, b] = pair(nic);
  const clock = emu(nic).clock as { relax(): void };
  const relax = clock.relax;
  let armed = false;
  const watch = watchCommands(nic, (n) => { if (n === 1) armed = true; });
  clock.relax = function () {
    if (armed) {
      armed = false;
      throw new Error('clock failed');
    }
    relax.call(this);
  };
  t.throws(() => a.connect(b.endpoint), /clock failed/, 'an exception while RTR is in flight ends the connect');
  delete (clock as { relax?: unknown }).relax; // the prototype's again
  watch.restore();
  t.equal(a.connected, false);
  connectsAgainFromReset(t, nic, a, b, 'connect again succeeds, past the late answer');
  trafficFlowsThenClose(t, nic, a, b);
});

t.test('Raises Invalid_argument if qp is connected, or e\'s gid is not 16 bytes or its mac not 6, before any ' +
  'request', async (t) => {
  const nic = openNic();
  const [a, b] = pair(nic);
  const e = b.endpoint;
  const bad: [string, Endpoint][] = [
    ['gid of 15 bytes', { ...e, gid: new Uint8Array(15) }],
    ['gid of 17 bytes', { ...e, gid: new Uint8Array(17) }],
    ['gid as text', { ...e, gid: '::ffff:10.0.0.1' as unknown as Uint8Array }],
    ['gid as an array', { ...e, gid: [...e.gid] as unknown as Uint8Array }],
    ['mac of 5 bytes', { ...e, mac: new Uint8Array(5) }],
    ['mac of 7 bytes', { ...e, mac: new Uint8Array(7) }],
    ['mac missing', { ...e, mac: undefined as unknown as Uint8Array }],
    ['qp over 24 bits', { ...e, qp: 2 ** 24 }],
    ['psn negative', { ...e, psn: -1 }],
  ];
  for (const [what, endpoint] of bad) {
    const before = requests(nic);
    t.throws(() => a.connect(endpoint), InvalidArgument, what);
    t.same(requests(nic), before, `${what}: no firmware request`);
  }
  t.throws(() => a.connect(null as unknown as Endpoint), InvalidArgument, 'no endpoint');
  const before = requests(nic);
  t.throws(() => a.connect(e, { pathMtu: 1000 }), InvalidArgument, 'a path MTU that is not 256..4096');
  t.same(requests(nic), before);
  t.equal(qpAttributes(nic, a.number)?.state, STATE.INIT, 'the QP is untouched');
  unwrap(a.connect(e));
  const connected = requests(nic);
  t.throws(() => a.connect(e), InvalidArgument, 'qp is connected');
  t.same(requests(nic), connected, 'no firmware request');
  t.equal(qpAttributes(nic, a.number)?.state, STATE.RTS, 'and it stays connected');
  unwrap(a.destroy());
  t.throws(() => a.connect(e), InvalidArgument, 'a destroyed queue pair');
  unwrap(b.destroy());
  nic.close();
});
