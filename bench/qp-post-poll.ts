/**
 * The driver's own ring work per operation, the hot path the issue compares with C (goal:
 * <= 1.5x ring-work.c): Qp.send (argument checks, the SEND WQE and its MSN-table entry: on the
 * default BCM57608 48 bytes in variable WQE mode, as ring-work.c writes them, on a BCM57508 128
 * bytes and a PSN-search entry; one 64-bit doorbell) plus Qp.pollBytes of its completion (the
 * CQE read by its toggle bit, the consumer advanced; the CQ doorbell rides on a post once in
 * ~4096, completion-queue.ts). The NIC (`emu`, its model inline) runs the sends for real; the
 * time it takes to complete them is left out: a batch of sends is posted (timed), the NIC's CQEs
 * for all of them are awaited (not timed: the model runs there), then all are polled (timed).
 * The reference, ring-work.c's batch measure, is built the same way in C. The receive side's
 * ring work (Qp.receive + its poll) is measured the same way and shown as a second row.
 */
import { benchResult, ratioAtMost } from './helpers/result.ts';
import { clockOf, completionQueues, openBenchPair, spinUntilReady, type BenchPair } from './helpers/qp-setup.ts';
import { nowNs, summarize, type Durations } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'qp-post-poll';

/** Entries per batch: enough to dwarf the two clock reads, well within a ring (4095). */
const BATCH = 512;
const SPIN_LIMIT = 1e9;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const reference = await options.references.figure('ring-work', 'ns_batch_median');
  const p = openBenchPair({}, 1 << 16);
  try {
    const m = measure(p, options.durations);
    const send = summarize(m.send);
    const receive = summarize(m.receive);
    return [
      benchResult({
        label: 'send post + doorbell + poll (driver ring work, NIC time excluded), median', figure: send.median,
        unit: 'ns', reference, goal: ratioAtMost(1.5),
        detail: `${send.count} batches of ${BATCH} 64 B sends (model inline: it runs only in the untimed wait); per ` +
          `send: Qp.send + Qp.pollBytes; p90 ${send.p90.toFixed(0)} ns`,
      }),
      benchResult({
        label: 'receive post + doorbell + poll (driver ring work), median', figure: receive.median, unit: 'ns',
        reference, detail: `per receive: Qp.receive + Qp.pollBytes, same batches; p90 ${receive.p90.toFixed(0)} ns`,
      }),
    ];
  } finally {
    p.close();
  }
}

function measure(p: BenchPair, d: Durations): { send: Float64Array; receive: Float64Array } {
  const { a, b, ra, rb } = p;
  const aCq = completionQueues(a).send;
  const bCq = completionQueues(b).receive;
  const clock = clockOf(p.nic);
  const send = new Float64Array(d.maxSamples);
  const receive = new Float64Array(d.maxSamples);
  let count = 0;
  const oneBatch = (record: boolean) => {
    const t0 = nowNs();
    for (let i = 0; i < BATCH; i++) b.receive(rb, 0, 64);
    const t1 = nowNs();
    for (let i = 0; i < BATCH; i++) a.send(ra, 0, 64);
    const t2 = nowNs();
    // The NIC's work, not timed: every send and every receive completed.
    if (!spinUntilReady(aCq, BATCH - 1, SPIN_LIMIT, clock) || !spinUntilReady(bCq, BATCH - 1, SPIN_LIMIT, clock))
      throw new Error('the NIC did not complete a batch');
    const t3 = nowNs();
    for (let i = 0; i < BATCH; i++) if (a.pollBytes('send') !== 64) throw new Error(`send completion: ${a.lastError}`);
    const t4 = nowNs();
    for (let i = 0; i < BATCH; i++)
      if (b.pollBytes('receive') !== 64) throw new Error(`receive completion: ${b.lastError}`);
    const t5 = nowNs();
    if (record) {
      send[count] = (t2 - t1 + (t4 - t3)) / BATCH;
      receive[count] = (t1 - t0 + (t5 - t4)) / BATCH;
      count++;
    }
  };
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) oneBatch(false);
  const end = nowNs() + d.runMs * 1e6;
  while (count < d.maxSamples && nowNs() < end) oneBatch(true);
  return { send: send.subarray(0, count), receive: receive.subarray(0, count) };
}
