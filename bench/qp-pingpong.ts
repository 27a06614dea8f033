/**
 * A 64-byte send/receive round trip between two queue pairs of one software NIC (issue goal:
 * <= 3x shm-ping.c): a sends 64 B to b; b's receive completes, b sends 64 B back; a's receive
 * completes. Each side reposts its receive and takes its send's completion inside the trip,
 * with the allocation-free calls (waitBytes: it spins, then sleeps). The NIC's model runs in its worker thread, so
 * each way crosses between two cores, as in the shared-memory ping-pong it is compared with;
 * between them runs the whole RC transport: the requester builds the RoCEv2 frame with its
 * ICRC, the loop cable carries it, the responder checks it, writes the payload and the CQE.
 */
import { benchResult, ratioAtMost } from './helpers/result.ts';
import { openBenchPair, waitOne } from './helpers/qp-setup.ts';
import { sampleEach, summarize, type Durations, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'qp-pingpong';

const BYTES = 64;
const LIMIT_US = 10e6;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const refMedian = await options.references.figure('shm-ping', 'ns_median');
  const refP99 = await options.references.figure('shm-ping', 'ns_p99');
  const thread = measureTrips(false, options.durations);
  // The same trips with the model stepped in this thread: the CPU work alone, no thread
  // crossing and no waiting for a core. Shown as a detail, to say which part to look at.
  const stepped = measureTrips(true, options.durations);
  const detail = `${thread.count} round trips on a thread-mode NIC (loop cable); min ${us(thread.min)}, p90 ${us(thread.p90)}; `
    + `model stepped in the driver's thread (no crossing): median ${us(stepped.median)}, p99 ${us(stepped.p99)}`;
  return [
    benchResult({ label: '64 B send/receive round trip, one NIC, median', figure: thread.median / 1e3, unit: 'us', reference: refMedian, goal: ratioAtMost(3), detail }),
    benchResult({ label: '64 B send/receive round trip, one NIC, p99', figure: thread.p99 / 1e3, unit: 'us', reference: refP99 }),
  ];
}

function measureTrips(stepped: boolean, d: Durations): Summary {
  const p = openBenchPair({ stepped }, 1 << 16);
  try {
    const { a, b, ra, rb } = p;
    a.receive(ra, 4096, BYTES);
    b.receive(rb, 4096, BYTES);
    const trip = () => {
      a.send(ra, 0, BYTES);
      if (waitOne(b, 'receive', LIMIT_US) !== BYTES) throw new Error('b received a message of another length');
      b.receive(rb, 4096, BYTES);
      b.send(rb, 0, BYTES);
      if (waitOne(a, 'receive', LIMIT_US) !== BYTES) throw new Error('a received a message of another length');
      a.receive(ra, 4096, BYTES);
      waitOne(a, 'send', LIMIT_US);
      waitOne(b, 'send', LIMIT_US);
    };
    return summarize(sampleEach(trip, d));
  } finally {
    p.close();
  }
}

const us = (ns: number) => `${(ns / 1e3).toFixed(1)} us`;
