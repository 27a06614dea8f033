/**
 * The latency loops of `rig-bnxt perf` (send_lat, read_lat) on the spec's API; the bandwidth
 * loops, over one or more queue pairs, are in perf-loops-bw.ts. Each loop fills preallocated
 * Float64Arrays of microsecond timestamps; nothing is allocated per iteration (pollBytes /
 * waitBytes, not the Result-returning calls).
 */
import type { Qp, Region } from '../../lib/index.ts';

/** How long one completion may take before the run is declared stuck (a software NIC may retry). */
export const WAIT_US = 10_000_000;
/** Outstanding reads (the QP's read depth). */
export const READ_WINDOW = 16;

export class PerfError extends Error {}

const now = () => performance.now() * 1000;

function take(qp: Qp, side: 'send' | 'receive'): number {
  const n = qp.waitBytes(side, WAIT_US);
  if (n === -1) throw new PerfError(`no ${side} completion within ${WAIT_US / 1e6} s`);
  if (n === -2) throw new PerfError(`${side} failed: ${qp.lastError}`);
  return n;
}

/** send_lat, both sides here: a sends, b answers; samples are round trips. */
export function sendLatencyLocal(
  a: Qp, b: Qp, ra: Region, rb: Region, size: number, samples: Float64Array, tick?: (i: number) => void,
): void {
  a.receive(ra, size, size);
  b.receive(rb, size, size);
  for (let i = 0; i < samples.length; i++) {
    const t0 = now();
    a.send(ra, 0, size);
    take(b, 'receive');
    b.receive(rb, size, size);
    b.send(rb, 0, size);
    take(a, 'receive');
    samples[i] = now() - t0;
    a.receive(ra, size, size);
    take(a, 'send');
    take(b, 'send');
    tick?.(i);
  }
  // Leave nothing posted: the last receives are taken when the QPs are destroyed.
}

/** read_lat: a reads `size` bytes of rb (served by b on the same NIC); samples are round trips. */
export function readLatency(
  a: Qp, ra: Region, rb: Region, size: number, samples: Float64Array, tick?: (i: number) => void,
): void {
  for (let i = 0; i < samples.length; i++) {
    const t0 = now();
    a.read(rb, 0, ra, 0, size);
    take(a, 'send');
    samples[i] = now() - t0;
    tick?.(i);
  }
}

/**
 * The server side of a two-process send_lat: answer every message (one receive was posted
 * before the barrier). samples[i] is the time between receives i and i + 1: one round trip.
 */
export function sendLatencyServer(b: Qp, rb: Region, size: number, iterations: number, samples?: Float64Array): void {
  let last = 0;
  for (let i = 0; i < iterations; i++) {
    take(b, 'receive');
    const t = now();
    if (i > 0 && samples !== undefined && i - 1 < samples.length) samples[i - 1] = t - last;
    last = t;
    if (i + 1 < iterations) b.receive(rb, size, size);
    b.send(rb, 0, size);
    take(b, 'send');
  }
}

/** The client side of a two-process send_lat. */
export function sendLatencyClient(
  a: Qp, ra: Region, size: number, samples: Float64Array, tick?: (i: number) => void,
): void {
  for (let i = 0; i < samples.length; i++) {
    a.receive(ra, size, size);
    const t0 = now();
    a.send(ra, 0, size);
    take(a, 'receive');
    samples[i] = now() - t0;
    take(a, 'send');
    tick?.(i);
  }
}
