// Issue 5, the soak, short form (npm run soak runs 10^6 messages): messages of mixed sizes,
// sends between two software NICs and reads within each, under 1 % drop, 1 % duplicate,
// 1 % reorder and 0.1 % corruption of every frame sent. No message lost, duplicated or
// corrupted, completions in order, rooms consistent, and the run reproducible by its seed.
// SEED=n replays a run; the seed is printed with every assertion.
import t from 'tap';
import { runSoak, faultTotals } from '../scripts/stress/soak-run.ts';
import { seedFor } from './failure-setup.ts';

const MESSAGES = 150_000;

t.test(`soak: ${MESSAGES} messages under drop, duplicate, reorder and corruption arrive once, intact, in order; the ` +
  `same seed gives the same run`, async (t) => {
  const seed = seedFor(20261130);
  const first = runSoak({ seed, messages: MESSAGES });
  t.comment(
    `seed ${seed}: ${first.sends} sends, ${first.reads} reads, ${(first.bytes / 1e6).toFixed(1)} MB, ` +
      `${(first.virtualNs / 1e9).toFixed(2)} s of NIC time in ${(first.wallMs / 1000).toFixed(1)} s; digest ` +
      `${first.digest}`,
  );
  t.same(first.problems, [],
    `no message lost, duplicated, corrupted or out of order; every room consistent (replay: SEED=${seed})`);
  t.equal(first.messages, MESSAGES, `every message completed (SEED=${seed})`);
  t.ok(first.sends > MESSAGES / 2 && first.reads > MESSAGES / 10, `sends and reads mixed (SEED=${seed})`);
  const f = faultTotals(first);
  t.comment(JSON.stringify(f));
  const sent = f['framesSent']!;
  t.ok(f['faultTxDropped']! > sent * 0.005 && f['faultDuplicated']! > sent * 0.005 &&
    f['faultReordered']! > sent * 0.005 && f['faultCorrupted']! > sent * 0.0005,
    `the faults happened at about their rates: ${f['faultTxDropped']} dropped, ${f['faultDuplicated']} duplicated, ` +
      `${f['faultReordered']} reordered, ${f['faultCorrupted']} corrupted of ${sent} frames (SEED=${seed})`);
  t.ok(f['dropBAD_ICRC']! >= f['faultCorrupted']!,
    `every corrupted frame failed its ICRC and was dropped (duplicates of one count twice) (SEED=${seed})`);
  t.ok(f['retransmitEvents']! > 0 && f['duplicateRequests']! > 0,
    `the transport recovered: ${f['retransmitEvents']} go-back-N episodes, ${f['duplicateRequests']} duplicates ` +
    `answered (SEED=${seed})`);

  const again = runSoak({ seed, messages: MESSAGES });
  t.equal(again.digest, first.digest,
    `the same seed gives the same run: every completion, counter and the NIC time (SEED=${seed})`);
  t.same(again.counters, first.counters, `the same counters (SEED=${seed})`);
  const other = runSoak({ seed: seed + 1, messages: 20_000 });
  const short = runSoak({ seed, messages: 20_000 });
  t.same(other.problems, [], `another seed runs clean too (SEED=${seed + 1})`);
  t.not(other.digest, short.digest, 'and another seed gives another run');
});

t.test('soak: its checks see a message that was damaged after it landed', async (t) => {
  const seed = seedFor(7);
  const r = runSoak({ seed, messages: 5_000, tamperWithReceive: 1234 });
  t.equal(r.problems.length, 1, `exactly one problem: the damaged receive (SEED=${seed})`);
  t.match(r.problems[0] ?? '', /receive \d+.*(corrupted|took message)/, r.problems[0]);
});
