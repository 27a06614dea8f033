/**
 * The measuring loops of `rig-bnxt perf`, perftest's four tests on the spec's API. Each loop
 * fills preallocated Float64Arrays of microsecond timestamps; nothing is allocated per
 * iteration (pollBytes / waitBytes, not the Result-returning calls).
 */
import type { Qp, Region } from '../../lib/index.ts';

/** How long one completion may take before the run is declared stuck (a software NIC may retry). */
const WAIT_US = 10_000_000;
/** Outstanding sends in bandwidth tests (perftest's default tx depth is 128). */
export const SEND_WINDOW = 128;
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
export function sendLatencyLocal(a: Qp, b: Qp, ra: Region, rb: Region, size: number, samples: Float64Array, tick?: (i: number) => void): void {
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
export function readLatency(a: Qp, ra: Region, rb: Region, size: number, samples: Float64Array, tick?: (i: number) => void): void {
  for (let i = 0; i < samples.length; i++) {
    const t0 = now();
    a.read(rb, 0, ra, 0, size);
    take(a, 'send');
    samples[i] = now() - t0;
    tick?.(i);
  }
}

/** send_bw, both sides here: a keeps SEND_WINDOW sends outstanding, b keeps receives posted. */
export function sendBandwidthLocal(a: Qp, b: Qp, ra: Region, rb: Region, size: number, posted: Float64Array, completed: Float64Array, tick?: (i: number) => void, window = SEND_WINDOW): void {
  const iters = posted.length;
  let sent = 0;
  let done = 0;
  let recvPosted = 0;
  let recvDone = 0;
  while (done < iters) {
    while (recvPosted < iters && recvPosted - recvDone < window) { b.receive(rb, 0, size); recvPosted++; }
    while (sent < iters && sent - done < window && sent < recvPosted) {
      posted[sent] = now();
      a.send(ra, 0, size);
      sent++;
    }
    let n = a.pollBytes('send');
    if (n === -1) n = a.waitBytes('send', WAIT_US);
    if (n === -1) throw new PerfError(`no send completion within ${WAIT_US / 1e6} s`);
    if (n === -2) throw new PerfError(`send failed: ${a.lastError}`);
    completed[done++] = now();
    tick?.(done);
    for (let r = b.pollBytes('receive'); r !== -1; r = b.pollBytes('receive')) {
      if (r === -2) throw new PerfError(`receive failed: ${b.lastError}`);
      recvDone++;
    }
  }
  while (recvDone < recvPosted) { take(b, 'receive'); recvDone++; }
}

/** read_bw: a keeps READ_WINDOW reads of rb outstanding. */
export function readBandwidth(a: Qp, ra: Region, rb: Region, size: number, posted: Float64Array, completed: Float64Array, tick?: (i: number) => void, window = READ_WINDOW): void {
  const iters = posted.length;
  let sent = 0;
  let done = 0;
  while (done < iters) {
    while (sent < iters && sent - done < window) {
      posted[sent] = now();
      a.read(rb, 0, ra, 0, size);
      sent++;
    }
    take(a, 'send');
    completed[done++] = now();
    tick?.(done);
  }
}

/** perftest's server keeps min(iterations, rx depth) receives posted (its default rx depth 512). */
export const SERVER_RX_DEPTH = 512;

/** The receives a two-process server posts before the pre-run barrier (the peer may send right after it). */
export function prepostReceives(b: Qp, rb: Region, size: number, count: number): void {
  for (let i = 0; i < count; i++) b.receive(rb, 0, size);
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
    if (i + 1 < iterations) b.receive(rb, 0, size);
    b.send(rb, 0, size);
    take(b, 'send');
  }
}

/** The client side of a two-process send_lat. */
export function sendLatencyClient(a: Qp, ra: Region, size: number, samples: Float64Array, tick?: (i: number) => void): void {
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

/**
 * The server side of a two-process send_bw: `preposted` receives are up (prepostReceives); keep
 * up to SERVER_RX_DEPTH posted until `iterations` arrived. Returns the microseconds from the
 * first receive's completion to the last one's.
 */
export function sendBandwidthServer(b: Qp, rb: Region, size: number, iterations: number, preposted: number): number {
  let posted = preposted;
  let done = 0;
  let first = 0;
  while (done < iterations) {
    while (posted < iterations && posted - done < SERVER_RX_DEPTH) { b.receive(rb, 0, size); posted++; }
    take(b, 'receive');
    if (done === 0) first = now();
    done++;
  }
  return now() - first;
}

/** The client side of a two-process send_bw (the server keeps receives posted; RNR retries cover a slow start). */
export function sendBandwidthClient(a: Qp, ra: Region, size: number, posted: Float64Array, completed: Float64Array, tick?: (i: number) => void, window = SEND_WINDOW): void {
  const iters = posted.length;
  let sent = 0;
  let done = 0;
  while (done < iters) {
    while (sent < iters && sent - done < window) {
      posted[sent] = now();
      a.send(ra, 0, size);
      sent++;
    }
    take(a, 'send');
    completed[done++] = now();
    tick?.(done);
  }
}
