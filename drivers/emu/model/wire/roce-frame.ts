/**
 * One RoCEv2 frame's fields as plain numbers: the record the builder reads and the parser
 * fills. The caller makes one per port (or per QP) and reuses it for every frame, so the
 * per-packet path creates no objects. 64-bit values (addresses, atomic operands) are kept as
 * two unsigned 32-bit halves, never as BigInt. Extension-header fields are meaningful only
 * when the opcode carries that header (OPCODE_FLAGS); the parser leaves the others untouched.
 */
import { IPV4_TTL_DEFAULT, MAC_BYTES, PKEY_DEFAULT, ROCEV2_SRC_PORT_BASE, ROCEV2_UDP_PORT } from './headers.ts';

export class RoceFrame {
  // Ethernet II
  readonly dstMac = new Uint8Array(MAC_BYTES);
  readonly srcMac = new Uint8Array(MAC_BYTES);
  // IPv4: addresses as unsigned 32-bit numbers (10.77.0.1 = 0x0a4d0001).
  srcIp = 0;
  dstIp = 0;
  ipId = 0;
  /** Built as 64 (rxe's value); filled by the parser. */
  ttl = IPV4_TTL_DEFAULT;
  /** Built as 0; filled by the parser (DSCP/ECN). */
  tos = 0;
  // UDP
  udpSrcPort = ROCEV2_SRC_PORT_BASE;
  /** Always 4791 when built; filled by the parser. */
  udpDstPort = ROCEV2_UDP_PORT;
  // BTH
  opcode = 0;
  /** Solicited event (0/1). */
  se = 0;
  /** MigReq (0/1). */
  migReq = 0;
  /** Filled by the parser; the builder computes it from payloadLength. */
  padCount = 0;
  tver = 0;
  pkey = PKEY_DEFAULT;
  /** Byte 4 of the BTH (FECN/BECN/reserved). Built as 0; filled by the parser. */
  resv8a = 0;
  destQp = 0;
  /** AckReq (0/1). */
  ackReq = 0;
  psn = 0;
  // RETH
  rethVaHi = 0;
  rethVaLo = 0;
  rethRkey = 0;
  rethDmaLength = 0;
  // AtomicETH
  atomicVaHi = 0;
  atomicVaLo = 0;
  atomicRkey = 0;
  atomicSwapHi = 0;
  atomicSwapLo = 0;
  atomicCompareHi = 0;
  atomicCompareLo = 0;
  // AETH
  aethSyndrome = 0;
  aethMsn = 0;
  // AtomicAckETH
  atomicAckOrigHi = 0;
  atomicAckOrigLo = 0;
  // ImmDt / IETH (a raw 32-bit value as on the wire)
  immDt = 0;
  iethRkey = 0;
  /** Where the payload starts in the frame. Set by the builder and the parser. */
  payloadOffset = 0;
  payloadLength = 0;
  /** Bytes of the IP packet plus its Ethernet header: where the ICRC ends (Ethernet padding follows). */
  packetLength = 0;
  /** The ICRC as a number (the value the wire carries little-endian). */
  icrc = 0;

  /** Copies every field of `other` into this record (setup paths; allocates nothing). */
  copyFrom(other: RoceFrame): this {
    this.dstMac.set(other.dstMac);
    this.srcMac.set(other.srcMac);
    for (const key of NUMERIC_KEYS) this[key] = other[key];
    return this;
  }
}

type NumericKey = { [K in keyof RoceFrame]: RoceFrame[K] extends number ? K : never }[keyof RoceFrame];
const NUMERIC_KEYS = Object.keys(new RoceFrame()).filter((k) => k !== 'dstMac' && k !== 'srcMac') as NumericKey[];
