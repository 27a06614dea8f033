// Issue 5, the driver against malformed input from the NIC: firmware answers refused, never
// given or malformed (the model's fault hooks, seeded) and completions of random words. Clear
// errors, no exception, no access outside the driver's memory, every byte back at close.
// Directed cases first, then a short seeded run (npm run fuzz runs the long one); SEED=n replays.
import t from 'tap';
import { Qp } from '../lib/index.ts';
import { CqeType } from '../firmware-hwrm/roce/cqe.ts';
import { CQ_BASE_CQE_TYPE_SHIFT as CQE_TYPE_SHIFT } from '../firmware-hwrm/roce/cqe.g.ts';
import { fuzzDriver } from '../scripts/stress/fuzz-driver.ts';
import {
  openNic, connectedPair, region, controls, hw, pollAll, okBytes, error, pass, seedFor, emuOf,
} from './failure-setup.ts';

t.test('a receive CQE claiming more bytes than its receive posted fails the queue pair ' +
  '(the driver never reports bytes it did not post)', async (t) => {
  const nic = openNic();
  t.teardown(() => nic.close());
  const [a, b] = connectedPair(nic);
  const r = region(nic, 1 << 16);
  a.receive(r, 0, 100);
  a.receive(r, 100, 100);
  b.send(r, 1000, 60);
  pass(nic, 1000);
  // A well-formed RES_RC CQE for the second receive (wr_id 1), but of 5000 bytes.
  const words = [5000, 0, 0, 0, 0, 0, (CqeType.RES_RC << CQE_TYPE_SHIFT) >>> 0, 1];
  t.equal(controls(nic).engine.injectCqe(hw(a).rcq.id, words), true);
  const message = 'the NIC completed receive entry 1 with 5000 bytes, more than its 100';
  t.same(pollAll(a, 'receive'), [okBytes(60), error(message)],
    'the first receive keeps its result; the lying CQE fails the next');
  t.equal(a.failure, message);
});

t.test('a CREATE_QP or CREATE_CQ answer naming an object no doorbell can name is a clear error, ' +
  'and what the firmware was told of is held until close', async (t) => {
  for (const nth of [1, 2, 3]) {
    const nic = openNic({ seed: 77 });
    const dma = emuOf(nic).dma;
    controls(nic).roce.malformNth(nth, 'xid'); // CREATE_CQ, CREATE_CQ, CREATE_QP
    let made: ReturnType<typeof Qp.make> | undefined;
    t.doesNotThrow(() => { made = Qp.make(nic); }, `answer ${nth} malformed: no exception`);
    t.equal(made?.ok, false, `answer ${nth} malformed: make is an Error`);
    const unfit = /malformed firmware answer \((CQ id|QP number) \d+ does not fit a doorbell\)/;
    if (made && !made.ok) t.match(made.error, unfit);
    t.ok(nic.info.quarantinedBytes > 0, 'the memory the firmware may name is quarantined');
    const next = Qp.make(nic);
    t.equal(next.ok, true, 'the next make works');
    nic.close();
    t.equal(dma.allocatedBytes, 0, 'close gives every byte back');
  }
});

t.test('driver fuzz (seeded): bring-ups, commands and completions under malformed, refused and missing answers',
  async (t) => {
  const seed = seedFor(0xd21e);
  const r = fuzzDriver({ seed, bringUps: 80, rounds: 100, cqes: 400 });
  t.comment(`seed ${seed}: bring-ups ${JSON.stringify(r.bringUps)}, command steps ${JSON.stringify(r.steps)}, ` +
    `CQEs ${JSON.stringify(r.cqes)}, ${(r.wallMs / 1000).toFixed(1)} s`);
  t.same(r.violations, [], 'no exception, no unclear error, no IOMMU fault or internal error, every byte back, ' +
    `every completion in its rules (replay: SEED=${seed})`);
  t.ok(r.bringUps.ok > 0 && r.bringUps.failed > 0,
    `some bring-ups survived the faults, some failed cleanly (SEED=${seed})`);
  t.ok(r.steps.ok > 0 && r.steps.failed > 0, `some commands went through, some failed cleanly (SEED=${seed})`);
  t.equal(r.cqes.injected, 400);
  const kinds = Object.keys(r.errors);
  const met = (re: RegExp): boolean => kinds.some((k) => re.test(k));
  t.ok(met(/malformed firmware answer/) && met(/refused by the firmware/) &&
    met(/did not answer|stopped answering|never set the valid byte/),
    `refusals, silences and malformed answers each met their error (SEED=${seed})`);
  t.ok(met(/does not take/) && met(/out of order/),
    `completions of the wrong kind and out of order each met their error (SEED=${seed})`);
});
