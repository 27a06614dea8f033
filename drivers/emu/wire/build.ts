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
import { icrcInt32, writeIcrc } from './icrc.ts';
import {
  OPCODE_AETH_AT, OPCODE_ATOMIC_ACK_ETH_AT, OPCODE_ATOMIC_ETH_AT, OPCODE_EXT_BYTES, OPCODE_FLAGS, OPCODE_IETH_AT,
  OPCODE_IMMDT_AT, OPCODE_RETH_AT, OpFlag, opcodeName,
} from './opcodes.ts';
import type { RoceFrame } from './roce-frame.ts';

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
  if ((flags & OpFlag.VALID) === 0) throw new RangeError(`encodeFrame: opcode ${opcodeName(op)} is not an RC opcode`);
  const payloadLength = f.payloadLength;
  if (!(payloadLength >= 0 && Number.isInteger(payloadLength)))
    throw new RangeError(`encodeFrame: payloadLength ${payloadLength}`);
  if (payloadLength > 0 && (flags & OpFlag.PAYLOAD) === 0) {
    throw new RangeError(`encodeFrame: ${opcodeName(op)} carries no payload, got ${payloadLength} bytes`);
  }
  if (!(f.destQp >= 0 && f.destQp < U24_LIMIT) || !(f.psn >= 0 && f.psn < U24_LIMIT)) {
    throw new RangeError(`encodeFrame: destQp ${f.destQp} / psn ${f.psn} do not fit in 24 bits`);
  }
  const payloadOffset = payloadOffsetFor(op);
  const pad = padCountFor(payloadLength);
  const packetLength = payloadOffset + payloadLength + pad + ICRC_BYTES;
  const ipTotalLength = packetLength - IPV4_AT;
  if (ipTotalLength > MAX_IPV4_TOTAL_LENGTH) throw new RangeError(`encodeFrame: ${ipTotalLength}-byte IPv4 packet`);
  const frameLength = packetLength < ETH_MIN_FRAME_BYTES ? ETH_MIN_FRAME_BYTES : packetLength;
  if (frameLength > out.length)
    throw new RangeError(`encodeFrame: ${frameLength}-byte frame, buffer holds ${out.length}`);

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

  // Extension headers, each where the opcode table puts it
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
