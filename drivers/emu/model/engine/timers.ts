/**
 * The requester's two timers, kept as deadlines on the model's clock (never a wall clock):
 *   - the local ACK timeout (IBA 9.7.6.1.3, the transport timer): 4.096 us x 2^timeout,
 *     0 = infinite; running while packets are unacknowledged, restarted on progress;
 *   - the RNR timer: the delay an RNR NAK's AETH advertises (IBA Table 45, wire/aeth.ts).
 * Neither counts from the time its run began: in real time a run may last milliseconds, and a
 * timeout counted from its start would expire up to that much early after the packet actually
 * left (seen as resends 61 ms after the first transmission of a 67 ms timeout in a sender-side
 * capture on a loaded machine). The RNR timer starts at the time read when it starts
 * (bus.liveNow). An ACK timer (re)started during a run starts at that run's end (stampAckTimers,
 * one clock read for all of them): after its packet left or its ACK came, so never early, late
 * by at most the rest of the run. A clock read per packet sent or ACK taken was a new heap number
 * each (Node 20's clocks all allocate), the model's worker's garbage in the zero-GC benchmark.
 */
import { RNR_TIMER_US } from '../wire/aeth.ts';
import { ReqState } from './states.ts';
import { psnDiff } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import type { EngineCore } from './core.ts';
import type { QpTransport } from './transport.ts';

const ACK_TIMEOUT_UNIT_NS = 4096;

/** Each 5-bit timeout code's ACK timeout in ns: a table read, so no double is made per packet. */
const ACK_TIMEOUT_NS = Float64Array.from({ length: 32 }, (_, c) => (c === 0 ? Infinity : ACK_TIMEOUT_UNIT_NS * 2 ** c));

/** Local ACK timeout of a QP's 5-bit timeout code, in ns (Infinity for 0). */
export function ackTimeoutNs(code: number): number {
  return ACK_TIMEOUT_NS[code & 0x1f]!;
}

/** RNR NAK delay of a 5-bit timer code, in ns. */
export function rnrDelayNs(code: number): number {
  return RNR_TIMER_US[code & 0x1f]! * 1000;
}

/** Packets sent and not yet acknowledged (or read responses not yet received). */
export function hasOutstanding(t: QpTransport): boolean {
  return t.compWqe < t.fetchedWqe && psnDiff(t.sentHighPsn, t.ackPsn) > 0;
}

/**
 * An ACK timer started in this run, waiting for stampAckTimers: running (startAckTimer leaves it),
 * never due (a fireTimers before the stamp does not fire it).
 */
const ACK_TIMER_STARTING = Number.MAX_VALUE;

/** Starts the ACK timer if it is not running (a packet needing a response just left). */
export function startAckTimer(core: EngineCore, t: QpTransport): void {
  if (t.ackDeadlineNs !== Infinity) return;
  t.ackDeadlineNs = ACK_TIMER_STARTING;
  core.ackTimersStarting++;
  // Outside a run (a QP modified by a command), the next run is due at once and stamps it.
  if (core.nowNs < core.timerDeadlineNs) core.timerDeadlineNs = core.nowNs;
}

/**
 * The ACK timers started since the last stamp count from now (the run's end): one clock read.
 * Sets the engine's earliest deadline (as fireTimers does). Every run ends with it.
 */
export function stampAckTimers(core: EngineCore): void {
  if (core.ackTimersStarting === 0) return;
  core.ackTimersStarting = 0;
  const bus = core.bus;
  bus.readLiveNow();
  const live = core.live;
  let earliest = Infinity;
  for (let i = 0; i < live.length; i++) {
    const t = live[i]!;
    // The deadline goes into fields, never through a call: a double argument is a heap number.
    if (t.ackDeadlineNs === ACK_TIMER_STARTING) t.ackDeadlineNs = bus.liveNs + ACK_TIMEOUT_NS[t.qp.timeout & 0x1f]!;
    if (t.ackDeadlineNs < earliest) earliest = t.ackDeadlineNs;
    if (t.rnrDeadlineNs < earliest) earliest = t.rnrDeadlineNs;
  }
  core.timerDeadlineNs = earliest;
}

/** Progress was made: the timer restarts if something is still outstanding, else stops. */
export function restartAckTimer(core: EngineCore, t: QpTransport): void {
  if (t.reqState === ReqState.READY && hasOutstanding(t)) {
    t.ackDeadlineNs = Infinity;
    startAckTimer(core, t);
  } else {
    t.ackDeadlineNs = Infinity;
  }
}

export function startRnrTimer(core: EngineCore, t: QpTransport, code: number): void {
  const bus = core.bus;
  bus.readLiveNow();
  const deadline = bus.liveNs + RNR_TIMER_US[code & 0x1f]! * 1000;
  t.rnrDeadlineNs = deadline;
  t.ackDeadlineNs = Infinity;
  core.armTimer(deadline);
}
