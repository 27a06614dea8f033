// Issue 15, the hostile wire: two software NICs cabled over UDP through a fault-injecting relay
// process that adds hostile frames to around a third of the frames (test/hostile-wire-run.ts
// says what must hold). Fixed seeds only, so a run of npm test is the same draw every time:
// two whose kinds are all harmless, one that also forges valid frames. `npm run soak` runs
// seeds from the clock, more and longer. Run one seed: SEED=n npx tap test/hostile-wire.test.ts
// A harmless wire may still end a queue pair one way, by the spec's retry rule on a path slower
// than 7 x 67 ms (a loaded host): the last test makes that happen on purpose and holds it to the rules.
import t from 'tap';
import { runHostileWire } from '../scripts/stress/hostile-wire-run.ts';
import { HARMLESS_KINDS, planFor } from '../scripts/stress/hostile-plan.ts';
import { testSeed } from '../scripts/stress/seeded.ts';

const MESSAGES = 150;
// 11: every harmless kind but replay (so the NAK counts are checked against the peer's); 1: a few.
const fixed = [1, 2, 11];
const seeds = process.env['SEED'] !== undefined ? [testSeed()] : fixed;

t.test('the plans: seeds 1 and 11 are harmless kinds only, seed 2 also forges valid frames', async (t) => {
  t.equal(planFor(1).disruptive.length, 0);
  t.ok(planFor(2).disruptive.length > 0);
  t.equal(planFor(11).disruptive.length, 0);
  const missing = HARMLESS_KINDS.filter((k) => !planFor(11).harmless.includes(k));
  t.same(missing, ['replay'], 'seed 11: every harmless kind but replay');
  t.same(planFor(7), planFor(7), 'a seed gives the same plan every time');
});

for (const seed of seeds) {
  t.test(`hostile wire, seed ${seed}`, async (t) => {
    const r = await runHostileWire({ seed, messages: MESSAGES, timeoutMs: 240_000 });
    const p = r.plan;
    t.comment(
      `seed ${seed}: ${(p.rate * 100).toFixed(0)} % of frames, kinds ` +
        `${p.harmless.join(', ')}${p.disruptive.length ? `; forging ${p.disruptive.join(', ')}` : ''}`,
    );
    t.comment(
      `injected ${JSON.stringify(r.relay['injected'])}; ${r.delivered} of ${r.expected} messages; socket drops ` +
        `${r.socketDrops.join(', ')}; ${Math.round(r.wallMs)} ms`,
    );
    const why = p.disruptive.length > 0 ? 'the attacker may end a connection'
      : 'out of retries, every one an ACK timeout or a NAK the peer sent: the path was slower than 7 x 67 ms';
    for (const f of r.failures) t.comment(`failed (${why}): ${f}`);
    t.same(r.problems, [], `no rule broken (replay: SEED=${seed} npx tap test/hostile-wire.test.ts)`);
    if (p.disruptive.length === 0 && r.failures.length === 0)
      t.equal(r.delivered, r.expected, 'harmless kinds only, no queue pair out of retries: every message arrived');
  });
}

// The one way a harmless wire may end a queue pair, made to happen: a path that carries nothing
// for 2 s (then all it held, in order) is a peer that does not acknowledge for longer than the
// spec's 7 retries of 67 ms, as a host too busy to run the relay is. Queue pairs with sends
// outstanding fail "retry exceeded", each having spent its 7 retries, every one an ACK timeout or
// a sequence NAK its peer sent (checked from the NICs' counters); nothing else breaks a rule.
t.test('a path silent for 2 s on a harmless wire: queue pairs fail only by spending their retries', async (t) => {
  const r = await runHostileWire({ seed: 1, messages: MESSAGES, holdPathMs: 2000, timeoutMs: 240_000 });
  for (const f of r.failures) t.comment(`failed: ${f}`);
  t.same(r.problems, [], 'no rule broken (replay: npx tap test/hostile-wire.test.ts)');
  t.ok(r.failures.length > 0, 'queue pairs with sends outstanding failed');
  t.ok(r.failures.every((f) => f.endsWith('(TRANSPORT_RETRY_CNT_ERR)')), 'each by running out of retries');
});
