/**
 * Checks one pingpong step in the data NIC's capture (QEMU's filter-dump pcap, both directions),
 * independently of both ends' own reports:
 *
 *   - every RoCEv2 frame parses (IPv4 checksum, ICRC, BTH) with the project's wire parser;
 *   - no request PSN is sent twice in either direction (no retransmission on the wire);
 *   - no NAK (sequence error, RNR, ...) is sent in either direction;
 *   - how long the host took to ACK each of the guest's request packets (first transmissions),
 *     against rxe's local ACK timeout: a guest retransmission while every ACK came within the
 *     timeout is rxe's own spurious timer (Linux 6.1 arms it once and does not restart it on an
 *     ACK: "some timeouts are spurious", rxe_comp.c), not the host's doing;
 *   - payloads: ibv_rc_pingpong sends and receives in ONE buffer, so the message the guest sends
 *     after its k-th receive is exactly the k-th message it received. As the server the guest's
 *     k-th send echoes the host's k-th message; as the client its (k+1)-th send echoes the host's
 *     k-th. A payload changed anywhere on the way shows up as a mismatch.
 *   - known payloads: where both ends send bytes known beforehand (perftest, which does not echo,
 *     filling its buffer from a payload file; rig-bnxt perf, from its fill), every whole message
 *     each way is compared with them instead (PingpongPair.payloads).
 *
 * The step's frames are told apart with the guest's pingpong output. Host -> guest frames carry
 * the guest's QPN, new for every QP. Guest -> host frames carry only the host's QPN, which a host
 * process started per step may reuse (and rc_pingpong's initial PSNs, lrand48 seeded with
 * pid * time, come out close together run after run), so they are taken by position: between the
 * step's first and last host -> guest frame (the host ACKs the guest's last message), and, when
 * the guest is the client, from its first SEND (the PSN it announced) just before.
 */
import { readFileSync } from 'node:fs';
import { RoceFrame } from '../../drivers/emu/model/wire/roce-frame.ts';
import { parseFrame } from '../../drivers/emu/model/wire/parse.ts';
import { ParseStatus, parseStatusName } from '../../drivers/emu/model/wire/parse-status.ts';
import { Opcode } from '../../drivers/emu/model/wire/opcodes.ts';
import { AethKind, aethKind, aethSyndromeName } from '../../drivers/emu/model/wire/aeth.ts';
import { parseMac } from '../../drivers/emu/model/wire/addresses.ts';
import { GUEST_DATA_MAC } from './guest-config.ts';

/** One captured frame: a view into the file's bytes. */
export interface CapturedFrame {
  readonly index: number;
  /** Capture time in microseconds (QEMU's filter-dump: host wall clock at the guest's NIC). */
  readonly timeUs: number;
  readonly bytes: Uint8Array;
}

/** ibv_rc_pingpong's QP timeout is 14: 4.096 us * 2^14 (IBA 9.7.6.1.3 local ACK timeout). */
export const PINGPONG_ACK_TIMEOUT_US = Math.round(4.096 * 2 ** 14);

const PCAP_MAGIC_US = 0xa1b2c3d4;
const PCAP_MAGIC_NS = 0xa1b23c4d;
const LINKTYPE_ETHERNET = 1;

/** Reads a classic pcap file (either byte order, us or ns stamps) of Ethernet frames. */
export function readPcap(bytes: Uint8Array): CapturedFrame[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes.length < 24) throw new Error(`pcap: ${bytes.length} bytes is shorter than the file header`);
  const magicLe = view.getUint32(0, true);
  const little = magicLe === PCAP_MAGIC_US || magicLe === PCAP_MAGIC_NS;
  const magicBe = view.getUint32(0, false);
  if (!little && magicBe !== PCAP_MAGIC_US && magicBe !== PCAP_MAGIC_NS)
    throw new Error(`pcap: bad magic 0x${magicLe.toString(16)}`);
  const fractionPerUs = (little ? magicLe : magicBe) === PCAP_MAGIC_NS ? 1000 : 1;
  const linktype = view.getUint32(20, little);
  if (linktype !== LINKTYPE_ETHERNET) throw new Error(`pcap: link type ${linktype}, expected Ethernet (1)`);
  const frames: CapturedFrame[] = [];
  let at = 24;
  // A run killed mid-write may leave a partial last record: stop there.
  while (at + 16 <= bytes.length) {
    const captured = view.getUint32(at + 8, little);
    if (at + 16 + captured > bytes.length) break;
    const timeUs = view.getUint32(at, little) * 1e6 + view.getUint32(at + 4, little) / fractionPerUs;
    frames.push({ index: frames.length, timeUs, bytes: bytes.subarray(at + 16, at + 16 + captured) });
    at += 16 + captured;
  }
  return frames;
}

export interface CaptureCheck {
  /** RoCE frames of this step's two QPs, per direction. */
  readonly framesToGuest: number;
  readonly framesFromGuest: number;
  readonly messagesToGuest: number;
  readonly messagesFromGuest: number;
  /** UDP/4791 frames that do not parse as RoCEv2 (bad ICRC, ...), with the reason, anywhere in the capture. */
  readonly badFrames: readonly string[];
  /** Request PSNs seen a second time (retransmissions on the wire), per direction. */
  readonly repeatedPsnsToGuest: number;
  /**
   * Host retransmissions that came sooner than the ACK timeout after the packet's previous
   * transmission, with no NAK from the guest in between: what RC forbids (IBA 9.7.6.1: a
   * requester retransmits on its timer or on a NAK). A retransmission after a stall longer than
   * the timeout is legal and not counted.
   */
  readonly earlyRetransmissionsToGuest: number;
  readonly repeatedPsnsFromGuest: number;
  /**
   * Request packets past a gap in their direction's PSNs (a packet lost before the capture saw
   * it): the receiver discards them, as an RC responder does with a PSN ahead of the one it
   * expects (IBA 9.7.5.1.2), and they are not part of any message here; the resend is.
   */
  readonly outOfSequenceToGuest: number;
  readonly outOfSequenceFromGuest: number;
  /** NAK syndromes seen, e.g. "NAK PSN sequence error" (either direction). */
  readonly naks: readonly string[];
  /** Longest time from a guest request packet (first transmission) to the host's ACK covering it. */
  readonly hostAckLatencyMaxUs: number;
  /** Guest request packets the host ACKed later than PINGPONG_ACK_TIMEOUT_US, or never. */
  readonly hostAcksLate: number;
  readonly guestPacketsNeverAcked: number;
  /** Echo comparisons done and the first few mismatches. */
  readonly echoesCompared: number;
  readonly echoMismatches: readonly string[];
  /** With PingpongPair.payloads: whole messages compared with them (both ways), and the first few mismatches. */
  readonly payloadsCompared: number;
  readonly payloadMismatches: readonly string[];
}

const SEND_FIRST = new Set<number>([Opcode.RC_SEND_FIRST]);
const SEND_MIDDLE = new Set<number>([Opcode.RC_SEND_MIDDLE]);
const SEND_LAST = new Set<number>([
  Opcode.RC_SEND_LAST, Opcode.RC_SEND_LAST_WITH_IMMEDIATE, Opcode.RC_SEND_LAST_WITH_INVALIDATE,
]);
const SEND_ONLY = new Set<number>([
  Opcode.RC_SEND_ONLY, Opcode.RC_SEND_ONLY_WITH_IMMEDIATE, Opcode.RC_SEND_ONLY_WITH_INVALIDATE,
]);
const ROCEV2_PORT = 4791;

/** Reassembles SEND messages of one direction from packets in PSN order. */
class MessageAssembler {
  private parts: Uint8Array[] = [];
  readonly errors: string[] = [];
  count = 0;

  /** Returns the whole message when `opcode` ends one, else null. */
  add(opcode: number, payload: Uint8Array, frameIndex: number): Uint8Array | null {
    if (SEND_ONLY.has(opcode) || SEND_FIRST.has(opcode)) {
      if (this.parts.length > 0)
        this.errors.push(`frame ${frameIndex}: a new message starts before the previous one ended`);
      this.parts = [];
    } else if ((SEND_MIDDLE.has(opcode) || SEND_LAST.has(opcode)) && this.parts.length === 0) {
      this.errors.push(`frame ${frameIndex}: MIDDLE/LAST without FIRST`);
      return null;
    }
    this.parts.push(payload);
    if (!SEND_ONLY.has(opcode) && !SEND_LAST.has(opcode)) return null;
    const message = Buffer.concat(this.parts);
    this.parts = [];
    this.count++;
    return message;
  }
}

export type GuestRole = 'server' | 'client';

/** One pingpong step as the guest saw it: its QP and initial PSN, the host's, and the traffic's size. */
export interface PingpongPair {
  readonly guestQpn: number;
  readonly guestPsn: number;
  readonly hostQpn: number;
  readonly hostPsn: number;
  readonly sizeBytes: number;
  readonly iters: number;
  /** The guest's ibv_rc_pingpong role (the client sends first). */
  readonly role: GuestRole;
  /**
   * The bytes every message carries each way, when both ends send known bytes and do not echo
   * (perftest): compared with each whole message instead of the echo rule.
   */
  readonly payloads?: { readonly toGuest: Uint8Array; readonly fromGuest: Uint8Array };
}

/** Checks the frames of one pingpong between the guest (its NIC's MAC: guestMacText) and the host. */
export function checkPingpongCapture(
  frames: readonly CapturedFrame[], pair: PingpongPair, guestMacText = GUEST_DATA_MAC,
): CaptureCheck {
  const guestMac = parseMac(guestMacText);
  if (guestMac === null) throw new Error(`bad guest MAC ${guestMacText}`);
  const frame = new RoceFrame();
  const [from, to] = stepWindow(frames, pair, guestMac, frame);
  const check = new PingpongCheck(pair);
  for (let i = from; i <= to; i++) {
    const captured = frames[i]!;
    const bytes = captured.bytes;
    const status = parseFrame(bytes, bytes.length, frame, null);
    if (status !== ParseStatus.OK) {
      if (isRoceUdp(bytes)) check.badFrames.push(`frame ${captured.index}: ${parseStatusName(status)}`);
      continue;
    }
    const fromGuestSide = sameMac(frame.srcMac, guestMac);
    if (frame.destQp !== (fromGuestSide ? pair.hostQpn : pair.guestQpn)) continue;
    check.take(frame, captured, fromGuestSide);
  }
  return check.result();
}

/** The pingpong's frames taken one by one (each of the step's QPs), and what they showed. */
class PingpongCheck {
  readonly badFrames: string[] = [];
  private readonly naks: string[] = [];
  /** The PSN each direction's receiver expects next (from the first request packet seen on). */
  private nextToGuest: number | undefined;
  private nextFromGuest: number | undefined;
  private outOfSequenceToGuest = 0;
  private outOfSequenceFromGuest = 0;
  /** PSNs discarded past a gap: taken later, they are on the wire a second time. */
  private readonly discarded = new Set<number>();
  private repeatedToGuest = 0;
  private repeatedFromGuest = 0;
  private earlyToGuest = 0;
  private readonly lastSentToGuestUs = new Map<number, number>();
  private lastGuestNakUs = -Infinity;
  private lastRetransmittedPsn: number | undefined;
  private lastBurstLegal = false;
  private framesToGuest = 0;
  private framesFromGuest = 0;
  private readonly toGuest = new MessageAssembler();
  private readonly fromGuest = new MessageAssembler();
  /** Messages received by the guest and not yet echoed back. */
  private readonly pending: Uint8Array[] = [];
  private readonly mismatches: string[] = [];
  private compared = 0;
  private payloadsCompared = 0;
  private readonly payloadMismatches: string[] = [];
  private guestSends = 0;
  /** Guest request packets awaiting the host's ACK, oldest first: PSNs and first-send times. */
  private readonly unackedPsn: number[] = [];
  private readonly unackedTimeUs: number[] = [];
  private ackLatencyMaxUs = 0;
  private acksLate = 0;

  constructor(private readonly pair: PingpongPair) {}

  /** One frame of the step's QPs, parsed. */
  take(frame: RoceFrame, captured: CapturedFrame, fromGuestSide: boolean): void {
    if (fromGuestSide) this.framesFromGuest++; else this.framesToGuest++;
    const op = frame.opcode;
    if (op === Opcode.RC_ACKNOWLEDGE || op === Opcode.RC_ATOMIC_ACKNOWLEDGE) {
      this.takeAck(frame, captured, fromGuestSide);
      return;
    }
    // A request packet: taken where its direction's PSNs continue; behind that, a retransmission
    // of what was taken; ahead of it, past a lost packet (discarded, as the responder does).
    const next = fromGuestSide ? this.nextFromGuest : this.nextToGuest;
    const ahead = next === undefined ? 0 : psnDiff(frame.psn, next);
    if (ahead < 0) {
      if (fromGuestSide) this.repeatedFromGuest++;
      else this.takeHostRetransmission(frame.psn, captured.timeUs);
      return;
    }
    if (ahead > 0) {
      if (fromGuestSide) this.outOfSequenceFromGuest++; else this.outOfSequenceToGuest++;
      this.discarded.add(frame.psn * 2 + (fromGuestSide ? 1 : 0));
      return;
    }
    if (this.discarded.delete(frame.psn * 2 + (fromGuestSide ? 1 : 0))) {
      if (fromGuestSide) this.repeatedFromGuest++; else this.repeatedToGuest++;
    }
    if (fromGuestSide) this.nextFromGuest = (frame.psn + 1) & 0xffffff;
    else this.nextToGuest = (frame.psn + 1) & 0xffffff;
    if (!fromGuestSide) {
      this.lastSentToGuestUs.set(frame.psn, captured.timeUs);
      this.lastRetransmittedPsn = undefined;
    }
    if (fromGuestSide) { this.unackedPsn.push(frame.psn); this.unackedTimeUs.push(captured.timeUs); }
    const payload = captured.bytes.subarray(frame.payloadOffset, frame.payloadOffset + frame.payloadLength);
    const message = (fromGuestSide ? this.fromGuest : this.toGuest).add(op, payload, captured.index);
    if (message === null) return;
    const known = this.pair.payloads;
    if (known !== undefined) this.takeKnownPayload(message, fromGuestSide ? known.fromGuest : known.toGuest,
      `${fromGuestSide ? 'guest' : 'host'} message ${(fromGuestSide ? this.fromGuest : this.toGuest).count}`,
      captured.index);
    else if (!fromGuestSide) this.pending.push(message);
    else this.takeGuestMessage(message, captured.index);
  }

  /** A whole message of a step whose payloads are known: byte for byte what its sender posted. */
  private takeKnownPayload(message: Uint8Array, expected: Uint8Array, what: string, frameIndex: number): void {
    this.payloadsCompared++;
    if (!Buffer.from(expected).equals(Buffer.from(message)) && this.payloadMismatches.length < 5)
      this.payloadMismatches.push(`${what} (frame ${frameIndex}): ${describeDifference(expected, message)}`);
  }

  /** A NAK either way is noted; a host ACK covers every guest PSN up to its own. */
  private takeAck(frame: RoceFrame, captured: CapturedFrame, fromGuestSide: boolean): void {
    if (aethKind(frame.aethSyndrome) !== AethKind.ACK) {
      this.naks.push(
        `${fromGuestSide ? 'guest' : 'host'} sent ${aethSyndromeName(frame.aethSyndrome)} (frame ` +
          `${captured.index}, PSN ${frame.psn})`,
      );
      if (fromGuestSide) this.lastGuestNakUs = captured.timeUs;
    } else if (!fromGuestSide) {
      // An ACK covers every PSN up to its own (IBA 9.7.5.1.1: coalesced acknowledgement).
      const { unackedPsn, unackedTimeUs } = this;
      while (unackedPsn.length > 0 && psnDiff(unackedPsn[0]!, frame.psn) <= 0) {
        const latencyUs = captured.timeUs - unackedTimeUs[0]!;
        if (latencyUs > this.ackLatencyMaxUs) this.ackLatencyMaxUs = latencyUs;
        if (latencyUs > PINGPONG_ACK_TIMEOUT_US) this.acksLate++;
        unackedPsn.shift();
        unackedTimeUs.shift();
      }
    }
  }

  /**
   * A retransmission goes back to the oldest unacknowledged packet and resends from there
   * (go-back-N): it is legal when that packet's timer ran out or a NAK asked for it, and
   * the packets that follow it in the same burst are legal with it.
   */
  private takeHostRetransmission(psn: number, timeUs: number): void {
    this.repeatedToGuest++;
    const previous = this.lastSentToGuestUs.get(psn) ?? -Infinity; // before the first packet seen: legal
    const continuesBurst: boolean = this.lastRetransmittedPsn !== undefined &&
      psn === ((this.lastRetransmittedPsn + 1) & 0xffffff) && this.lastBurstLegal;
    const legal: boolean = continuesBurst || timeUs - previous >= PINGPONG_ACK_TIMEOUT_US ||
      this.lastGuestNakUs >= previous;
    if (!legal) this.earlyToGuest++;
    this.lastRetransmittedPsn = psn;
    this.lastBurstLegal = legal;
    this.lastSentToGuestUs.set(psn, timeUs);
  }

  /** A whole message from the guest: the echo of the host's oldest message not yet echoed. */
  private takeGuestMessage(message: Uint8Array, frameIndex: number): void {
    const { mismatches } = this;
    this.guestSends++;
    // The client's first send is its initial buffer, not an echo.
    if (this.pair.role === 'client' && this.guestSends === 1) return;
    const expected = this.pending.shift();
    if (expected === undefined) {
      if (mismatches.length < 5) {
        mismatches.push(
          `guest message ${this.guestSends} (frame ${frameIndex}) sent before the host's message it should echo`,
        );
      }
      return;
    }
    this.compared++;
    if (!Buffer.from(expected).equals(Buffer.from(message)) && mismatches.length < 5) {
      mismatches.push(`guest message ${this.guestSends} (frame ${frameIndex}): ` +
        `${describeDifference(expected, message)}`);
    }
  }

  result(): CaptureCheck {
    const { toGuest, fromGuest, unackedPsn } = this;
    return {
      framesToGuest: this.framesToGuest, framesFromGuest: this.framesFromGuest, messagesToGuest: toGuest.count,
      messagesFromGuest: fromGuest.count, badFrames: this.badFrames, repeatedPsnsToGuest: this.repeatedToGuest,
      repeatedPsnsFromGuest: this.repeatedFromGuest, outOfSequenceToGuest: this.outOfSequenceToGuest,
      outOfSequenceFromGuest: this.outOfSequenceFromGuest, earlyRetransmissionsToGuest: this.earlyToGuest,
      naks: this.naks,
      hostAckLatencyMaxUs: Math.round(this.ackLatencyMaxUs), hostAcksLate: this.acksLate + unackedPsn.length,
      guestPacketsNeverAcked: unackedPsn.length, echoesCompared: this.compared,
      echoMismatches: [...this.mismatches, ...toGuest.errors.slice(0, 3), ...fromGuest.errors.slice(0, 3)],
      payloadsCompared: this.payloadsCompared, payloadMismatches: this.payloadMismatches,
    };
  }
}

/** The first and last frame index of the step (an empty range, from > to, when it left no frame). */
function stepWindow(
  frames: readonly CapturedFrame[], pair: PingpongPair, guestMac: Uint8Array, frame: RoceFrame,
): [number, number] {
  let first = -1;
  let last = -1;
  for (let i = 0; i < frames.length; i++) {
    const bytes = frames[i]!.bytes;
    if (parseFrame(bytes, bytes.length, frame, null) !== ParseStatus.OK) continue;
    if (!sameMac(frame.srcMac, guestMac) && frame.destQp === pair.guestQpn) {
      if (first < 0) first = i;
      last = i;
    }
  }
  if (first < 0) return [0, -1];
  // The guest's ACKs of the host's last message may follow the host's last frame.
  while (last + 1 < frames.length) {
    const bytes = frames[last + 1]!.bytes;
    if (parseFrame(bytes, bytes.length, frame, null) !== ParseStatus.OK) break;
    if (!sameMac(frame.srcMac, guestMac) || frame.destQp !== pair.hostQpn || frame.opcode !== Opcode.RC_ACKNOWLEDGE)
      break;
    last++;
  }
  if (pair.role !== 'client') return [first, last];
  // The guest client's first SEND precedes the host's first frame: the latest one before it.
  for (let i = first - 1; i >= 0; i--) {
    const bytes = frames[i]!.bytes;
    if (parseFrame(bytes, bytes.length, frame, null) !== ParseStatus.OK) continue;
    const firstSend = frame.opcode === Opcode.RC_SEND_FIRST || frame.opcode === Opcode.RC_SEND_ONLY;
    if (sameMac(frame.srcMac, guestMac) && frame.destQp === pair.hostQpn && frame.psn === pair.guestPsn && firstSend)
      return [i, last];
  }
  return [first, last];
}

/** Reads and checks in one call. */
export function checkPingpongPcap(path: string, pair: PingpongPair): CaptureCheck {
  return checkPingpongCapture(readPcap(readFileSync(path)), pair);
}

/** Signed distance a - b on the 24-bit PSN circle. */
function psnDiff(a: number, b: number): number {
  return ((a - b) << 8) >> 8;
}

function sameMac(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < 6; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** IPv4 + UDP to port 4791 (a frame meant to be RoCEv2, whether or not it parses). */
function isRoceUdp(bytes: Uint8Array): boolean {
  if (bytes.length < 14 + 20 + 8) return false;
  if (bytes[12] !== 0x08 || bytes[13] !== 0x00 || bytes[14 + 9] !== 17) return false;
  const ihl = (bytes[14]! & 0x0f) * 4;
  const udp = 14 + ihl;
  return udp + 4 <= bytes.length && ((bytes[udp + 2]! << 8) | bytes[udp + 3]!) === ROCEV2_PORT;
}

function describeDifference(expected: Uint8Array, got: Uint8Array): string {
  if (expected.length !== got.length) return `length ${got.length}, expected ${expected.length}`;
  for (let i = 0; i < expected.length; i++) {
    if (expected[i] !== got[i])
      return `byte ${i} is 0x${got[i]!.toString(16)}, expected 0x${expected[i]!.toString(16)}`;
  }
  return 'differs';
}
