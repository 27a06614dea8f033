/**
 * The port fuzz's frames (fuzz-port.ts): random bytes, or a frame of a random opcode whose
 * header fields are right most of the time (near-valid) or half the time (wild), naming the
 * victim NIC's queue pairs, keys and regions, then perhaps cut short or bit-flipped, most often
 * with a valid ICRC. Every choice comes from the fuzz's seeded draw.
 */
import {
  OPCODE_FLAGS, OpFlag, Opcode, RoceFrame, encodeFrame, icrcInt32, payloadOffsetFor, writeIcrc,
} from '../../drivers/emu/model/wire/index.ts';

/** The longest frame the fuzz crafts: a jumbo frame. */
export const FRAME_BYTES = 9216;
const VALID_OPCODES = Object.values(Opcode);

/** The two NICs' addresses a forged frame names (or not). */
export interface Addresses {
  readonly vMac: Uint8Array;
  readonly pMac: Uint8Array;
  readonly vIp: number;
  readonly pIp: number;
}

/**
 * Crafted frames into `out`: random bytes; or a frame of a random opcode whose every header
 * field is right most of the time (near-valid) or half the time (wild), its payload random,
 * then perhaps truncated or bit-flipped, and most often given a valid ICRC.
 */
export class Forger {
  readonly out = new Uint8Array(FRAME_BYTES);
  private readonly f = new RoceFrame();
  private ePsn = [0, 0, 0, 0];
  private qpns = [0, 0, 0, 0];
  /** Whether the frame being forged is near-valid (fields right 9 times in 10) or wild (half the time). */
  private near = false;

  /** `bases`: the IOVAs of the regions whose `keys` it names, each `regionBytes` long. */
  constructor(private readonly r: () => number, private readonly at: Addresses, private readonly keys: number[],
    private readonly bases: number[], private readonly regionBytes: number) {}

  /** The victims' queue pair numbers (v1, v2, v3, vo) and the PSNs they expect next. */
  expectedPsns(ePsn: number[], qpns: number[]): void {
    this.ePsn = ePsn;
    this.qpns = qpns;
  }

  private right(): boolean {
    return this.r() % 10 < (this.near ? 9 : 5);
  }

  private randomMac(m: Uint8Array): void {
    for (let i = 0; i < 6; i++) m[i] = this.r();
  }

  private randomBytes(n: number): number {
    for (let i = 0; i < n; i++) this.out[i] = this.r();
    return n;
  }

  /** One crafted frame in `out`; returns its length. */
  forge(): number {
    const { r, f, out } = this;
    const kind = r() % 100;
    if (kind < 4) return this.randomBytes(r() % 700);
    // Half the frames are near-valid (each field right 9 times in 10), so some reach the
    // deepest checks (keys, ranges, rights); the other half are wild (each field right half the time).
    this.near = r() % 2 === 0;
    const valid = r() % 10 !== 0;
    const opcode = valid ? VALID_OPCODES[r() % VALID_OPCODES.length]! : r() % 256;
    const buildAs = (OPCODE_FLAGS[opcode]! & OpFlag.VALID) !== 0 ? opcode : Opcode.RC_SEND_ONLY;
    const flags = OPCODE_FLAGS[buildAs]!;
    this.headers();
    if (flags & OpFlag.RETH) this.reth();
    this.extensions(flags);
    this.payload(flags, buildAs);
    let length: number;
    try {
      f.opcode = buildAs;
      length = encodeFrame(out, f);
    } catch {
      return this.randomBytes(r() % 300);
    }
    if (opcode !== buildAs) out[42] = opcode; // an opcode no table knows, in a frame otherwise whole
    return this.mutate(length);
  }

  /** Addresses, queue pair, PSN, P_Key and the BTH flags. */
  private headers(): void {
    const { r, f, at } = this;
    if (this.right()) f.dstMac.set(at.vMac); else this.randomMac(f.dstMac);
    if (this.right()) f.srcMac.set(at.pMac);
    else if (r() % 2 === 0) f.srcMac.set(at.vMac);
    else this.randomMac(f.srcMac);
    f.srcIp = this.right() ? at.pIp : r() % 2 === 0 ? at.vIp : r();
    f.dstIp = this.right() ? at.vIp : r();
    const target = r() % 20;
    const qi = target < 6 ? 0 : target < 10 ? 1 : target < 13 ? 2 : target < 19 ? 3 : -1;
    f.destQp = qi >= 0 ? this.qpns[qi]! : r() & 0xffffff;
    f.psn = qi >= 0 && this.right() ? (r() % 4 === 0 ? (this.ePsn[qi]! + (r() % 5) - 2) & 0xffffff : this.ePsn[qi]!)
      : r() & 0xffffff;
    f.pkey = this.right() || r() % 2 === 0 ? 0xffff : r() & 0xffff;
    f.ackReq = r() & 1;
    f.se = r() % 8 === 0 ? 1 : 0;
  }

  /** A key of V's regions, P's or a random one; an address inside, across the end of or far from it; a length. */
  private reth(): void {
    const { r, f } = this;
    const region = this.regionBytes;
    const k = this.right() ? r() % 5 : r() % 7;
    f.rethRkey = k < 5 ? this.keys[k]! : r();
    const base = k < 5 ? this.bases[k]! : r() * 4096;
    const w = this.right() ? 1 : r() % 6;
    const va = w === 0 ? base : w === 1 ? base + (r() % region) : w === 2 ? base + region - (r() % 64) : w === 3
      ? base - (r() % 4096) : w === 4 ? r() * 65536 + r() : base + region;
    f.rethVaHi = Math.floor(va / 4294967296) >>> 0;
    f.rethVaLo = va >>> 0;
    const l = this.right() ? 2 : r() % 8;
    f.rethDmaLength = l === 0 ? 0 : l === 1 ? 1 + (r() % 64) : l === 2 ? r() % 8192 : l === 3 ? region : l === 4
      ? region + 1 : l === 5 ? 0x80000000 : l === 6 ? 0xffffffff : r();
  }

  /** AETH, ImmDt, IETH and AtomicETH, where the opcode has them. */
  private extensions(flags: number): void {
    const { r, f } = this;
    if (flags & OpFlag.AETH) {
      f.aethSyndrome = r() % 3 === 0 ? 0 : r() & 0xff;
      f.aethMsn = r() & 0xffffff;
    }
    if (flags & OpFlag.IMMDT) f.immDt = r();
    if (flags & OpFlag.IETH) f.iethRkey = this.keys[r() % this.keys.length]!;
    if (flags & OpFlag.ATOMIC_ETH) {
      f.atomicRkey = this.keys[r() % this.keys.length]!;
      f.atomicVaHi = 0;
      f.atomicVaLo = this.bases[r() % this.bases.length]! >>> 0;
    }
  }

  /** The payload's length (a WRITE's often agreeing with its RETH) and random bytes, after the headers. */
  private payload(flags: number, buildAs: number): void {
    const { r, f, out } = this;
    f.payloadLength = (flags & OpFlag.PAYLOAD) !== 0 ? (r() % 3 === 0 ? r() % 64 : r() % 4200) : 0;
    if ((flags & OpFlag.WRITE) !== 0 && (flags & OpFlag.FIRST) !== 0 && this.right()) {
      // A WRITE whose lengths agree (ONLY: the RETH length is the payload; FIRST: one MTU of more).
      if ((flags & OpFlag.LAST) !== 0) f.payloadLength = f.rethDmaLength = Math.min(f.rethDmaLength, 4096);
      else {
        f.payloadLength = 4096;
        if (f.rethDmaLength <= 4096) f.rethDmaLength = 4097 + (r() % 8192);
      }
    }
    // Payload: random bytes, in place after the headers (the builder covers them with the ICRC).
    const p0 = payloadOffsetFor(buildAs);
    for (let i = 0; i < f.payloadLength; i += 4) {
      const v = r();
      out[p0 + i] = v; out[p0 + i + 1] = v >>> 8; out[p0 + i + 2] = v >>> 16; out[p0 + i + 3] = v >>> 24;
    }
  }

  /** Truncated, bit-flipped or left whole; most frames then get a valid ICRC over what the headers say. */
  private mutate(length: number): number {
    const { r, f, out } = this;
    const mutation = r() % 100;
    if (mutation < 8) {
      length = r() % length; // truncated
    } else if (mutation < 16) {
      const flips = 1 + (r() % 4);
      for (let i = 0; i < flips; i++) out[14 + (r() % (length - 14))] ^= 1 + (r() % 255);
    }
    // Most frames get a valid ICRC (over whatever the headers now say), so they pass the parser.
    if (mutation >= 8 && r() % 10 < 9 && f.packetLength <= length) {
      writeIcrc(out, f.packetLength, icrcInt32(out, 14, f.packetLength));
    }
    return length;
  }
}
