/**
 * Writes a whole RoCEv2 frame (Ethernet II / IPv4 / UDP 4791 / BTH / extension headers /
 * payload / pad / ICRC) into a caller-provided buffer from a RoceFrame record. Header values
 * are the ones rxe sends (rxe_net.c prepare4 and prepare_udp_hdr, rxe_hdr.h bth_init): TOS 0, DF set, TTL 64, UDP
 * checksum 0, TVer 0, resv8a 0. Nothing is allocated per frame.
 *
 * Two ways to place the payload:
 *   - in place (the hot path): write the payload at payloadOffsetFor(opcode) yourself, set
 *     f.payloadLength, then call encodeFrame(out, f);
 *   - buildFrame(out, f, payload, start) copies it from another buffer first.
 *
 * A sender whose frames share their path (a QP's: MACs, addresses, UDP port, P_Key, destination
 * QP) builds them with encodeFrameWith from a HeaderTemplate instead: the same bytes, the constant
 * headers copied as words and the ICRC's header part from tables (icrc.ts templateHeadersRegister).
 */
import { putU16, putU24, putU32 } from './bytes.ts';
import {
  ATOMIC_ACK_ETH_ORIG, ATOMIC_ETH_COMPARE, ATOMIC_ETH_RKEY, ATOMIC_ETH_SWAP, ATOMIC_ETH_VA, AETH_MSN, AETH_SYNDROME,
  BTH_ACK_REQ, BTH_ACK_REQ_BIT, BTH_AT, BTH_DEST_QP, BTH_FLAGS, BTH_MIG_REQ_BIT, BTH_OPCODE, BTH_PAD_SHIFT, BTH_PKEY,
  BTH_PSN, BTH_RESV8A, BTH_SE_BIT, BTH_TVER, ETH_DST, ETH_MIN_FRAME_BYTES, ETH_SRC, ETH_TYPE, ETH_TYPE_IPV4, EXT_AT,
  ICRC_BYTES, IPV4_AT, IPV4_CHECKSUM, IPV4_DST, IPV4_FLAG_DF, IPV4_FLAGS_FRAGMENT, IPV4_HEADER_BYTES, IPV4_ID,
  IPV4_PROTOCOL, IPV4_SRC, IPV4_TOS, IPV4_TOTAL_LENGTH, IPV4_TTL, IPV4_TTL_DEFAULT, IPV4_VERSION_IHL,
  IPV4_VERSION_IHL_PLAIN, IP_PROTOCOL_UDP, RETH_DMA_LENGTH, RETH_RKEY, RETH_VA, ROCEV2_UDP_PORT, UDP_AT, UDP_CHECKSUM,
  UDP_DST_PORT, UDP_LENGTH, UDP_SRC_PORT,
} from './headers.ts';
import { icrcAfterHeaders, icrcInt32, maskedHeadersRegister, templateHeadersRegister, writeIcrc } from './icrc.ts';
import { onesComplementSum } from './ipv4-checksum.ts';
import { ownWordView } from './frame-memory.ts';
import {
  OPCODE_AETH_AT, OPCODE_ATOMIC_ACK_ETH_AT, OPCODE_ATOMIC_ETH_AT, OPCODE_EXT_BYTES, OPCODE_FLAGS, OPCODE_IETH_AT,
  OPCODE_IMMDT_AT, OPCODE_RETH_AT, OpFlag, Opcode, opcodeName,
} from './opcodes.ts';
import { RoceFrame } from './roce-frame.ts';

const MAX_IPV4_TOTAL_LENGTH = 0xffff;
const U24_LIMIT = 0x1000000;

/** Where the payload of an `opcode` frame starts: 54 + the opcode's extension headers. */
export function payloadOffsetFor(opcode: number): number {
  return EXT_AT + OPCODE_EXT_BYTES[opcode & 0xff]!;
}

/** Pad bytes that bring `payloadLength` to a multiple of 4 (the BTH PadCnt). */
export function padCountFor(payloadLength: number): number {
  return -payloadLength & 3;
}

/** Bytes of the IPv4 packet plus its Ethernet header, ICRC included, for this opcode and payload. */
export function packetBytesFor(opcode: number, payloadLength: number): number {
  return payloadOffsetFor(opcode) + payloadLength + padCountFor(payloadLength) + ICRC_BYTES;
}

/** Bytes the builder writes: packetBytesFor, raised to the 60-byte Ethernet minimum. */
export function frameBytesFor(opcode: number, payloadLength: number): number {
  const packet = packetBytesFor(opcode, payloadLength);
  return packet < ETH_MIN_FRAME_BYTES ? ETH_MIN_FRAME_BYTES : packet;
}

/**
 * Writes every header, the pad, the ICRC and any Ethernet padding around a payload of
 * f.payloadLength bytes that is already at out[payloadOffsetFor(f.opcode)]. Sets f.padCount,
 * f.payloadOffset, f.packetLength and f.icrc. Returns the frame's length in bytes.
 * Throws RangeError on a record the wire cannot carry (a caller bug, never a peer's).
 */
export function encodeFrame(out: Uint8Array, f: RoceFrame): number {
  const op = f.opcode;
  const flags = op >= 0 && op < 256 ? OPCODE_FLAGS[op]! : 0;
  const frameLength = checkedFrameLength(out, f, flags, f.destQp);
  const payloadLength = f.payloadLength;
  const payloadOffset = payloadOffsetFor(op);
  const pad = padCountFor(payloadLength);
  const packetLength = payloadOffset + payloadLength + pad + ICRC_BYTES;
  const ipTotalLength = packetLength - IPV4_AT;

  // Ethernet II (six byte stores each: TypedArray.set costs more than that for six bytes)
  const dst = f.dstMac;
  const src = f.srcMac;
  for (let i = 0; i < 6; i++) {
    out[ETH_DST + i] = dst[i]!;
    out[ETH_SRC + i] = src[i]!;
  }
  putU16(out, ETH_TYPE, ETH_TYPE_IPV4);

  // IPv4, checksum last over the finished header
  const ip = IPV4_AT;
  out[ip + IPV4_VERSION_IHL] = IPV4_VERSION_IHL_PLAIN;
  out[ip + IPV4_TOS] = 0;
  putU16(out, ip + IPV4_TOTAL_LENGTH, ipTotalLength);
  putU16(out, ip + IPV4_ID, f.ipId);
  putU16(out, ip + IPV4_FLAGS_FRAGMENT, IPV4_FLAG_DF);
  out[ip + IPV4_TTL] = IPV4_TTL_DEFAULT;
  out[ip + IPV4_PROTOCOL] = IP_PROTOCOL_UDP;
  const srcIp = f.srcIp;
  const dstIp = f.dstIp;
  putU32(out, ip + IPV4_SRC, srcIp);
  putU32(out, ip + IPV4_DST, dstIp);
  // The header checksum (RFC 1071) summed from the values just written, not read back from the
  // buffer: the ten 16-bit words of the header, the checksum word counted as zero.
  let sum = ((IPV4_VERSION_IHL_PLAIN << 8) | 0) + ipTotalLength + (f.ipId & 0xffff) + IPV4_FLAG_DF +
    ((IPV4_TTL_DEFAULT << 8) | IP_PROTOCOL_UDP) + (srcIp >>> 16) + (srcIp & 0xffff) + (dstIp >>> 16) + (dstIp & 0xffff);
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  putU16(out, ip + IPV4_CHECKSUM, ~sum & 0xffff);

  // UDP, checksum 0 (not computed; the ICRC covers the packet)
  putU16(out, UDP_AT + UDP_SRC_PORT, f.udpSrcPort);
  putU16(out, UDP_AT + UDP_DST_PORT, ROCEV2_UDP_PORT);
  putU16(out, UDP_AT + UDP_LENGTH, ipTotalLength - IPV4_HEADER_BYTES);
  putU16(out, UDP_AT + UDP_CHECKSUM, 0);

  // BTH
  out[BTH_AT + BTH_OPCODE] = op;
  out[BTH_AT + BTH_FLAGS] =
    (f.se ? BTH_SE_BIT : 0) | (f.migReq ? BTH_MIG_REQ_BIT : 0) | (pad << BTH_PAD_SHIFT) | BTH_TVER;
  putU16(out, BTH_AT + BTH_PKEY, f.pkey);
  out[BTH_AT + BTH_RESV8A] = 0;
  putU24(out, BTH_AT + BTH_DEST_QP, f.destQp);
  out[BTH_AT + BTH_ACK_REQ] = f.ackReq ? BTH_ACK_REQ_BIT : 0;
  putU24(out, BTH_AT + BTH_PSN, f.psn);

  writeExtensionHeaders(out, f, flags);

  // Pad, ICRC, then zeros up to the Ethernet minimum
  const padAt = payloadOffset + payloadLength;
  for (let i = 0; i < pad; i++) out[padAt + i] = 0;
  const icrc = icrcInt32(out, IPV4_AT, packetLength);
  writeIcrc(out, packetLength, icrc);
  if (frameLength > packetLength) out.fill(0, packetLength, frameLength);

  f.padCount = pad;
  f.payloadOffset = payloadOffset;
  f.packetLength = packetLength;
  f.icrc = icrc >>> 0;
  return frameLength;
}

/** The OPCODE_FLAGS bits of the extension headers (a SEND or WRITE MIDDLE, LAST or ONLY has none). */
const EXTENSION_HEADERS =
  OpFlag.RETH | OpFlag.ATOMIC_ETH | OpFlag.AETH | OpFlag.ATOMIC_ACK_ETH | OpFlag.IMMDT | OpFlag.IETH;

/** The extension headers of `f`'s opcode (OPCODE_FLAGS `flags`), each where the opcode table puts it. */
function writeExtensionHeaders(out: Uint8Array, f: RoceFrame, flags: number): void {
  const op = f.opcode;
  if (flags & OpFlag.RETH) {
    const at = EXT_AT + OPCODE_RETH_AT[op]!;
    putU32(out, at + RETH_VA, f.rethVaHi);
    putU32(out, at + RETH_VA + 4, f.rethVaLo);
    putU32(out, at + RETH_RKEY, f.rethRkey);
    putU32(out, at + RETH_DMA_LENGTH, f.rethDmaLength);
  }
  if (flags & OpFlag.ATOMIC_ETH) {
    const at = EXT_AT + OPCODE_ATOMIC_ETH_AT[op]!;
    putU32(out, at + ATOMIC_ETH_VA, f.atomicVaHi);
    putU32(out, at + ATOMIC_ETH_VA + 4, f.atomicVaLo);
    putU32(out, at + ATOMIC_ETH_RKEY, f.atomicRkey);
    putU32(out, at + ATOMIC_ETH_SWAP, f.atomicSwapHi);
    putU32(out, at + ATOMIC_ETH_SWAP + 4, f.atomicSwapLo);
    putU32(out, at + ATOMIC_ETH_COMPARE, f.atomicCompareHi);
    putU32(out, at + ATOMIC_ETH_COMPARE + 4, f.atomicCompareLo);
  }
  if (flags & OpFlag.AETH) {
    const at = EXT_AT + OPCODE_AETH_AT[op]!;
    out[at + AETH_SYNDROME] = f.aethSyndrome;
    putU24(out, at + AETH_MSN, f.aethMsn);
  }
  if (flags & OpFlag.ATOMIC_ACK_ETH) {
    const at = EXT_AT + OPCODE_ATOMIC_ACK_ETH_AT[op]!;
    putU32(out, at + ATOMIC_ACK_ETH_ORIG, f.atomicAckOrigHi);
    putU32(out, at + ATOMIC_ACK_ETH_ORIG + 4, f.atomicAckOrigLo);
  }
  if (flags & OpFlag.IMMDT) putU32(out, EXT_AT + OPCODE_IMMDT_AT[op]!, f.immDt);
  if (flags & OpFlag.IETH) putU32(out, EXT_AT + OPCODE_IETH_AT[op]!, f.iethRkey);
}

/**
 * The length of the frame `f` describes (OPCODE_FLAGS `flags`) in `out`, after the checks of a
 * record the wire cannot carry (a caller bug, never a peer's): RangeError. `destQp` is the one the
 * frame goes to (the record's, or its template's).
 */
function checkedFrameLength(out: Uint8Array, f: RoceFrame, flags: number, destQp: number): number {
  const op = f.opcode;
  if ((flags & OpFlag.VALID) === 0) throw new RangeError(`encodeFrame: opcode ${opcodeName(op)} is not an RC opcode`);
  const payloadLength = f.payloadLength;
  if (!(payloadLength >= 0 && Number.isInteger(payloadLength)))
    throw new RangeError(`encodeFrame: payloadLength ${payloadLength}`);
  if (payloadLength > 0 && (flags & OpFlag.PAYLOAD) === 0) {
    throw new RangeError(`encodeFrame: ${opcodeName(op)} carries no payload, got ${payloadLength} bytes`);
  }
  if (!(destQp >= 0 && destQp < U24_LIMIT) || !(f.psn >= 0 && f.psn < U24_LIMIT)) {
    throw new RangeError(`encodeFrame: destQp ${destQp} / psn ${f.psn} do not fit in 24 bits`);
  }
  const packetLength = payloadOffsetFor(op) + payloadLength + padCountFor(payloadLength) + ICRC_BYTES;
  const ipTotalLength = packetLength - IPV4_AT;
  if (ipTotalLength > MAX_IPV4_TOTAL_LENGTH) throw new RangeError(`encodeFrame: ${ipTotalLength}-byte IPv4 packet`);
  const frameLength = packetLength < ETH_MIN_FRAME_BYTES ? ETH_MIN_FRAME_BYTES : packetLength;
  if (frameLength > out.length)
    throw new RangeError(`encodeFrame: ${frameLength}-byte frame, buffer holds ${out.length}`);
  return frameLength;
}

/**
 * Copies payload[start, start + f.payloadLength) to its place in `out`, then encodeFrame.
 * The copy makes one subarray view; the allocation-free path writes the payload in place.
 */
export function buildFrame(out: Uint8Array, f: RoceFrame, payload: Uint8Array, start: number): number {
  const n = f.payloadLength;
  if (n > 0) {
    if (!(start >= 0 && start + n <= payload.length)) {
      throw new RangeError(`buildFrame: payload [${start}, ${start + n}) outside ${payload.length} bytes`);
    }
    const at = payloadOffsetFor(f.opcode);
    if (at + n > out.length) throw new RangeError(`buildFrame: ${n}-byte payload does not fit in ${out.length} bytes`);
    out.set(payload.subarray(start, start + n), at);
  }
  return encodeFrame(out, f);
}

/** Frame bytes 2..53 (IPv4 at 14, UDP at 34, BTH at 42) as 32-bit words: 14 + 20 + 8 + 12 = 54 = 2 + 13 * 4. */
const TEMPLATE_WORDS = (EXT_AT - 2) / 4;
/** Word stores put their low byte first: true on every machine Node runs on here (x86-64, arm64). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The Ethernet, IPv4, UDP and BTH headers every frame of one sender (a QP) shares, built once from
 * its path (set) and copied into each frame by encodeFrameWith: its MACs, addresses, UDP ports,
 * P_Key and destination QP, with TTL, flags and the rest of the constant fields as encodeFrame
 * writes them. The bytes that differ between frames (IPv4 total length, identification and
 * checksum, UDP length, BTH opcode, flags, AckReq and PSN) are zero in it.
 */
export class HeaderTemplate {
  /** The path the template holds (-1: none yet): destination MAC as two numbers, then as RoceFrame names them. */
  dstMacHi = -1;
  dstMacLo = -1;
  dstIp = -1;
  udpSrcPort = -1;
  pkey = -1;
  destQp = -1;
  /** The 54 header bytes, and bytes 2..53 of them as little-endian words (where a frame buffer is word-aligned). */
  readonly bytes = new Uint8Array(EXT_AT);
  readonly words = new Int32Array(TEMPLATE_WORDS);
  /** Ones' complement sum of the IPv4 header's constant 16-bit words (RFC 1071; RFC 1624 adds the rest to it). */
  ipSum = 0;
  /** The ICRC's register after the masked headers of `bytes` (icrc.ts templateHeadersRegister). */
  icrcRegister = 0;

  /** Whether the template holds this path (the sender's own MAC and address are the same for all its frames). */
  holds(dstMac: Uint8Array, dstIp: number, udpSrcPort: number, pkey: number, destQp: number): boolean {
    return this.destQp === destQp && this.dstIp === dstIp && this.udpSrcPort === udpSrcPort && this.pkey === pkey &&
      this.dstMacLo === macLo(dstMac) && this.dstMacHi === macHi(dstMac);
  }

  /**
   * Builds the template from the path fields of `f` (dstMac, srcMac, srcIp, dstIp, udpSrcPort, pkey,
   * destQp): encodeFrame writes them, the per-frame bytes are then cleared. RangeError as encodeFrame's.
   */
  set(f: RoceFrame): void {
    const s = scratchFrame;
    s.dstMac.set(f.dstMac);
    s.srcMac.set(f.srcMac);
    s.srcIp = f.srcIp;
    s.dstIp = f.dstIp;
    s.udpSrcPort = f.udpSrcPort;
    s.pkey = f.pkey;
    s.destQp = f.destQp;
    encodeFrame(scratchBytes, s);
    const b = this.bytes;
    b.set(scratchBytes.subarray(0, EXT_AT));
    for (const at of PER_FRAME_BYTES) b[at] = 0;
    this.ipSum = onesComplementSum(b, IPV4_AT, IPV4_HEADER_BYTES);
    this.icrcRegister = maskedHeadersRegister(b, IPV4_AT);
    for (let k = 0; k < TEMPLATE_WORDS; k++) {
      const at = 2 + 4 * k;
      this.words[k] = b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24);
    }
    this.dstMacHi = macHi(f.dstMac);
    this.dstMacLo = macLo(f.dstMac);
    this.dstIp = f.dstIp;
    this.udpSrcPort = f.udpSrcPort;
    this.pkey = f.pkey;
    this.destQp = f.destQp;
  }
}

function macHi(m: Uint8Array): number {
  return (m[0]! << 8) | m[1]!;
}

function macLo(m: Uint8Array): number {
  return (m[2]! << 24) | (m[3]! << 16) | (m[4]! << 8) | m[5]!;
}

const scratchFrame = new RoceFrame();
scratchFrame.opcode = Opcode.RC_ACKNOWLEDGE;
const scratchBytes = new Uint8Array(ETH_MIN_FRAME_BYTES + 4);
/** The header bytes encodeFrameWith writes for each frame. */
const PER_FRAME_BYTES = [
  IPV4_AT + IPV4_TOTAL_LENGTH, IPV4_AT + IPV4_TOTAL_LENGTH + 1, IPV4_AT + IPV4_ID, IPV4_AT + IPV4_ID + 1,
  IPV4_AT + IPV4_CHECKSUM, IPV4_AT + IPV4_CHECKSUM + 1, UDP_AT + UDP_LENGTH, UDP_AT + UDP_LENGTH + 1,
  BTH_AT + BTH_OPCODE, BTH_AT + BTH_FLAGS, BTH_AT + BTH_ACK_REQ, BTH_AT + BTH_PSN, BTH_AT + BTH_PSN + 1,
  BTH_AT + BTH_PSN + 2,
];

/**
 * encodeFrame for a frame whose path is `h`'s (f's own path fields are not read; f.ipId is): the
 * same bytes, the same RangeErrors, the same fields of `f` set. `words` is frameWordsOf(out), or of
 * any array over the same memory (a loop cable's slots share one block): where it is not null (frame
 * buffers are word-aligned at their byte 2, FRAME_ALIGN past a 64-byte boundary: frame-memory.ts)
 * the headers go in as 13 word stores, the per-frame fields merged into their words, and the covered
 * bytes after the headers are folded as words; with null, byte by byte. The IPv4 checksum is the
 * template's constant sum plus total length and identification, folded (RFC 1071). `deferIcrc`
 * leaves the ICRC trailer unwritten (f.icrc 0), for a frame whose ICRC nobody reads unless it is
 * completed first (icrc.ts completeIcrc; the port's frames to itself: docs/hardware.md). A copy of
 * encodeFrame kept for speed (test/tidy.test.ts PERF_FORKS: its differential test and benchmark).
 */
export function encodeFrameWith(
  out: Uint8Array, f: RoceFrame, h: HeaderTemplate, words: Int32Array | null, deferIcrc: boolean,
): number {
  const op = f.opcode;
  const flags = op >= 0 && op < 256 ? OPCODE_FLAGS[op]! : 0;
  const frameLength = checkedFrameLength(out, f, flags, h.destQp);
  const payloadLength = f.payloadLength;
  const payloadOffset = EXT_AT + OPCODE_EXT_BYTES[op]!;
  const pad = -payloadLength & 3;
  const packetLength = payloadOffset + payloadLength + pad + ICRC_BYTES;
  const ipLength = packetLength - IPV4_AT;
  const udpLength = ipLength - IPV4_HEADER_BYTES;
  const id = f.ipId & 0xffff;
  const bthFlags = (f.se ? BTH_SE_BIT : 0) | (f.migReq ? BTH_MIG_REQ_BIT : 0) | (pad << BTH_PAD_SHIFT) | BTH_TVER;
  const ack = f.ackReq ? BTH_ACK_REQ_BIT : 0;
  const psn = f.psn;
  let sum = h.ipSum + ipLength + id;
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  const checksum = ~sum & 0xffff;
  const at = startOf(out) + 2;
  const at2 = words !== null && (at & 3) === 0 ? at >>> 2 : -1;
  if (at2 >= 0) {
    const w = words!;
    // Word k holds frame bytes 2 + 4k .. 5 + 4k, lowest address in the low byte.
    const tw = h.words;
    out[0] = h.bytes[0]!;
    out[1] = h.bytes[1]!;
    w[at2] = tw[0]!;
    w[at2 + 1] = tw[1]!;
    w[at2 + 2] = tw[2]!;
    w[at2 + 3] = tw[3]! | ((ipLength >>> 8) << 16) | ((ipLength & 0xff) << 24); // version/IHL, TOS, total length
    w[at2 + 4] = tw[4]! | (id >>> 8) | ((id & 0xff) << 8); // identification, flags/fragment
    w[at2 + 5] = tw[5]! | ((checksum >>> 8) << 16) | ((checksum & 0xff) << 24); // TTL, protocol, checksum
    w[at2 + 6] = tw[6]!;
    w[at2 + 7] = tw[7]!;
    w[at2 + 8] = tw[8]!;
    w[at2 + 9] = tw[9]! | (udpLength >>> 8) | ((udpLength & 0xff) << 8); // UDP length, checksum
    w[at2 + 10] = tw[10]! | op | (bthFlags << 8); // opcode, flags, P_Key
    w[at2 + 11] = tw[11]!;
    w[at2 + 12] = ack | ((psn >>> 16) << 8) | (((psn >>> 8) & 0xff) << 16) | ((psn & 0xff) << 24); // AckReq, PSN
  } else {
    out.set(h.bytes);
    putU16(out, IPV4_AT + IPV4_TOTAL_LENGTH, ipLength);
    putU16(out, IPV4_AT + IPV4_ID, id);
    putU16(out, IPV4_AT + IPV4_CHECKSUM, checksum);
    putU16(out, UDP_AT + UDP_LENGTH, udpLength);
    out[BTH_AT + BTH_OPCODE] = op;
    out[BTH_AT + BTH_FLAGS] = bthFlags;
    out[BTH_AT + BTH_ACK_REQ] = ack;
    putU24(out, BTH_AT + BTH_PSN, psn);
  }
  if ((flags & EXTENSION_HEADERS) !== 0) writeExtensionHeaders(out, f, flags);
  const padAt = payloadOffset + payloadLength;
  for (let i = 0; i < pad; i++) out[padAt + i] = 0;
  let icrc = 0;
  if (!deferIcrc) {
    const reg = templateHeadersRegister(h.icrcRegister, ipLength, id, op, bthFlags, ack, psn);
    const coveredEnd = packetLength - ICRC_BYTES;
    icrc = icrcAfterHeaders(reg, out, EXT_AT, coveredEnd, at2 >= 0 ? words : null, at2 + TEMPLATE_WORDS);
    writeIcrc(out, packetLength, icrc);
  }
  for (let i = packetLength; i < frameLength; i++) out[i] = 0;
  f.padCount = pad;
  f.payloadOffset = payloadOffset;
  f.packetLength = packetLength;
  f.icrc = icrc >>> 0;
  return frameLength;
}

/**
 * Where `out` starts in its memory: from the word view a frame buffer carries (frame-memory.ts
 * ownWordView, one load), else out.byteOffset (a getter call, 15-20 ns here, on every frame before).
 */
function startOf(out: Uint8Array): number {
  const own = ownWordView(out);
  return own !== undefined ? own.base : out.byteOffset;
}

/**
 * The word view encodeFrameWith takes for frames in `out`: all of out's memory as 32-bit words, or
 * null where out's byte 2 is not word-aligned in it (or the machine is big-endian). Made once per
 * block of frame memory by the sender (setup: reading an array's buffer costs more than a frame).
 */
export function frameWordsOf(out: Uint8Array): Int32Array | null {
  const buffer = out.buffer;
  return LITTLE_ENDIAN && ((out.byteOffset + 2) & 3) === 0 ? new Int32Array(buffer, 0, buffer.byteLength >>> 2) : null;
}
