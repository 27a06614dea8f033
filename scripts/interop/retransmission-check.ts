/**
 * "No retransmission before its timeout", checked on a capture taken by the sender itself (the
 * software NIC's own pcap, --pcap / RIG_BNXT_PCAP): it stamps each frame it sends when it sends
 * it and each frame it receives when it arrives, in the thread its timers run in, so the times
 * between events there are the sender's own. A capture taken elsewhere (QEMU's NIC on a loaded
 * host) delays some frames more than others and cannot prove a sender early.
 *
 * The rule (IBA 9.7.6.1: a requester retransmits when its transport timer expires or when the
 * responder asks for it), per requester flow, in capture order:
 *   - a request packet whose PSN was sent before is a retransmission;
 *   - the first of a run of retransmissions (a burst head) is legal if a NAK asked for it (a
 *     sequence NAK naming a PSN at or before it, or an RNR NAK whose advertised delay has passed,
 *     IBA Table 45), arriving after that PSN was last sent; or if the timer may have expired:
 *     the timer (re)starts when a packet leaves with nothing outstanding, when a response
 *     acknowledges new PSNs, and when a burst head leaves (the starts before a head are spent
 *     on it), and a head is legal by timeout if some start since the last head lies a full
 *     timeout before it with no other start within the timeout after it (a response stamped
 *     after the timer expired may reach the requester after its resend);
 *   - the packets that follow a head in PSN order belong to its burst;
 *   - any other head is early (`early` counts heads, not the packets of their bursts).
 */
import { RoceFrame } from '../../drivers/emu/model/wire/roce-frame.ts';
import { parseFrame } from '../../drivers/emu/model/wire/parse.ts';
import { ParseStatus } from '../../drivers/emu/model/wire/parse-status.ts';
import { Opcode } from '../../drivers/emu/model/wire/opcodes.ts';
import { AethKind, RNR_TIMER_US, aethKind, aethValue } from '../../drivers/emu/model/wire/aeth.ts';
import type { CapturedFrame } from './capture-check.ts';

/** The local ACK timeout of a 5-bit QP timeout code (IBA 9.7.6.1.3): 4.096 us x 2^code. */
export function ackTimeoutUs(code: number): number {
  return 4.096 * 2 ** code;
}

/** The timeout the spec fixes for every queue pair (code 14: 67 ms). */
export const SPEC_ACK_TIMEOUT_US = ackTimeoutUs(14);

/** One requester's traffic: its requests go to `peerQpn`; its responses come to `ownQpn`. */
export interface RequesterFlow {
  /** The requester's MAC (its frames' source). */
  readonly mac: Uint8Array;
  readonly ownQpn: number;
  readonly peerQpn: number;
}

export interface RetransmissionReport {
  /** Request packets sent once so far (distinct PSNs). */
  readonly firstTransmissions: number;
  readonly retransmissions: number;
  /** Burst heads legal because the timeout had passed since the PSN was last sent. */
  readonly afterTimeout: number;
  /** Burst heads legal because a NAK asked for them. */
  readonly afterNak: number;
  /** Retransmissions that followed a head in PSN order. */
  readonly inBurst: number;
  readonly early: number;
  /** The first few early ones, with their timing. */
  readonly earlyExamples: readonly string[];
  readonly seqNaks: number;
  readonly rnrNaks: number;
  /** The shortest time between a burst head and its PSN's previous transmission (Infinity if none). */
  readonly shortestHeadGapUs: number;
}

/** A µs-stamped capture rounds each stamp: a gap may read up to 1 µs short. */
const STAMP_ROUNDING_US = 1;

function isRequest(opcode: number): boolean {
  if (opcode === Opcode.RC_ACKNOWLEDGE || opcode === Opcode.RC_ATOMIC_ACKNOWLEDGE) return false;
  return !isReadResponse(opcode);
}

function isReadResponse(opcode: number): boolean {
  return opcode >= Opcode.RC_RDMA_READ_RESPONSE_FIRST && opcode <= Opcode.RC_RDMA_READ_RESPONSE_ONLY;
}

function sameMac(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < 6; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Signed distance a - b on the 24-bit PSN circle. */
function psnDiff(a: number, b: number): number {
  return ((a - b) << 8) >> 8;
}

/** The requester's side of one flow, read frame by frame in capture order. */
class FlowScan {
  readonly lastSentUs = new Map<number, number>();
  retransmissions = 0;
  afterTimeout = 0;
  afterNak = 0;
  inBurst = 0;
  early = 0;
  readonly earlyExamples: string[] = [];
  seqNaks = 0;
  rnrNaks = 0;
  shortestHeadGapUs = Infinity;
  // The last NAK the requester received: when, for which PSN, and (RNR) the delay it asked for.
  private nakUs = -Infinity;
  private nakPsn = 0;
  private nakDelayUs = 0;
  // The burst in progress: the PSN it resent last.
  private burstPsn: number | undefined;
  // One past the highest PSN sent, and the oldest PSN not acknowledged (undefined: none sent yet).
  private nextPsn: number | undefined;
  private ackedPsn = 0;
  // Every time the timer may have (re)started since the last burst head, in capture order.
  private readonly timerStarts: number[] = [];

  constructor(private readonly timeoutUs: number) {}

  /** An ACK or NAK for the requester. */
  response(f: RoceFrame, atUs: number): void {
    if (this.nextPsn === undefined) return;
    const kind = aethKind(f.aethSyndrome);
    // An ACK acknowledges its PSN; a NAK every PSN before its own.
    const acknowledgedTo = kind === AethKind.ACK ? (f.psn + 1) & 0xffffff : f.psn;
    if (psnDiff(acknowledgedTo, this.ackedPsn) > 0 && psnDiff(acknowledgedTo, this.nextPsn) <= 0) {
      this.ackedPsn = acknowledgedTo;
      this.timerStarts.push(atUs);
    }
    if (kind === AethKind.NAK && aethValue(f.aethSyndrome) === 0) {
      this.seqNaks++;
      this.nak(atUs, f.psn, 0);
    } else if (kind === AethKind.RNR_NAK) {
      this.rnrNaks++;
      this.nak(atUs, f.psn, RNR_TIMER_US[aethValue(f.aethSyndrome)]!);
    }
  }

  /** A request packet the requester sent. */
  request(psn: number, atUs: number, index: number): void {
    const previous = this.lastSentUs.get(psn);
    this.lastSentUs.set(psn, atUs);
    if (previous === undefined) {
      this.burstPsn = undefined;
      if (this.nextPsn === undefined) this.nextPsn = this.ackedPsn = psn;
      // Nothing outstanding: this packet starts the timer.
      if (this.nextPsn === this.ackedPsn) this.timerStarts.push(atUs);
      if (psnDiff((psn + 1) & 0xffffff, this.nextPsn) > 0) this.nextPsn = (psn + 1) & 0xffffff;
      return;
    }
    this.retransmissions++;
    if (this.burstPsn !== undefined && psn === ((this.burstPsn + 1) & 0xffffff)) {
      this.inBurst++;
      this.burstPsn = psn;
      return;
    }
    this.head(psn, atUs, previous, index);
  }

  private nak(atUs: number, psn: number, delayUs: number): void {
    this.nakUs = atUs;
    this.nakPsn = psn;
    this.nakDelayUs = delayUs;
  }

  /** The first packet of a burst of retransmissions. */
  private head(psn: number, atUs: number, previous: number, index: number): void {
    const gap = atUs - previous;
    if (gap < this.shortestHeadGapUs) this.shortestHeadGapUs = gap;
    const nakAsked = this.nakUs >= previous && psnDiff(psn, this.nakPsn) >= 0 &&
      atUs - this.nakUs >= this.nakDelayUs - STAMP_ROUNDING_US;
    if (nakAsked) this.afterNak++;
    else if (this.timerMayHaveExpired(atUs)) this.afterTimeout++;
    else {
      // An early head; the packets that follow it belong to its burst and count with it.
      this.early++;
      if (this.earlyExamples.length < 5) {
        const starts = this.timerStarts;
        const since = starts.length > 0 ? atUs - starts[starts.length - 1]! : gap;
        this.earlyExamples.push(`frame ${index}: PSN ${psn} resent ${ms(gap)} ms after it was sent and ` +
          `${ms(since)} ms after the timer last started, with no NAK asking for it (timeout ${ms(this.timeoutUs)} ms)`);
      }
    }
    this.burstPsn = psn;
    // The resent packet starts the timer again; the starts before it were spent on this burst.
    this.timerStarts.length = 0;
    this.timerStarts.push(atUs);
  }

  /** Whether the timer may have expired by `atUs`: a start a timeout before, not restarted within the timeout. */
  private timerMayHaveExpired(atUs: number): boolean {
    const limit = this.timeoutUs - STAMP_ROUNDING_US;
    const starts = this.timerStarts;
    for (let i = starts.length - 1; i >= 0; i--) {
      const start = starts[i]!;
      if (atUs - start < limit) continue;
      const next = starts[i + 1];
      return next === undefined || next - start >= limit;
    }
    return false;
  }
}

const ms = (us: number): string => (us / 1000).toFixed(3);

export function checkRetransmissions(
  frames: readonly CapturedFrame[], flow: RequesterFlow, timeoutUs: number = SPEC_ACK_TIMEOUT_US,
): RetransmissionReport {
  const frame = new RoceFrame();
  const scan = new FlowScan(timeoutUs);
  for (const captured of frames) {
    const bytes = captured.bytes;
    if (parseFrame(bytes, bytes.length, frame, null) !== ParseStatus.OK) continue;
    if (!sameMac(frame.srcMac, flow.mac)) {
      if (frame.destQp === flow.ownQpn && frame.opcode === Opcode.RC_ACKNOWLEDGE) scan.response(frame, captured.timeUs);
    } else if (frame.destQp === flow.peerQpn && isRequest(frame.opcode)) {
      scan.request(frame.psn, captured.timeUs, captured.index);
    }
  }
  return {
    firstTransmissions: scan.lastSentUs.size, retransmissions: scan.retransmissions, afterTimeout: scan.afterTimeout,
    afterNak: scan.afterNak, inBurst: scan.inBurst, early: scan.early, earlyExamples: scan.earlyExamples,
    seqNaks: scan.seqNaks, rnrNaks: scan.rnrNaks, shortestHeadGapUs: scan.shortestHeadGapUs,
  };
}
