/**
 * The bandwidth loops of `rig-bnxt perf` (send_bw, read_bw) over one or more queue pairs, as
 * perftest's run_iter_bw and run_iter_bw_server run them (linux-rdma/perftest
 * src/perftest_resources.c): every QP runs `iterations` messages with at most `window` of its own
 * outstanding (-t is per QP), the QPs are served in turn, and the timestamps are kept across all
 * of them in the order posts and completions happen (tposted[totscnt], tcompleted[totccnt]), so
 * a size's figures count iterations x QPs messages.
 *
 * perftest polls one completion queue shared by its QPs; here each queue pair has its own, so a
 * sweep polls each in turn, and when a sweep finds nothing the loop waits a little on the next
 * QP with something due (a completion of any QP ends that wait's sleep early, as the device
 * wakes it) before sweeping again. Nothing is allocated per message: the per-QP counters are
 * typed arrays made once per run.
 *
 * Buffers: every QP sends (or reads) from offset 0 of its side's region and receives (or reads
 * into) its own slice at (1 + i) x size, as perftest gives each QP its own receive buffer.
 */
import type { Qp, Region } from '../../lib/index.ts';
import { PerfError, WAIT_US } from './perf-loops.ts';

/** A sweep of every QP found nothing: wait at most this long on one of them, then sweep again. */
const TURN_WAIT_US = 50;

const now = () => performance.now() * 1000;

/** Where queue pair `i` of a side receives (or reads into): its own slice after the outgoing bytes. */
export function incomingOffset(i: number, size: number): number {
  return (1 + i) * size;
}

/** The region bytes a side of `qps` queue pairs needs for messages of `size` bytes. */
export function regionBytesFor(qps: number, size: number): number {
  return Math.max((1 + qps) * size, 64);
}

function failed(qp: Qp, i: number, side: 'send' | 'receive'): never {
  throw new PerfError(`${side} failed on QP ${i}: ${qp.lastError}`);
}

function checkStuck(lastProgressUs: number, side: 'send' | 'receive'): void {
  if (now() - lastProgressUs > WAIT_US) throw new PerfError(`no ${side} completion within ${WAIT_US / 1e6} s`);
}

/**
 * The next QP after `from` (in turn) with `outstanding[i] > 0`, or -1. Turns go round so that
 * no QP is always the one waited on.
 */
function nextDue(outstandingOf: (i: number) => number, q: number, from: number): number {
  for (let k = 1; k <= q; k++) {
    const i = (from + k) % q;
    if (outstandingOf(i) > 0) return i;
  }
  return -1;
}

/**
 * send_bw with both sides here: as[i] sends to bs[i], which keeps up to `window` receives posted;
 * a send is posted only once its receive is (no RNR in a local run). posted/completed hold
 * iterations x as.length timestamps.
 */
export function sendBandwidthLocal(as: readonly Qp[], bs: readonly Qp[], ra: Region, rb: Region, size: number,
  posted: Float64Array, completed: Float64Array, tick: ((i: number) => void) | undefined, window: number): void {
  const q = as.length;
  const iters = posted.length / q;
  const recvPosted = new Int32Array(q);
  const recvDone = new Int32Array(q);
  const receiver: Peer = {
    allow(i) {
      const b = bs[i]!;
      const at = incomingOffset(i, size);
      while (recvPosted[i]! < iters && recvPosted[i]! - recvDone[i]! < window) {
        b.receive(rb, at, size);
        recvPosted[i]!++;
      }
      return recvPosted[i]!;
    },
    sweep(i) {
      const b = bs[i]!;
      let found = 0;
      for (let r = b.pollBytes('receive'); r !== -1; r = b.pollBytes('receive')) {
        if (r === -2) failed(b, i, 'receive');
        recvDone[i]!++;
        found++;
      }
      return found;
    },
  };
  postAndComplete(as, size, posted, completed, tick, window, (a) => a.send(ra, 0, size), receiver);
  // Every receive completes too, so nothing is left posted for the next size.
  for (let i = 0; i < q; i++) {
    const b = bs[i]!;
    while (recvDone[i]! < recvPosted[i]!) {
      const r = b.waitBytes('receive', WAIT_US);
      if (r === -1) throw new PerfError(`no receive completion within ${WAIT_US / 1e6} s`);
      if (r === -2) failed(b, i, 'receive');
      recvDone[i]!++;
    }
  }
}

/** read_bw: as[i] keeps `window` reads of rb outstanding, each into its own slice of ra. */
export function readBandwidth(
  as: readonly Qp[], ra: Region, rb: Region, size: number, posted: Float64Array, completed: Float64Array,
  tick: ((i: number) => void) | undefined, window: number,
): void {
  postAndComplete(as, size, posted, completed, tick, window,
    (a, i) => a.read(rb, 0, ra, incomingOffset(i, size), size));
}

/** The client side of a two-process send_bw: the server keeps receives posted (RNR retries cover a slow start). */
export function sendBandwidthClient(
  as: readonly Qp[], ra: Region, size: number, posted: Float64Array, completed: Float64Array,
  tick: ((i: number) => void) | undefined, window: number,
): void {
  postAndComplete(as, size, posted, completed, tick, window, (a) => a.send(ra, 0, size));
}

/** The receiving side of a loop that runs both sides (send_bw here), served with each QP in turn. */
interface Peer {
  /** Posts what QP i's peer keeps posted; returns how many sends QP i may have posted by now. */
  allow(i: number): number;
  /** Takes the completions QP i's peer has; returns how many. */
  sweep(i: number): number;
}

/**
 * run_iter_bw: per QP, post up to `window` outstanding, take send completions in sweeps; with
 * `peer`, its receives are kept posted and taken in the same turns (a send waits for its receive).
 */
function postAndComplete(
  as: readonly Qp[], size: number, posted: Float64Array, completed: Float64Array,
  tick: ((i: number) => void) | undefined, window: number, post: (a: Qp, i: number) => void, peer?: Peer,
): void {
  const q = as.length;
  const total = posted.length;
  const iters = total / q;
  const sent = new Int32Array(q);
  const done = new Int32Array(q);
  const due = (i: number) => sent[i]! - done[i]!;
  let totSent = 0;
  let totDone = 0;
  let turn = q - 1;
  let lastProgress = now();
  while (totDone < total) {
    for (let i = 0; i < q; i++) {
      const a = as[i]!;
      const allowed = peer === undefined ? iters : peer.allow(i);
      while (sent[i]! < iters && sent[i]! - done[i]! < window && sent[i]! < allowed) {
        posted[totSent++] = now();
        post(a, i);
        sent[i]!++;
      }
    }
    let found = 0;
    for (let i = 0; i < q; i++) {
      const a = as[i]!;
      for (let n = a.pollBytes('send'); n !== -1; n = a.pollBytes('send')) {
        if (n === -2) failed(a, i, 'send');
        done[i]!++;
        completed[totDone++] = now();
        tick?.(totDone - 1);
        found++;
      }
      if (peer !== undefined) found += peer.sweep(i);
    }
    if (found > 0) { lastProgress = now(); continue; }
    const i = nextDue(due, q, turn);
    if (i < 0) continue;
    turn = i;
    const n = as[i]!.waitBytes('send', TURN_WAIT_US);
    if (n === -2) failed(as[i]!, i, 'send');
    if (n >= 0) {
      done[i]!++;
      completed[totDone++] = now();
      tick?.(totDone - 1);
      lastProgress = now();
    } else checkStuck(lastProgress, 'send');
  }
}

/** perftest's server keeps min(iterations, rx depth) receives posted per QP (its default rx depth 512). */
export const SERVER_RX_DEPTH = 512;

/** The receives a two-process server posts on each QP before the pre-run barrier (the peer may send right after it). */
export function prepostReceives(bs: readonly Qp[], rb: Region, size: number, count: number): void {
  for (let i = 0; i < bs.length; i++) {
    const at = incomingOffset(i, size);
    for (let k = 0; k < count; k++) bs[i]!.receive(rb, at, size);
  }
}

/**
 * The server side of a two-process send_bw (run_iter_bw_server): `preposted` receives are up on
 * each QP (prepostReceives); keep up to SERVER_RX_DEPTH posted per QP until each received
 * `iterations`. Returns the microseconds from the first receive's completion to the last one's.
 */
export function sendBandwidthServer(
  bs: readonly Qp[], rb: Region, size: number, iterations: number, preposted: number,
): number {
  const q = bs.length;
  const total = iterations * q;
  const postedOn = new Int32Array(q).fill(preposted);
  const done = new Int32Array(q);
  const due = (i: number) => postedOn[i]! - done[i]!;
  let totDone = 0;
  let first = 0;
  let turn = q - 1;
  let lastProgress = now();
  const took = (i: number): void => {
    if (totDone === 0) first = now();
    done[i]!++;
    totDone++;
  };
  while (totDone < total) {
    for (let i = 0; i < q; i++) {
      const at = incomingOffset(i, size);
      while (postedOn[i]! < iterations && postedOn[i]! - done[i]! < SERVER_RX_DEPTH) {
        bs[i]!.receive(rb, at, size);
        postedOn[i]!++;
      }
    }
    let found = 0;
    for (let i = 0; i < q; i++) {
      const b = bs[i]!;
      for (let r = b.pollBytes('receive'); r !== -1; r = b.pollBytes('receive')) {
        if (r === -2) failed(b, i, 'receive');
        took(i);
        found++;
      }
    }
    if (found > 0) { lastProgress = now(); continue; }
    const i = nextDue(due, q, turn);
    if (i < 0) continue;
    turn = i;
    const r = bs[i]!.waitBytes('receive', TURN_WAIT_US);
    if (r === -2) failed(bs[i]!, i, 'receive');
    if (r >= 0) { took(i); lastProgress = now(); } else checkStuck(lastProgress, 'receive');
  }
  return now() - first;
}
