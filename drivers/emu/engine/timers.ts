/**
 * The requester's two timers, kept as deadlines on the model's clock (never a wall clock):
 *   - the local ACK timeout (IBA 9.7.6.1.3, the transport timer): 4.096 us x 2^timeout,
 *     0 = infinite; running while packets are unacknowledged, restarted on progress;
 *   - the RNR timer: the delay an RNR NAK's AETH advertises (IBA Table 45, wire/aeth.ts).
 * Both start at the time read when they start (bus.liveNow), not at the time their run began:
 * in real time a run may last milliseconds, and a timeout counted from its start would expire
 * up to that much early after the packet actually left (seen as resends 61 ms after the first
 * transmission of a 67 ms timeout in a sender-side capture on a loaded machine).
 */
import { RNR_TIMER_US } from '../wire/aeth.ts';
import { ReqState } from './states.ts';
import { psnDiff } from '../../../firmware-hwrm/roce/ib-transport.ts';
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

/** Starts the ACK timer if it is not running (a packet needing a response just left). */
export function startAckTimer(core: EngineCore, t: QpTransport): void {
  if (t.ackDeadlineNs !== Infinity) return;
  // The deadline goes into fields, never through a call: a double argument is a heap number.
  t.ackDeadlineNs = core.bus.liveNow() + ackTimeoutNs(t.qp.timeout);
  if (t.ackDeadlineNs < core.timerDeadlineNs) core.timerDeadlineNs = t.ackDeadlineNs;
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
  const deadline = core.bus.liveNow() + rnrDelayNs(code);
  t.rnrDeadlineNs = deadline;
  t.ackDeadlineNs = Infinity;
  core.armTimer(deadline);
}
