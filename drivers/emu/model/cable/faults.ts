/**
 * The fault injector: a cable around the port's cable (the same interface, as smoltcp's
 * FaultInjector wraps a device) that drops, duplicates, reorders, corrupts or delays frames
 * in either direction. Every random choice comes from the model's seeded PRNG, and a draw is
 * made only for a fault that is switched on, so a run with no faults draws nothing. Held
 * frames (reordered, delayed) wait in preallocated slots; the engine releases them from run()
 * with its clock, so virtual time delays work in stepped mode.
 */
import type { Random } from '../random.ts';
import type { Cable, FrameReceiver } from './cable.ts';
import { BTH_AT, BTH_BYTES, BTH_OPCODE, BTH_PSN, BTH_RESV8A, ETH_HEADER_BYTES, ETH_TYPE, ETH_TYPE_IPV4, IPV4_AT,
  IPV4_PROTOCOL, IPV4_TOTAL_LENGTH, IPV4_VERSION_IHL, IPV4_VERSION_IHL_PLAIN, IP_PROTOCOL_UDP, ROCEV2_UDP_PORT, UDP_AT,
  UDP_DST_PORT } from '../wire/headers.ts';
import { getU24 } from '../wire/bytes.ts';

export interface FaultSpec {
  /** Probabilities in [0, 1]. */
  readonly drop?: number;
  readonly duplicate?: number;
  /** Hold a frame and let the next one in the same direction overtake it. */
  readonly reorder?: number;
  /**
   * Flip one byte of the part the ICRC covers from the BTH to the ICRC itself (not the masked
   * resv8a byte): the receiver's ICRC check then refuses the frame, every time.
   */
  readonly corrupt?: number;
  /** Hold every frame this long (ns of the model's clock). */
  readonly delayNs?: number;
}

/** One direction's faults. */
class DirectionFaults {
  drop = 0;
  duplicate = 0;
  reorder = 0;
  corrupt = 0;
  delayNs = 0;
  /** Deterministic drops: the next `matchCount` RoCEv2 frames with this BTH opcode (and PSN, unless -1). */
  matchOpcode = -1;
  matchPsn = -1;
  matchCount = 0;
  // What happened (for tests and traces).
  dropped = 0;
  duplicated = 0;
  reordered = 0;
  corrupted = 0;
  delayed = 0;

  get active(): boolean {
    return this.drop > 0 || this.duplicate > 0 || this.reorder > 0 || this.corrupt > 0 || this.delayNs > 0 ||
      this.matchCount > 0;
  }

  set(spec: FaultSpec): void {
    this.drop = probability(spec.drop);
    this.duplicate = probability(spec.duplicate);
    this.reorder = probability(spec.reorder);
    this.corrupt = probability(spec.corrupt);
    const delay = spec.delayNs ?? 0;
    if (!(Number.isFinite(delay) && delay >= 0))
      throw new RangeError(`fault delayNs ${delay} must be a finite number >= 0`);
    this.delayNs = delay;
  }
}

/**
 * Whether a frame is RoCEv2 (IPv4 with a plain 20-byte header, UDP to port 4791) with room for its
 * BTH, so that the byte at BTH_AT is an opcode: a deterministic drop names a BTH opcode, and an
 * ICMP echo or any other frame has some other byte there (a ping's timestamp matched
 * RC_SEND_MIDDLE's 0x01 one time in 256 and was dropped in its place).
 */
function isRoceV2(frame: Uint8Array, length: number): boolean {
  return length >= BTH_AT + BTH_BYTES && ((frame[ETH_TYPE]! << 8) | frame[ETH_TYPE + 1]!) === ETH_TYPE_IPV4 &&
    frame[IPV4_AT + IPV4_VERSION_IHL] === IPV4_VERSION_IHL_PLAIN &&
    frame[IPV4_AT + IPV4_PROTOCOL] === IP_PROTOCOL_UDP &&
    ((frame[UDP_AT + UDP_DST_PORT]! << 8) | frame[UDP_AT + UDP_DST_PORT + 1]!) === ROCEV2_UDP_PORT;
}

function probability(p: number | undefined): number {
  const v = p ?? 0;
  if (!(typeof v === 'number' && v >= 0 && v <= 1))
    throw new RangeError(`fault probability ${String(p)} must be in [0, 1]`);
  return v;
}

const HOLD_SLOTS = 64;
const FREE = -1;
const EMITTING = -2;
const TX = 0;
const RX = 1;

export class FaultCable implements Cable {
  readonly tx = new DirectionFaults();
  readonly rx = new DirectionFaults();
  private receiver: FrameReceiver = () => {};
  private readonly scratch: Uint8Array;
  // Held frames: holdDirection is TX, RX, FREE or EMITTING.
  private readonly holdBytes: Uint8Array[] = [];
  private readonly holdLength = new Uint32Array(HOLD_SLOTS);
  private readonly holdDirection = new Int8Array(HOLD_SLOTS).fill(FREE);
  /** Release time in ns, or -1: released right after the next frame of its direction passes (reorder). */
  private readonly holdUntilNs = new Float64Array(HOLD_SLOTS);
  private held = 0;
  /** Frames held because every slot was taken are dropped and counted here. */
  holdOverflow = 0;
  /**
   * Called with a received frame before the receive faults may copy, change or hold it (not for a
   * frame passed straight on): the port completes the ICRC of its own frames there (port.ts).
   */
  beforeReceiveFaults: FrameReceiver | undefined;

  constructor(
    readonly inner: Cable, private readonly random: Random, private readonly nowNs: () => number, maxFrameBytes: number,
  ) {
    this.scratch = new Uint8Array(maxFrameBytes);
    for (let i = 0; i < HOLD_SLOTS; i++) this.holdBytes.push(new Uint8Array(maxFrameBytes));
    inner.setReceiver(this.onInnerFrame);
  }

  setFaults(direction: 'tx' | 'rx' | 'both', spec: FaultSpec): void {
    if (direction !== 'rx') this.tx.set(spec);
    if (direction !== 'tx') this.rx.set(spec);
  }

  clearFaults(): void {
    this.tx.set({});
    this.rx.set({});
    this.tx.matchCount = this.rx.matchCount = 0;
  }

  dropMatching(direction: 'tx' | 'rx', opcode: number, psn: number, count: number): void {
    const d = direction === 'tx' ? this.tx : this.rx;
    d.matchOpcode = opcode;
    d.matchPsn = psn;
    d.matchCount = count;
  }

  /** No fault applies to a frame sent now: send would hand it straight to the inner cable. */
  get sendsThrough(): boolean {
    return !this.tx.active && this.held === 0;
  }

  send(frame: Uint8Array, length: number): void {
    if (!this.tx.active && this.held === 0) {
      this.inner.send(frame, length);
      return;
    }
    this.pass(TX, this.tx, frame, length);
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  close(): void {
    this.inner.close();
  }

  /** Releases held frames whose time has come (and reordered ones left waiting); returns how many. */
  release(nowNs: number): number {
    if (this.held === 0) return 0;
    let n = 0;
    for (let i = 0; i < HOLD_SLOTS; i++) {
      const direction = this.holdDirection[i]!;
      if (direction < 0) continue;
      const until = this.holdUntilNs[i]!;
      // A reordered frame whose follower never came goes out on the next release.
      if (until <= nowNs) {
        this.emitHeld(i);
        n++;
      }
    }
    return n;
  }

  /** Earliest release time of a held frame (Infinity if none). */
  nextReleaseNs(): number {
    if (this.held === 0) return Infinity;
    let min = Infinity;
    for (let i = 0; i < HOLD_SLOTS; i++)
      if (this.holdDirection[i]! >= 0 && this.holdUntilNs[i]! < min) min = this.holdUntilNs[i]!;
    return min;
  }

  private readonly onInnerFrame = (frame: Uint8Array, length: number): void => {
    if (!this.rx.active && this.held === 0) {
      this.receiver(frame, length);
      return;
    }
    if (this.beforeReceiveFaults !== undefined) this.beforeReceiveFaults(frame, length);
    this.pass(RX, this.rx, frame, length);
  };

  private pass(direction: number, d: DirectionFaults, frame: Uint8Array, length: number): void {
    if (d.matchCount > 0 && isRoceV2(frame, length) && frame[BTH_AT + BTH_OPCODE] === d.matchOpcode &&
      (d.matchPsn < 0 || getU24(frame, BTH_AT + BTH_PSN) === d.matchPsn)) {
      d.matchCount--;
      d.dropped++;
      return;
    }
    if (d.drop > 0 && this.random.float() < d.drop) {
      d.dropped++;
      return;
    }
    let bytes = frame;
    if (d.corrupt > 0 && this.random.float() < d.corrupt && length > ETH_HEADER_BYTES) {
      for (let i = 0; i < length; i++) this.scratch[i] = frame[i]!;
      // From the BTH to the end of the IPv4 packet (the ICRC's last byte), skipping the masked
      // resv8a byte; a frame too short for that gets a byte after its Ethernet header.
      const packetEnd = ETH_HEADER_BYTES +
        ((frame[IPV4_AT + IPV4_TOTAL_LENGTH]! << 8) | frame[IPV4_AT + IPV4_TOTAL_LENGTH + 1]!);
      let at: number;
      if (packetEnd <= length && packetEnd > BTH_AT + BTH_RESV8A + 1) {
        at = BTH_AT + this.random.below(packetEnd - BTH_AT - 1);
        if (at >= BTH_AT + BTH_RESV8A) at++;
      } else {
        at = ETH_HEADER_BYTES + this.random.below(length - ETH_HEADER_BYTES);
      }
      this.scratch[at] = this.scratch[at]! ^ (1 + this.random.below(255));
      bytes = this.scratch;
      d.corrupted++;
    }
    const copies = d.duplicate > 0 && this.random.float() < d.duplicate ? 2 : 1;
    if (copies === 2) d.duplicated++;
    for (let c = 0; c < copies; c++) {
      if (d.delayNs > 0) {
        d.delayed++;
        this.hold(direction, bytes, length, this.nowNs() + d.delayNs);
      } else if (d.reorder > 0 && this.random.float() < d.reorder) {
        d.reordered++;
        this.hold(direction, bytes, length, -1);
      } else {
        this.emit(direction, bytes, length);
        this.releaseReordered(direction);
      }
    }
  }

  private hold(direction: number, frame: Uint8Array, length: number, untilNs: number): void {
    for (let i = 0; i < HOLD_SLOTS; i++) {
      if (this.holdDirection[i] !== FREE) continue;
      const slot = this.holdBytes[i]!;
      for (let k = 0; k < length; k++) slot[k] = frame[k]!;
      this.holdLength[i] = length;
      this.holdDirection[i] = direction;
      this.holdUntilNs[i] = untilNs;
      this.held++;
      return;
    }
    this.holdOverflow++;
  }

  /** After a frame passed in `direction`, the frames it overtook follow it. */
  private releaseReordered(direction: number): void {
    if (this.held === 0) return;
    for (let i = 0; i < HOLD_SLOTS; i++)
      if (this.holdDirection[i] === direction && this.holdUntilNs[i] === -1) this.emitHeld(i);
  }

  private emitHeld(i: number): void {
    const direction = this.holdDirection[i]!;
    // The slot stays taken while the frame is out: a receiver that sends may hold another frame.
    this.holdDirection[i] = EMITTING;
    try {
      this.emit(direction, this.holdBytes[i]!, this.holdLength[i]!);
    } finally {
      this.holdDirection[i] = FREE;
      this.held--;
    }
  }

  private emit(direction: number, frame: Uint8Array, length: number): void {
    if (direction === TX) this.inner.send(frame, length);
    else this.receiver(frame, length);
  }
}
