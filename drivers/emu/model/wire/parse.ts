/**
 * Reads a received Ethernet frame as a RoCEv2 packet into a caller-owned RoceFrame record and
 * returns a ParseStatus number: OK, or the first reason the frame is not one this port takes.
 * It checks what a NIC's receive path checks before the transport sees the packet:
 *
 *   Ethernet  destination MAC (when given), EtherType IPv4
 *   IPv4      version 4, IHL 5, total length fits the frame, header checksum, not a fragment, UDP
 *   UDP       length agrees with IPv4, destination port 4791 (the UDP checksum is not checked:
 *             rxe sends 0 and the ICRC covers the packet)
 *   BTH       room for BTH + ICRC, 4-byte multiple, ICRC (unless the caller vouches for it),
 *             TVer 0, a known RC opcode, room for the opcode's headers, pad count consistent
 *             with the payload
 *
 * Bytes after the IPv4 packet (Ethernet padding of short frames) are ignored. Never throws on
 * frame contents and allocates nothing. On a status other than OK the record is filled only up
 * to the header that failed.
 */
import { getU24, getU32 } from './bytes.ts';
import {
  AETH_MSN, AETH_SYNDROME, ATOMIC_ACK_ETH_ORIG, ATOMIC_ETH_COMPARE, ATOMIC_ETH_RKEY, ATOMIC_ETH_SWAP, ATOMIC_ETH_VA,
  BTH_ACK_REQ, BTH_ACK_REQ_BIT, BTH_AT, BTH_BYTES, BTH_DEST_QP, BTH_FLAGS, BTH_MIG_REQ_BIT, BTH_OPCODE, BTH_PAD_SHIFT,
  BTH_PKEY, BTH_PSN, BTH_RESV8A, BTH_SE_BIT, BTH_TVER, BTH_TVER_MASK, ETH_DST, ETH_HEADER_BYTES, ETH_SRC, ETH_TYPE,
  ETH_TYPE_IPV4, EXT_AT, ICRC_BYTES, IPV4_AT, IPV4_DST, IPV4_FLAG_MF, IPV4_FLAGS_FRAGMENT, IPV4_FRAGMENT_OFFSET_MASK,
  IPV4_CHECKSUM, IPV4_HEADER_BYTES, IPV4_ID, IPV4_PROTOCOL, IPV4_SRC, IPV4_TOS, IPV4_TOTAL_LENGTH, IPV4_TTL,
  IPV4_VERSION_IHL, IP_PROTOCOL_UDP, MAC_BYTES, RETH_DMA_LENGTH, RETH_RKEY, RETH_VA, ROCEV2_UDP_PORT, UDP_AT,
  UDP_DST_PORT, UDP_HEADER_BYTES, UDP_LENGTH, UDP_SRC_PORT,
} from './headers.ts';
import { icrcInt32, readIcrcInt32 } from './icrc.ts';
import {
  OPCODE_AETH_AT, OPCODE_ATOMIC_ACK_ETH_AT, OPCODE_ATOMIC_ETH_AT, OPCODE_EXT_BYTES, OPCODE_FLAGS, OPCODE_IETH_AT,
  OPCODE_IMMDT_AT, OPCODE_RETH_AT, OpFlag,
} from './opcodes.ts';
import { ParseStatus, type ParseStatusCode } from './parse-status.ts';
import type { RoceFrame } from './roce-frame.ts';
import { ownWordView } from './frame-memory.ts';

const MIN_UDP_PAYLOAD = BTH_BYTES + ICRC_BYTES;

/**
 * Parses frame[0, length) into `out`. `localMac`, when not null, is the port's MAC: frames
 * for any other destination are WRONG_DEST_MAC. `icrcTrusted` skips the ICRC comparison (every
 * other check is made): only for a frame this port built and computed the ICRC of itself, handed
 * to its own receive path in memory with nothing in between (the loop cable's hand-over; see
 * docs/hardware.md, "Frames a port hands to itself"). Throws only on a `length` outside `frame`
 * (a caller bug).
 */
export function parseFrame(
  frame: Uint8Array, length: number, out: RoceFrame, localMac: Uint8Array | null, icrcTrusted = false,
): ParseStatusCode {
  return parse(frame, length, out, localMac, icrcTrusted, true);
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * parseFrame for the engine's receive path: the same checks in the same order and the same
 * status, but on OK the record holds only what the transport reads (BTH opcode, SE, P_Key,
 * dest QP, AckReq, PSN; the IPv4 addresses; payload offset and length; the opcode's extension
 * headers). MACs, TOS, TTL, IP id, UDP ports, MigReq, pad count, TVer, resv8a, packet length and
 * the ICRC are left as they were, and nothing is filled on a status other than OK. A frame buffer
 * that carries its memory's word view (frameBuffer, frameSlots: every buffer of the port and the
 * cables) has its headers read as words (parseWords); any other array byte by byte.
 */
export function parseReceived(
  frame: Uint8Array, length: number, out: RoceFrame, localMac: Uint8Array | null, icrcTrusted: boolean,
): ParseStatusCode {
  // A frame buffer of the port or a cable carries its memory's word view (frame-memory.ts).
  const v = ownWordView(frame);
  if (v !== undefined && LITTLE_ENDIAN) {
    const at = v.base + 2;
    if ((at & 3) === 0) return parseWords(frame, v.words, at >>> 2, length, out, localMac, icrcTrusted);
  }
  return parse(frame, length, out, localMac, icrcTrusted, false);
}

/**
 * The MAC parse() last compared with, as numbers: its first two bytes, then its last four (as
 * bytes in wire order, and as parseWords reads them: one little-endian word).
 */
let macOf: Uint8Array | null = null;
let macHi = 0;
let macLo = 0;
let macLoLe = 0;

function setMac(localMac: Uint8Array): void {
  macHi = (localMac[0]! << 8) | localMac[1]!;
  macLo = (localMac[2]! << 24) | (localMac[3]! << 16) | (localMac[4]! << 8) | localMac[5]!;
  macLoLe = (localMac[2]! | (localMac[3]! << 8) | (localMac[4]! << 16) | (localMac[5]! << 24)) >>> 0;
  macOf = localMac;
}

/**
 * Both parsers; `full`: fill every field (parseFrame). Each header byte is read once, into
 * locals, and the fixed fields are taken from those (the IPv4 checksum too): typed-array reads
 * are most of what a parse costs.
 */
function parse(
  b: Uint8Array, length: number, out: RoceFrame, localMac: Uint8Array | null, icrcTrusted: boolean, full: boolean,
): ParseStatusCode {
  if (!(length >= 0 && length <= b.length))
    throw new RangeError(`parseFrame: length ${length} outside ${b.length} bytes`);

  // Ethernet II
  if (length < ETH_HEADER_BYTES) return ParseStatus.TRUNCATED;
  if (localMac !== null) {
    if (localMac !== macOf) setMac(localMac);
    if ((((b[ETH_DST]! << 8) | b[ETH_DST + 1]!) !== macHi) ||
      ((b[ETH_DST + 2]! << 24) | (b[ETH_DST + 3]! << 16) | (b[ETH_DST + 4]! << 8) | b[ETH_DST + 5]!) !== macLo) {
      return ParseStatus.WRONG_DEST_MAC;
    }
  }
  if (full) {
    for (let i = 0; i < MAC_BYTES; i++) {
      out.dstMac[i] = b[ETH_DST + i]!;
      out.srcMac[i] = b[ETH_SRC + i]!;
    }
  }
  if (((b[ETH_TYPE]! << 8) | b[ETH_TYPE + 1]!) !== ETH_TYPE_IPV4) return ParseStatus.NOT_IPV4;

  // IPv4: the header's ten 16-bit words
  const ip = IPV4_AT;
  if (length < ip + IPV4_HEADER_BYTES) return ParseStatus.TRUNCATED;
  const versionIhl = b[ip + IPV4_VERSION_IHL]!;
  if (versionIhl >>> 4 !== 4) return ParseStatus.NOT_IPV4;
  if ((versionIhl & 0x0f) !== IPV4_HEADER_BYTES / 4) return ParseStatus.BAD_IP_HEADER;
  const tos = b[ip + IPV4_TOS]!;
  const ipTotalLength = (b[ip + IPV4_TOTAL_LENGTH]! << 8) | b[ip + IPV4_TOTAL_LENGTH + 1]!;
  if (ipTotalLength < IPV4_HEADER_BYTES + UDP_HEADER_BYTES) return ParseStatus.BAD_IP_HEADER;
  const packetLength = ip + ipTotalLength;
  if (packetLength > length) return ParseStatus.TRUNCATED;
  const ipId = (b[ip + IPV4_ID]! << 8) | b[ip + IPV4_ID + 1]!;
  const flagsFragment = (b[ip + IPV4_FLAGS_FRAGMENT]! << 8) | b[ip + IPV4_FLAGS_FRAGMENT + 1]!;
  const ttl = b[ip + IPV4_TTL]!;
  const protocol = b[ip + IPV4_PROTOCOL]!;
  const checksum = (b[ip + IPV4_CHECKSUM]! << 8) | b[ip + IPV4_CHECKSUM + 1]!;
  const src = (b[ip + IPV4_SRC]! << 24) | (b[ip + IPV4_SRC + 1]! << 16) | (b[ip + IPV4_SRC + 2]! << 8) |
    b[ip + IPV4_SRC + 3]!;
  const dst = (b[ip + IPV4_DST]! << 24) | (b[ip + IPV4_DST + 1]! << 16) | (b[ip + IPV4_DST + 2]! << 8) |
    b[ip + IPV4_DST + 3]!;
  // RFC 1071: the ones' complement sum of the ten words, the checksum included, is 0xFFFF.
  let sum = ((versionIhl << 8) | tos) + ipTotalLength + ipId + flagsFragment + ((ttl << 8) | protocol) + checksum +
    (src >>> 16) + (src & 0xffff) + (dst >>> 16) + (dst & 0xffff);
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  if (sum !== 0xffff) return ParseStatus.BAD_IP_CHECKSUM;
  if ((flagsFragment & (IPV4_FLAG_MF | IPV4_FRAGMENT_OFFSET_MASK)) !== 0) return ParseStatus.IP_FRAGMENT;
  if (protocol !== IP_PROTOCOL_UDP) return ParseStatus.NOT_UDP;
  const srcIp = src >>> 0;
  const dstIp = dst >>> 0;
  if (full) {
    out.tos = tos;
    out.ipId = ipId;
    out.ttl = ttl;
    out.srcIp = srcIp;
    out.dstIp = dstIp;
    out.packetLength = packetLength;
  }

  // UDP
  const udpLength = (b[UDP_AT + UDP_LENGTH]! << 8) | b[UDP_AT + UDP_LENGTH + 1]!;
  if (udpLength !== ipTotalLength - IPV4_HEADER_BYTES) return ParseStatus.BAD_UDP_LENGTH;
  const udpDstPort = (b[UDP_AT + UDP_DST_PORT]! << 8) | b[UDP_AT + UDP_DST_PORT + 1]!;
  if (full) {
    out.udpSrcPort = (b[UDP_AT + UDP_SRC_PORT]! << 8) | b[UDP_AT + UDP_SRC_PORT + 1]!;
    out.udpDstPort = udpDstPort;
  }
  if (udpDstPort !== ROCEV2_UDP_PORT) return ParseStatus.NOT_ROCEV2_PORT;
  const udpPayload = udpLength - UDP_HEADER_BYTES;
  // IBA packets are whole 32-bit words: headers, payload + pad and the ICRC.
  if (udpPayload < MIN_UDP_PAYLOAD || (udpPayload & 3) !== 0) return ParseStatus.BAD_LENGTH;

  // ICRC before any BTH field is trusted
  if (full || !icrcTrusted) {
    const icrc = readIcrcInt32(b, packetLength);
    if (full) out.icrc = icrc >>> 0;
    if (!icrcTrusted && icrcInt32(b, ip, packetLength) !== icrc) return ParseStatus.BAD_ICRC;
  }

  // BTH
  const op = b[BTH_AT + BTH_OPCODE]!;
  const bthFlags = b[BTH_AT + BTH_FLAGS]!;
  const padCount = (bthFlags >>> BTH_PAD_SHIFT) & 3;
  const tver = bthFlags & BTH_TVER_MASK;
  if (full) {
    out.opcode = op;
    out.se = (bthFlags & BTH_SE_BIT) !== 0 ? 1 : 0;
    out.migReq = (bthFlags & BTH_MIG_REQ_BIT) !== 0 ? 1 : 0;
    out.padCount = padCount;
    out.tver = tver;
    out.pkey = (b[BTH_AT + BTH_PKEY]! << 8) | b[BTH_AT + BTH_PKEY + 1]!;
    out.resv8a = b[BTH_AT + BTH_RESV8A]!;
    out.destQp = (b[BTH_AT + BTH_DEST_QP]! << 16) | (b[BTH_AT + BTH_DEST_QP + 1]! << 8) | b[BTH_AT + BTH_DEST_QP + 2]!;
    out.ackReq = (b[BTH_AT + BTH_ACK_REQ]! & BTH_ACK_REQ_BIT) !== 0 ? 1 : 0;
    out.psn = (b[BTH_AT + BTH_PSN]! << 16) | (b[BTH_AT + BTH_PSN + 1]! << 8) | b[BTH_AT + BTH_PSN + 2]!;
  }
  if (tver !== BTH_TVER) return ParseStatus.BAD_TVER;
  const flags = OPCODE_FLAGS[op]!;
  if ((flags & OpFlag.VALID) === 0) return ParseStatus.UNKNOWN_OPCODE;

  // Extension headers, payload and pad
  const extBytes = OPCODE_EXT_BYTES[op]!;
  const afterHeaders = udpPayload - BTH_BYTES - extBytes - ICRC_BYTES;
  const shape = payloadShape(flags, afterHeaders, padCount);
  if (shape !== ParseStatus.OK) return shape;
  if (!full) {
    out.opcode = op;
    out.se = (bthFlags & BTH_SE_BIT) !== 0 ? 1 : 0;
    out.pkey = (b[BTH_AT + BTH_PKEY]! << 8) | b[BTH_AT + BTH_PKEY + 1]!;
    out.destQp = (b[BTH_AT + BTH_DEST_QP]! << 16) | (b[BTH_AT + BTH_DEST_QP + 1]! << 8) | b[BTH_AT + BTH_DEST_QP + 2]!;
    out.ackReq = (b[BTH_AT + BTH_ACK_REQ]! & BTH_ACK_REQ_BIT) !== 0 ? 1 : 0;
    out.psn = (b[BTH_AT + BTH_PSN]! << 16) | (b[BTH_AT + BTH_PSN + 1]! << 8) | b[BTH_AT + BTH_PSN + 2]!;
    out.srcIp = srcIp;
    out.dstIp = dstIp;
  }
  out.payloadOffset = EXT_AT + extBytes;
  out.payloadLength = afterHeaders - padCount;
  if (flags & (OpFlag.RETH | OpFlag.ATOMIC_ETH | OpFlag.AETH | OpFlag.ATOMIC_ACK_ETH | OpFlag.IMMDT | OpFlag.IETH))
    extensionHeaders(b, op, flags, out);
  return ParseStatus.OK;
}

/** The extension headers opcode `op` carries (OPCODE_FLAGS `flags`), into `out`. */
function extensionHeaders(b: Uint8Array, op: number, flags: number, out: RoceFrame): void {
  if (flags & OpFlag.RETH) {
    const at = EXT_AT + OPCODE_RETH_AT[op]!;
    out.rethVaHi = getU32(b, at + RETH_VA);
    out.rethVaLo = getU32(b, at + RETH_VA + 4);
    out.rethRkey = getU32(b, at + RETH_RKEY);
    out.rethDmaLength = getU32(b, at + RETH_DMA_LENGTH);
  }
  if (flags & OpFlag.ATOMIC_ETH) {
    const at = EXT_AT + OPCODE_ATOMIC_ETH_AT[op]!;
    out.atomicVaHi = getU32(b, at + ATOMIC_ETH_VA);
    out.atomicVaLo = getU32(b, at + ATOMIC_ETH_VA + 4);
    out.atomicRkey = getU32(b, at + ATOMIC_ETH_RKEY);
    out.atomicSwapHi = getU32(b, at + ATOMIC_ETH_SWAP);
    out.atomicSwapLo = getU32(b, at + ATOMIC_ETH_SWAP + 4);
    out.atomicCompareHi = getU32(b, at + ATOMIC_ETH_COMPARE);
    out.atomicCompareLo = getU32(b, at + ATOMIC_ETH_COMPARE + 4);
  }
  if (flags & OpFlag.AETH) {
    const at = EXT_AT + OPCODE_AETH_AT[op]!;
    out.aethSyndrome = b[at + AETH_SYNDROME]!;
    out.aethMsn = getU24(b, at + AETH_MSN);
  }
  if (flags & OpFlag.ATOMIC_ACK_ETH) {
    const at = EXT_AT + OPCODE_ATOMIC_ACK_ETH_AT[op]!;
    out.atomicAckOrigHi = getU32(b, at + ATOMIC_ACK_ETH_ORIG);
    out.atomicAckOrigLo = getU32(b, at + ATOMIC_ACK_ETH_ORIG + 4);
  }
  if (flags & OpFlag.IMMDT) out.immDt = getU32(b, EXT_AT + OPCODE_IMMDT_AT[op]!);
  if (flags & OpFlag.IETH) out.iethRkey = getU32(b, EXT_AT + OPCODE_IETH_AT[op]!);
}

/** ETH_TYPE_IPV4 and ROCEV2_UDP_PORT as the high half of a little-endian word holds them (bytes swapped). */
const ETH_TYPE_IPV4_LE = ((ETH_TYPE_IPV4 & 0xff) << 8) | (ETH_TYPE_IPV4 >>> 8);
const ROCEV2_UDP_PORT_LE = ((ROCEV2_UDP_PORT & 0xff) << 8) | (ROCEV2_UDP_PORT >>> 8);

/** The big-endian 16-bit field in bytes 2 and 3 of little-endian word `w`. */
function hi16(w: number): number {
  return ((w >>> 16) & 0xff) << 8 | (w >>> 24);
}

/** The big-endian 16-bit field in bytes 0 and 1 of little-endian word `w`. */
function lo16(w: number): number {
  return (w & 0xff) << 8 | ((w >>> 8) & 0xff);
}

/** Little-endian word `w` as the big-endian 32-bit field its four bytes hold. */
function be32(w: number): number {
  return ((w & 0xff) << 24) | (((w >>> 8) & 0xff) << 16) | (((w >>> 16) & 0xff) << 8) | (w >>> 24);
}

/**
 * parseReceived for a frame whose byte 2 is word `k` of `w` (little-endian words over the frame's
 * memory: frame buffers start 2 bytes past a 64-byte boundary, frame-memory.ts): the same checks
 * in the same order, the same status and the same fields as parse(..., full = false), with the
 * 40 header bytes from the destination MAC's third to the PSN read as 10 words instead of one by
 * one. Word k + i holds frame bytes 2 + 4i .. 5 + 4i, the lowest address in its low byte. A word
 * is read only where parse reads its bytes, after the same length checks. The IPv4 checksum is
 * summed over the words' little-endian halves: the ones' complement sum of byte-swapped 16-bit
 * words is the byte-swapped sum (RFC 1071, 2.B), and 0xFFFF swapped is 0xFFFF. A copy of parse
 * kept for speed (test/tidy.test.ts PERF_FORKS: its differential test and benchmark).
 */
function parseWords(
  b: Uint8Array, w: Uint32Array, k: number, length: number, out: RoceFrame, localMac: Uint8Array | null,
  icrcTrusted: boolean,
): ParseStatusCode {
  if (!(length >= 0 && length <= b.length))
    throw new RangeError(`parseFrame: length ${length} outside ${b.length} bytes`);
  if (length < ETH_HEADER_BYTES) return ParseStatus.TRUNCATED;
  if (localMac !== null) {
    if (localMac !== macOf) setMac(localMac);
    if (((b[ETH_DST]! << 8) | b[ETH_DST + 1]!) !== macHi || w[k]! !== macLoLe) return ParseStatus.WRONG_DEST_MAC;
  }
  // Bytes 12-13 (EtherType) are the high half of word 2.
  if (w[k + 2]! >>> 16 !== ETH_TYPE_IPV4_LE) return ParseStatus.NOT_IPV4;

  // IPv4: words 3-7 (bytes 14-33)
  if (length < IPV4_AT + IPV4_HEADER_BYTES) return ParseStatus.TRUNCATED;
  const w3 = w[k + 3]!;
  const versionIhl = w3 & 0xff;
  if (versionIhl >>> 4 !== 4) return ParseStatus.NOT_IPV4;
  if ((versionIhl & 0x0f) !== IPV4_HEADER_BYTES / 4) return ParseStatus.BAD_IP_HEADER;
  const ipTotalLength = hi16(w3);
  if (ipTotalLength < IPV4_HEADER_BYTES + UDP_HEADER_BYTES) return ParseStatus.BAD_IP_HEADER;
  const packetLength = IPV4_AT + ipTotalLength;
  if (packetLength > length) return ParseStatus.TRUNCATED;
  const w4 = w[k + 4]!;
  const w5 = w[k + 5]!;
  const w6 = w[k + 6]!;
  const w7 = w[k + 7]!;
  let sum = (w3 & 0xffff) + (w3 >>> 16) + (w4 & 0xffff) + (w4 >>> 16) + (w5 & 0xffff) + (w5 >>> 16) +
    (w6 & 0xffff) + (w6 >>> 16) + (w7 & 0xffff) + (w7 >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  sum = (sum & 0xffff) + (sum >>> 16);
  if (sum !== 0xffff) return ParseStatus.BAD_IP_CHECKSUM;
  if ((hi16(w4) & (IPV4_FLAG_MF | IPV4_FRAGMENT_OFFSET_MASK)) !== 0) return ParseStatus.IP_FRAGMENT;
  if (((w5 >>> 8) & 0xff) !== IP_PROTOCOL_UDP) return ParseStatus.NOT_UDP;

  // UDP: words 8-9 (bytes 34-41)
  const udpLength = lo16(w[k + 9]!);
  if (udpLength !== ipTotalLength - IPV4_HEADER_BYTES) return ParseStatus.BAD_UDP_LENGTH;
  if (w[k + 8]! >>> 16 !== ROCEV2_UDP_PORT_LE) return ParseStatus.NOT_ROCEV2_PORT;
  const udpPayload = udpLength - UDP_HEADER_BYTES;
  if (udpPayload < MIN_UDP_PAYLOAD || (udpPayload & 3) !== 0) return ParseStatus.BAD_LENGTH;
  if (!icrcTrusted && icrcInt32(b, IPV4_AT, packetLength) !== readIcrcInt32(b, packetLength))
    return ParseStatus.BAD_ICRC;

  // BTH: words 10-12 (bytes 42-53)
  const w10 = w[k + 10]!;
  const op = w10 & 0xff;
  const bthFlags = (w10 >>> 8) & 0xff;
  const padCount = (bthFlags >>> BTH_PAD_SHIFT) & 3;
  if ((bthFlags & BTH_TVER_MASK) !== BTH_TVER) return ParseStatus.BAD_TVER;
  const flags = OPCODE_FLAGS[op]!;
  if ((flags & OpFlag.VALID) === 0) return ParseStatus.UNKNOWN_OPCODE;
  const extBytes = OPCODE_EXT_BYTES[op]!;
  const afterHeaders = udpPayload - BTH_BYTES - extBytes - ICRC_BYTES;
  const shape = payloadShape(flags, afterHeaders, padCount);
  if (shape !== ParseStatus.OK) return shape;
  const w11 = w[k + 11]!;
  const w12 = w[k + 12]!;
  out.opcode = op;
  out.se = (bthFlags & BTH_SE_BIT) !== 0 ? 1 : 0;
  out.pkey = hi16(w10);
  out.destQp = be32(w11) & 0xffffff;
  out.ackReq = (w12 & BTH_ACK_REQ_BIT) !== 0 ? 1 : 0;
  out.psn = be32(w12) & 0xffffff;
  out.srcIp = be32(w6) >>> 0;
  out.dstIp = be32(w7) >>> 0;
  out.payloadOffset = EXT_AT + extBytes;
  out.payloadLength = afterHeaders - padCount;
  if (flags & (OpFlag.RETH | OpFlag.ATOMIC_ETH | OpFlag.AETH | OpFlag.ATOMIC_ACK_ETH | OpFlag.IMMDT | OpFlag.IETH))
    extensionHeaders(b, op, flags, out);
  return ParseStatus.OK;
}

/**
 * Whether the bytes after an opcode's headers fit it (both parse paths): room for the headers, a pad
 * no longer than the payload, and neither pad nor payload for an opcode that carries none.
 */
function payloadShape(flags: number, afterHeaders: number, padCount: number): ParseStatusCode {
  if (afterHeaders < 0) return ParseStatus.BAD_LENGTH;
  if (flags & OpFlag.PAYLOAD) return padCount > afterHeaders ? ParseStatus.BAD_PAD : ParseStatus.OK;
  if (padCount !== 0) return ParseStatus.BAD_PAD;
  return afterHeaders !== 0 ? ParseStatus.UNEXPECTED_PAYLOAD : ParseStatus.OK;
}
