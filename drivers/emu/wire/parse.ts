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
import { getU16, getU24, getU32 } from './bytes.ts';
import {
  AETH_MSN, AETH_SYNDROME, ATOMIC_ACK_ETH_ORIG, ATOMIC_ETH_COMPARE, ATOMIC_ETH_RKEY, ATOMIC_ETH_SWAP, ATOMIC_ETH_VA,
  BTH_ACK_REQ, BTH_ACK_REQ_BIT, BTH_AT, BTH_BYTES, BTH_DEST_QP, BTH_FLAGS, BTH_MIG_REQ_BIT, BTH_OPCODE, BTH_PAD_SHIFT,
  BTH_PKEY, BTH_PSN, BTH_RESV8A, BTH_SE_BIT, BTH_TVER, BTH_TVER_MASK, ETH_DST, ETH_HEADER_BYTES, ETH_SRC, ETH_TYPE,
  ETH_TYPE_IPV4, EXT_AT, ICRC_BYTES, IPV4_AT, IPV4_DST, IPV4_FLAG_MF, IPV4_FLAGS_FRAGMENT, IPV4_FRAGMENT_OFFSET_MASK,
  IPV4_HEADER_BYTES, IPV4_ID, IPV4_PROTOCOL, IPV4_SRC, IPV4_TOS, IPV4_TOTAL_LENGTH, IPV4_TTL, IPV4_VERSION_IHL,
  IP_PROTOCOL_UDP, MAC_BYTES, RETH_DMA_LENGTH, RETH_RKEY, RETH_VA, ROCEV2_UDP_PORT, UDP_AT, UDP_DST_PORT,
  UDP_HEADER_BYTES, UDP_LENGTH, UDP_SRC_PORT,
} from './headers.ts';
import { icrcInt32, readIcrcInt32 } from './icrc.ts';
import { onesComplementSum } from './ipv4-checksum.ts';
import {
  OPCODE_AETH_AT, OPCODE_ATOMIC_ACK_ETH_AT, OPCODE_ATOMIC_ETH_AT, OPCODE_EXT_BYTES, OPCODE_FLAGS, OPCODE_IETH_AT,
  OPCODE_IMMDT_AT, OPCODE_RETH_AT, OpFlag,
} from './opcodes.ts';
import { ParseStatus, type ParseStatusCode } from './parse-status.ts';
import type { RoceFrame } from './roce-frame.ts';

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
  if (!(length >= 0 && length <= frame.length))
    throw new RangeError(`parseFrame: length ${length} outside ${frame.length} bytes`);

  // Ethernet II
  if (length < ETH_HEADER_BYTES) return ParseStatus.TRUNCATED;
  if (localMac !== null) {
    for (let i = 0; i < MAC_BYTES; i++) if (frame[ETH_DST + i] !== localMac[i]) return ParseStatus.WRONG_DEST_MAC;
  }
  for (let i = 0; i < MAC_BYTES; i++) {
    out.dstMac[i] = frame[ETH_DST + i]!;
    out.srcMac[i] = frame[ETH_SRC + i]!;
  }
  if (getU16(frame, ETH_TYPE) !== ETH_TYPE_IPV4) return ParseStatus.NOT_IPV4;

  // IPv4
  const ip = IPV4_AT;
  if (length < ip + IPV4_HEADER_BYTES) return ParseStatus.TRUNCATED;
  const versionIhl = frame[ip + IPV4_VERSION_IHL]!;
  if (versionIhl >>> 4 !== 4) return ParseStatus.NOT_IPV4;
  if ((versionIhl & 0x0f) !== IPV4_HEADER_BYTES / 4) return ParseStatus.BAD_IP_HEADER;
  const ipTotalLength = getU16(frame, ip + IPV4_TOTAL_LENGTH);
  if (ipTotalLength < IPV4_HEADER_BYTES + UDP_HEADER_BYTES) return ParseStatus.BAD_IP_HEADER;
  const packetLength = ip + ipTotalLength;
  if (packetLength > length) return ParseStatus.TRUNCATED;
  if (onesComplementSum(frame, ip, IPV4_HEADER_BYTES) !== 0xffff) return ParseStatus.BAD_IP_CHECKSUM;
  const flagsFragment = getU16(frame, ip + IPV4_FLAGS_FRAGMENT);
  if ((flagsFragment & (IPV4_FLAG_MF | IPV4_FRAGMENT_OFFSET_MASK)) !== 0) return ParseStatus.IP_FRAGMENT;
  if (frame[ip + IPV4_PROTOCOL] !== IP_PROTOCOL_UDP) return ParseStatus.NOT_UDP;
  out.tos = frame[ip + IPV4_TOS]!;
  out.ipId = getU16(frame, ip + IPV4_ID);
  out.ttl = frame[ip + IPV4_TTL]!;
  out.srcIp = getU32(frame, ip + IPV4_SRC);
  out.dstIp = getU32(frame, ip + IPV4_DST);
  out.packetLength = packetLength;

  // UDP
  const udpLength = getU16(frame, UDP_AT + UDP_LENGTH);
  if (udpLength !== ipTotalLength - IPV4_HEADER_BYTES) return ParseStatus.BAD_UDP_LENGTH;
  out.udpSrcPort = getU16(frame, UDP_AT + UDP_SRC_PORT);
  out.udpDstPort = getU16(frame, UDP_AT + UDP_DST_PORT);
  if (out.udpDstPort !== ROCEV2_UDP_PORT) return ParseStatus.NOT_ROCEV2_PORT;
  const udpPayload = udpLength - UDP_HEADER_BYTES;
  // IBA packets are whole 32-bit words: headers, payload + pad and the ICRC.
  if (udpPayload < MIN_UDP_PAYLOAD || (udpPayload & 3) !== 0) return ParseStatus.BAD_LENGTH;

  // ICRC before any BTH field is trusted
  const icrc = readIcrcInt32(frame, packetLength);
  out.icrc = icrc >>> 0;
  if (!icrcTrusted && icrcInt32(frame, ip, packetLength) !== icrc) return ParseStatus.BAD_ICRC;

  // BTH
  const op = frame[BTH_AT + BTH_OPCODE]!;
  const bthFlags = frame[BTH_AT + BTH_FLAGS]!;
  out.opcode = op;
  out.se = (bthFlags & BTH_SE_BIT) !== 0 ? 1 : 0;
  out.migReq = (bthFlags & BTH_MIG_REQ_BIT) !== 0 ? 1 : 0;
  out.padCount = (bthFlags >>> BTH_PAD_SHIFT) & 3;
  out.tver = bthFlags & BTH_TVER_MASK;
  out.pkey = getU16(frame, BTH_AT + BTH_PKEY);
  out.resv8a = frame[BTH_AT + BTH_RESV8A]!;
  out.destQp = getU24(frame, BTH_AT + BTH_DEST_QP);
  out.ackReq = (frame[BTH_AT + BTH_ACK_REQ]! & BTH_ACK_REQ_BIT) !== 0 ? 1 : 0;
  out.psn = getU24(frame, BTH_AT + BTH_PSN);
  if (out.tver !== BTH_TVER) return ParseStatus.BAD_TVER;
  const flags = OPCODE_FLAGS[op]!;
  if ((flags & OpFlag.VALID) === 0) return ParseStatus.UNKNOWN_OPCODE;

  // Extension headers, payload and pad
  const afterHeaders = udpPayload - BTH_BYTES - OPCODE_EXT_BYTES[op]! - ICRC_BYTES;
  if (afterHeaders < 0) return ParseStatus.BAD_LENGTH;
  if (flags & OpFlag.PAYLOAD) {
    if (out.padCount > afterHeaders) return ParseStatus.BAD_PAD;
  } else {
    if (out.padCount !== 0) return ParseStatus.BAD_PAD;
    if (afterHeaders !== 0) return ParseStatus.UNEXPECTED_PAYLOAD;
  }
  out.payloadOffset = EXT_AT + OPCODE_EXT_BYTES[op]!;
  out.payloadLength = afterHeaders - out.padCount;

  if (flags & OpFlag.RETH) {
    const at = EXT_AT + OPCODE_RETH_AT[op]!;
    out.rethVaHi = getU32(frame, at + RETH_VA);
    out.rethVaLo = getU32(frame, at + RETH_VA + 4);
    out.rethRkey = getU32(frame, at + RETH_RKEY);
    out.rethDmaLength = getU32(frame, at + RETH_DMA_LENGTH);
  }
  if (flags & OpFlag.ATOMIC_ETH) {
    const at = EXT_AT + OPCODE_ATOMIC_ETH_AT[op]!;
    out.atomicVaHi = getU32(frame, at + ATOMIC_ETH_VA);
    out.atomicVaLo = getU32(frame, at + ATOMIC_ETH_VA + 4);
    out.atomicRkey = getU32(frame, at + ATOMIC_ETH_RKEY);
    out.atomicSwapHi = getU32(frame, at + ATOMIC_ETH_SWAP);
    out.atomicSwapLo = getU32(frame, at + ATOMIC_ETH_SWAP + 4);
    out.atomicCompareHi = getU32(frame, at + ATOMIC_ETH_COMPARE);
    out.atomicCompareLo = getU32(frame, at + ATOMIC_ETH_COMPARE + 4);
  }
  if (flags & OpFlag.AETH) {
    const at = EXT_AT + OPCODE_AETH_AT[op]!;
    out.aethSyndrome = frame[at + AETH_SYNDROME]!;
    out.aethMsn = getU24(frame, at + AETH_MSN);
  }
  if (flags & OpFlag.ATOMIC_ACK_ETH) {
    const at = EXT_AT + OPCODE_ATOMIC_ACK_ETH_AT[op]!;
    out.atomicAckOrigHi = getU32(frame, at + ATOMIC_ACK_ETH_ORIG);
    out.atomicAckOrigLo = getU32(frame, at + ATOMIC_ACK_ETH_ORIG + 4);
  }
  if (flags & OpFlag.IMMDT) out.immDt = getU32(frame, EXT_AT + OPCODE_IMMDT_AT[op]!);
  if (flags & OpFlag.IETH) out.iethRkey = getU32(frame, EXT_AT + OPCODE_IETH_AT[op]!);
  return ParseStatus.OK;
}
