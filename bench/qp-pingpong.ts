/**
 * A 64-byte send/receive round trip between two queue pairs of one software NIC (issue 13 goal:
 * <= 3x shm-ping.c): a sends 64 B to b; b's receive completes, b sends 64 B back; a's receive
 * completes. Each side reposts its receive and takes its send's completion inside the trip,
 * with the allocation-free calls (waitBytes: it spins, then sleeps). The NIC's model runs inline
 * in the driver's thread (the loop cable's default), so no way crosses between cores; the
 * shared-memory ping-pong beside it is the floor of a crossing. Between them runs the whole RC transport: the requester
 * builds the RoCEv2 frame with its ICRC, the loop cable carries it, the responder checks it, writes the payload and the
 * CQE.
 */
import type { NicOptions } from '../lib/index.ts';
import { atMost, benchResult } from './helpers/result.ts';
import { openBenchPair, waitOne } from './helpers/qp-setup.ts';
import { cpuNs, sampleEach, summarize, type Durations, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'qp-pingpong';

const BYTES = 64;
const LIMIT_US = 10e6;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const refMedian = await options.references.figure('shm-ping', 'ns_median');
  const refP99 = await options.references.figure('shm-ping', 'ns_p99');
  // The NIC as `emu` opens it: the model inline in this thread on the real clock. The same trips
  // with the model in a worker thread (`thread: true`) are shown as a detail.
  const inline = measureTrips({}, options.durations);
  const thread = measureTrips({ thread: true }, options.durations);
  const detail =
    `${inline.count} round trips, model inline (loop cable); min ${us(inline.min)}, p90 ${us(inline.p90)}, mean ` +
    `${us(inline.mean)}, CPU time ${us(inline.cpuPerTrip)} a trip (of this process, warm-up included); `
    + `model in a worker thread: median ${us(thread.median)}, p99 ${us(thread.p99)}`;
  return [
    benchResult({
      label: '64 B send/receive round trip, one NIC, median', figure: inline.median / 1e3, unit: 'us',
      reference: refMedian, goal: atMost(6), detail,
    }),
    benchResult({
      label: '64 B send/receive round trip, one NIC, p99', figure: inline.p99 / 1e3, unit: 'us', reference: refP99,
      goal: atMost(30),
    }),
  ];
}

/** The trips' times, and the process CPU time a trip. */
function measureTrips(options: NicOptions, d: Durations): Summary & { cpuPerTrip: number } {
  const p = openBenchPair(options, 1 << 16);
  try {
    const { a, b, ra, rb } = p;
    a.receive(ra, 4096, BYTES);
    b.receive(rb, 4096, BYTES);
    let trips = 0;
    const trip = () => {
      trips++;
      a.send(ra, 0, BYTES);
      if (waitOne(b, 'receive', LIMIT_US) !== BYTES) throw new Error('b received a message of another length');
      b.receive(rb, 4096, BYTES);
      b.send(rb, 0, BYTES);
      if (waitOne(a, 'receive', LIMIT_US) !== BYTES) throw new Error('a received a message of another length');
      a.receive(ra, 4096, BYTES);
      waitOne(a, 'send', LIMIT_US);
      waitOne(b, 'send', LIMIT_US);
    };
    const cpuStart = cpuNs();
    const s = summarize(sampleEach(trip, d));
    return { ...s, cpuPerTrip: (cpuNs() - cpuStart) / trips };
  } finally {
    p.close();
  }
}

const us = (ns: number) => `${(ns / 1e3).toFixed(1)} us`;
