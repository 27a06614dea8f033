// Issue 5, the fault injector: every choice from the model's seeded PRNG, the seed printed with
// each assertion and taken from SEED to replay. On the cable: drop, duplicate, reorder, delay
// and corrupt frames (a corrupted frame fails its ICRC and is dropped); in the firmware:
// refusals, silence and malformed answers at random; in the engine: QP error events and
// completions of a kind no ring takes, injected at seeded random moments into live traffic.
import t from 'tap';
import { Qp, Region, type Nic, type Result } from '../lib/index.ts';
import { ReqErrStateReason, ResErrStateReason } from '../firmware-hwrm/roce/creq.ts';
import { CQ_BASE_CQE_TYPE_SHIFT as CQE_TYPE_SHIFT } from '../firmware-hwrm/roce/cqe.g.ts';
import type { FaultSpec } from '../drivers/emu/model/cable/faults.ts';
import { runSoak, faultTotals } from '../scripts/stress/soak-run.ts';
import { openNic, connectedPair, region, controls, counters, hw, seedFor, emuOf, pass } from './failure-setup.ts';
import { seeded } from '../scripts/stress/seeded.ts';

const SMALL = { crossPairs: 1, localPairs: 1, window: 4, messages: 4000 } as const;

t.test('cable: each fault alone, seeded; every message arrives once, intact, in order', async (t) => {
  const seed = seedFor(501);
  type Counters = Record<string, number>;
  const cases: { faults: FaultSpec; check: (f: Counters, a: Counters) => boolean; what: string }[] = [
    {
      faults: { drop: 0.02 }, check: (f) => f['faultTxDropped']! > 0 && f['retransmitEvents']! > 0,
      what: 'frames were dropped and sent again',
    },
    {
      faults: { duplicate: 0.02 }, check: (f) => f['faultDuplicated']! > 0 && f['duplicateRequests']! > 0,
      what: 'frames came twice; the duplicates were answered, not delivered',
    },
    {
      faults: { reorder: 0.02 }, check: (f) => f['faultReordered']! > 0 && f['retransmitEvents']! > 0,
      what: 'frames overtook each other; sequence NAKs set it right',
    },
    {
      faults: { delayNs: 20_000 },
      check: (f, a) => a['faultDelayed'] === a['framesSent'] && f['faultHoldOverflow'] === 0,
      what: 'every frame was held 20 us',
    },
    {
      faults: { corrupt: 0.01 }, check: (f) => f['faultCorrupted']! > 0 && f['dropBAD_ICRC'] === f['faultCorrupted'],
      what: 'every corrupted frame failed its ICRC and was dropped',
    },
  ];
  for (const c of cases) {
    const r = runSoak({ seed, ...SMALL, faults: c.faults });
    const f = faultTotals(r);
    const name = JSON.stringify(c.faults);
    t.same(r.problems, [], `${name}: no message lost, duplicated, corrupted or out of order (SEED=${seed})`);
    t.equal(r.messages, SMALL.messages, `${name}: all ${SMALL.messages} completed`);
    t.ok(c.check(f, r.counters.a), `${name}: ${c.what} ${JSON.stringify(f)} (SEED=${seed})`);
  }
});

t.test('cable: the same seed draws the same faults; another seed, others', async (t) => {
  const seed = seedFor(502);
  const faults = { drop: 0.02, duplicate: 0.02, reorder: 0.02, corrupt: 0.005 };
  const one = runSoak({ seed, ...SMALL, faults });
  const two = runSoak({ seed, ...SMALL, faults });
  const three = runSoak({ seed: seed ^ 1, ...SMALL, faults });
  t.equal(one.digest, two.digest, `replayed by its seed: the same completions, counters and NIC time (SEED=${seed})`);
  t.same(faultTotals(one), faultTotals(two), 'the same faults');
  t.notSame(faultTotals(one), faultTotals(three), 'another seed, other faults');
  t.same([one.problems, three.problems], [[], []]);
});

/** Make, connect, traffic, destroy under random firmware faults: the outcome of every step. */
function firmwareRun(seed: number): string[] {
  const nic = openNic({ seed });
  const out: string[] = [];
  const note = (what: string, r: Result<unknown>) => out.push(`${what}: ${r.ok ? 'ok' : r.error}`);
  try {
    const r = Region.alloc(nic, 1 << 16);
    note('alloc', r);
    controls(nic).roce.setRandomFaults({ refuse: 0.1, malform: 0.05, silence: 0.003 });
    for (let i = 0; i < 30; i++) {
      const a = Qp.make(nic);
      const b = Qp.make(nic);
      note('make a', a);
      note('make b', b);
      if (a.ok && b.ok) {
        const ca = a.value.connect(b.value.endpoint);
        const cb = b.value.connect(a.value.endpoint);
        note('connect a', ca);
        note('connect b', cb);
        if (ca.ok && cb.ok && r.ok) {
          b.value.receive(r.value, 0, 100);
          a.value.send(r.value, 100, 50);
          const sent = JSON.stringify(a.value.wait('send', 1e6));
          out.push(`traffic: ${sent} ${JSON.stringify(b.value.wait('receive', 1e6))}`);
        }
      }
      if (a.ok) note('destroy a', a.value.destroy());
      if (b.ok) note('destroy b', b.value.destroy());
    }
    out.push(`internal errors: ${JSON.stringify(controls(nic).roce.stats())}`);
  } finally {
    nic.close();
  }
  return out;
}

t.test('firmware: refusals, silence and malformed answers at random (seeded) give clear errors, ' +
  'the same for the same seed', async (t) => {
  const seed = seedFor(503);
  const one = firmwareRun(seed);
  const two = firmwareRun(seed);
  t.same(two, one, `replayed by its seed: every step has the same outcome (SEED=${seed})`);
  const errors = one.filter((l) => !l.endsWith(': ok') && !l.startsWith('traffic') && !l.startsWith('internal'));
  t.ok(errors.length > 0, `faults came: ${errors.length} steps were refused (SEED=${seed})`);
  const why = /refused by the firmware|did not answer|stopped answering|malformed|not sent|earlier destroy/;
  t.ok(errors.every((l) => why.test(l)), `each error says why (SEED=${seed}): ${errors.slice(0, 4).join(' | ')}`);
  const carried = 'traffic: {"ok":true,"value":50} {"ok":true,"value":50}';
  t.ok(one.filter((l) => l.startsWith('traffic')).every((l) => l === carried),
    'every queue pair that connected carried its message');
  t.match(one[one.length - 1]!, /"internalErrors":0/, 'the model met no internal error');
  t.notSame(firmwareRun(seed + 1), one, 'another seed, other faults');
});

type Side = 'send' | 'receive';

/** One ring of a queue pair as the test saw it: the lengths posted (sends) or expected (receives), what came back. */
interface RingLog {
  lengths: number[];
  taken: number;
  /** The first entry that completed with an error, or -1. */
  failedAt: number;
}

const newLog = (): RingLog => ({ lengths: [], taken: 0, failedAt: -1 });

/**
 * Takes every completion the ring has and checks it against its log: no Ok after an Error, each
 * Ok with its entry's bytes, a failed entry on a failed queue pair, the room the untaken entries leave.
 */
function takeAll(q: Qp, side: Side, log: RingLog, violation: (what: string) => void): void {
  for (;;) {
    const r = q.poll(side);
    if (r === undefined) return;
    const k = log.taken++;
    if (r.ok) {
      if (log.failedAt >= 0) violation(`${side} entry ${k} Ok after entry ${log.failedAt} failed`);
      const want = log.lengths[k];
      if (r.value !== want) violation(`${side} entry ${k}: Ok ${r.value}, posted ${want}`);
    } else {
      if (log.failedAt < 0) log.failedAt = k;
      if (q.failure === undefined) violation(`${side} entry ${k} failed but the queue pair says it has not`);
    }
    if (q.room(side) !== 4095 - (log.lengths.length - log.taken)) violation(`${side} room inconsistent`);
  }
}

/** One seeded fault on `victim`: a QP error event from the firmware, or a CQE of a type neither ring takes. */
function injectFault(nic: Nic, victim: Qp, random: () => number): void {
  if (random() % 2 === 0) {
    const req = random() % 2 === 0 ? ReqErrStateReason.REQ_TIMEOUT_RETRY_LIMIT : 0;
    controls(nic).roce.injectQpError(victim.number, req, ResErrStateReason.RES_EXCEEDS_WQE);
    return;
  }
  const cq = random() % 2 === 0 ? hw(victim).scq : hw(victim).rcq;
  const words = [random(), random(), random(), random(), random(), random(), random(), random()];
  const type = 2 + (random() % 14); // a type neither ring takes
  words[6] = (words[6]! & ~(0x1f << CQE_TYPE_SHIFT)) | (type << CQE_TYPE_SHIFT);
  controls(nic).engine.injectCqe(cq.id, words);
}

t.test('engine: QP error events and completions of no ring\'s kind, injected at seeded random moments: ' +
  'every ring completes Ok... then Error..., bytes right, rooms right', async (t) => {
  const seed = seedFor(504);
  const random = seeded(seed);
  const nic = openNic({ seed });
  t.teardown(() => nic.close());
  const pairs = Array.from({ length: 6 }, () => connectedPair(nic));
  const qps = pairs.flat();
  const mem = region(nic, 1 << 22);
  for (let i = 0; i < mem.length; i++) mem.bytes[i] = i * 31 + (i >>> 8);
  const peerOf = new Map<Qp, Qp>();
  for (const [a, b] of pairs) { peerOf.set(a, b); peerOf.set(b, a); }
  const logs = new Map<Qp, Record<Side, RingLog>>();
  for (const q of qps) logs.set(q, { send: newLog(), receive: newLog() });
  let violations = 0;
  const violation = (what: string) => { if (violations++ < 5) t.fail(`${what} (SEED=${seed})`); };
  const take = (q: Qp) => {
    takeAll(q, 'send', logs.get(q)!.send, violation);
    takeAll(q, 'receive', logs.get(q)!.receive, violation);
  };
  let injections = 0;
  for (let step = 0; step < 400; step++) {
    const q = qps[random() % qps.length]!;
    const peer = peerOf.get(q)!;
    const n = random() % 3000;
    if (q.room('send') > 0 && peer.room('receive') > 0) {
      peer.receive(mem, 3_000_000, 4096);
      logs.get(peer)!.receive.lengths.push(n); // the receive takes q's message, if both live
      q.send(mem, random() % 1_000_000, n);
      logs.get(q)!.send.lengths.push(n);
    }
    if (random() % 15 === 0) {
      injections++;
      injectFault(nic, qps[random() % qps.length]!, random);
    }
    emuOf(nic).clock.sleep(50);
    for (const x of qps) take(x);
  }
  // A failed queue pair's NIC side may run on until destroy (a peer's sends to it then wait
  // for receives it never gets): destroy the failed ones, let every retry end, take the rest.
  const failed = qps.filter((q) => q.failure !== undefined);
  for (const q of failed) {
    take(q);
    const { send, receive } = logs.get(q)!;
    if (send.taken !== send.lengths.length || receive.taken !== receive.lengths.length) {
      violation('a failed queue pair still had entries due after taking every completion');
    }
    if (!q.destroy().ok) violation('destroy of a failed queue pair');
  }
  const live = qps.filter((q) => q.failure === undefined);
  for (let i = 0; i < 20; i++) {
    pass(nic, 100_000);
    for (const x of live) take(x);
  }
  const stuck = live.filter((q) => logs.get(q)!.send.taken !== logs.get(q)!.send.lengths.length)
    .map((q) => `QP ${q.number}: ${JSON.stringify(controls(nic).engine.qp(q.number))}`);
  t.ok(injections > 0, `${injections} faults injected (SEED=${seed})`);
  t.equal(violations, 0,
    `no ring completed Ok after an Error, every Ok had its entry's bytes, every room was right (SEED=${seed})`);
  t.ok(failed.length > 0, `${failed.length} of ${qps.length} queue pairs failed (SEED=${seed})`);
  t.same(stuck, [],
    `every send of the others completed, Ok or Error, once their failed peers were destroyed (SEED=${seed})`);
  t.equal(counters(nic)['internalErrors'], 0);
});
