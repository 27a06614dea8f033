/**
 * The RC transport's BTH opcodes (IBA 9.2.1, Table 38: transport prefix 000) and, for each,
 * the extension headers it carries and whether it carries a payload. Lookups are typed-array
 * tables indexed by the opcode byte, so the per-packet path reads numbers only.
 */
import { AETH_BYTES, ATOMIC_ACK_ETH_BYTES, ATOMIC_ETH_BYTES, IETH_BYTES, IMMDT_BYTES, RETH_BYTES } from './headers.ts';

export const Opcode = {
  RC_SEND_FIRST: 0x00,
  RC_SEND_MIDDLE: 0x01,
  RC_SEND_LAST: 0x02,
  RC_SEND_LAST_WITH_IMMEDIATE: 0x03,
  RC_SEND_ONLY: 0x04,
  RC_SEND_ONLY_WITH_IMMEDIATE: 0x05,
  RC_RDMA_WRITE_FIRST: 0x06,
  RC_RDMA_WRITE_MIDDLE: 0x07,
  RC_RDMA_WRITE_LAST: 0x08,
  RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: 0x09,
  RC_RDMA_WRITE_ONLY: 0x0a,
  RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: 0x0b,
  RC_RDMA_READ_REQUEST: 0x0c,
  RC_RDMA_READ_RESPONSE_FIRST: 0x0d,
  RC_RDMA_READ_RESPONSE_MIDDLE: 0x0e,
  RC_RDMA_READ_RESPONSE_LAST: 0x0f,
  RC_RDMA_READ_RESPONSE_ONLY: 0x10,
  RC_ACKNOWLEDGE: 0x11,
  RC_ATOMIC_ACKNOWLEDGE: 0x12,
  RC_COMPARE_SWAP: 0x13,
  RC_FETCH_ADD: 0x14,
  // 0x15 is reserved in RC.
  RC_SEND_LAST_WITH_INVALIDATE: 0x16,
  RC_SEND_ONLY_WITH_INVALIDATE: 0x17,
} as const;

export type OpcodeName = keyof typeof Opcode;

/** Bits of OPCODE_FLAGS[opcode]. */
export const OpFlag = {
  /** A known RC opcode. */
  VALID: 1 << 0,
  RETH: 1 << 1,
  ATOMIC_ETH: 1 << 2,
  AETH: 1 << 3,
  ATOMIC_ACK_ETH: 1 << 4,
  IMMDT: 1 << 5,
  IETH: 1 << 6,
  /** Carries payload bytes (and so a pad count). */
  PAYLOAD: 1 << 7,
  /** Sent by a requester (SEND, WRITE, READ request, atomics); else by a responder. */
  REQUEST: 1 << 8,
  /** Position of the packet in its message. ONLY = FIRST | LAST. */
  FIRST: 1 << 9,
  MIDDLE: 1 << 10,
  LAST: 1 << 11,
  SEND: 1 << 12,
  WRITE: 1 << 13,
  READ: 1 << 14,
  ATOMIC: 1 << 15,
  ACK: 1 << 16,
} as const;

const F = OpFlag;
const ONLY = F.FIRST | F.LAST;
const SEND = F.VALID | F.REQUEST | F.SEND | F.PAYLOAD;
const WRITE = F.VALID | F.REQUEST | F.WRITE | F.PAYLOAD;
const READ_RESPONSE = F.VALID | F.READ | F.PAYLOAD;

const FLAGS_BY_NAME: Record<OpcodeName, number> = {
  RC_SEND_FIRST: SEND | F.FIRST,
  RC_SEND_MIDDLE: SEND | F.MIDDLE,
  RC_SEND_LAST: SEND | F.LAST,
  RC_SEND_LAST_WITH_IMMEDIATE: SEND | F.LAST | F.IMMDT,
  RC_SEND_ONLY: SEND | ONLY,
  RC_SEND_ONLY_WITH_IMMEDIATE: SEND | ONLY | F.IMMDT,
  RC_RDMA_WRITE_FIRST: WRITE | F.FIRST | F.RETH,
  RC_RDMA_WRITE_MIDDLE: WRITE | F.MIDDLE,
  RC_RDMA_WRITE_LAST: WRITE | F.LAST,
  RC_RDMA_WRITE_LAST_WITH_IMMEDIATE: WRITE | F.LAST | F.IMMDT,
  RC_RDMA_WRITE_ONLY: WRITE | ONLY | F.RETH,
  RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE: WRITE | ONLY | F.RETH | F.IMMDT,
  RC_RDMA_READ_REQUEST: F.VALID | F.REQUEST | F.READ | ONLY | F.RETH,
  RC_RDMA_READ_RESPONSE_FIRST: READ_RESPONSE | F.FIRST | F.AETH,
  RC_RDMA_READ_RESPONSE_MIDDLE: READ_RESPONSE | F.MIDDLE,
  RC_RDMA_READ_RESPONSE_LAST: READ_RESPONSE | F.LAST | F.AETH,
  RC_RDMA_READ_RESPONSE_ONLY: READ_RESPONSE | ONLY | F.AETH,
  RC_ACKNOWLEDGE: F.VALID | F.ACK | ONLY | F.AETH,
  RC_ATOMIC_ACKNOWLEDGE: F.VALID | F.ACK | F.ATOMIC | ONLY | F.AETH | F.ATOMIC_ACK_ETH,
  RC_COMPARE_SWAP: F.VALID | F.REQUEST | F.ATOMIC | ONLY | F.ATOMIC_ETH,
  RC_FETCH_ADD: F.VALID | F.REQUEST | F.ATOMIC | ONLY | F.ATOMIC_ETH,
  RC_SEND_LAST_WITH_INVALIDATE: SEND | F.LAST | F.IETH,
  RC_SEND_ONLY_WITH_INVALIDATE: SEND | ONLY | F.IETH,
};

/** OPCODE_FLAGS[opcode]: OpFlag bits; 0 for an opcode this engine does not know. */
export const OPCODE_FLAGS = new Uint32Array(256);
/** Bytes of extension headers between the BTH and the payload. */
export const OPCODE_EXT_BYTES = new Uint8Array(256);
// Offsets of each extension header from the end of the BTH (0 where absent).
export const OPCODE_RETH_AT = new Uint8Array(256);
export const OPCODE_ATOMIC_ETH_AT = new Uint8Array(256);
export const OPCODE_AETH_AT = new Uint8Array(256);
export const OPCODE_ATOMIC_ACK_ETH_AT = new Uint8Array(256);
export const OPCODE_IMMDT_AT = new Uint8Array(256);
export const OPCODE_IETH_AT = new Uint8Array(256);

const NAMES: string[] = [];

for (const name of Object.keys(Opcode) as OpcodeName[]) {
  const op = Opcode[name];
  const flags = FLAGS_BY_NAME[name];
  OPCODE_FLAGS[op] = flags;
  NAMES[op] = name;
  // Extension headers in IBA order; each opcode's subset keeps that order.
  let at = 0;
  if (flags & F.RETH) { OPCODE_RETH_AT[op] = at; at += RETH_BYTES; }
  if (flags & F.ATOMIC_ETH) { OPCODE_ATOMIC_ETH_AT[op] = at; at += ATOMIC_ETH_BYTES; }
  if (flags & F.AETH) { OPCODE_AETH_AT[op] = at; at += AETH_BYTES; }
  if (flags & F.ATOMIC_ACK_ETH) { OPCODE_ATOMIC_ACK_ETH_AT[op] = at; at += ATOMIC_ACK_ETH_BYTES; }
  if (flags & F.IMMDT) { OPCODE_IMMDT_AT[op] = at; at += IMMDT_BYTES; }
  if (flags & F.IETH) { OPCODE_IETH_AT[op] = at; at += IETH_BYTES; }
  OPCODE_EXT_BYTES[op] = at;
}

export function isKnownOpcode(op: number): boolean {
  return op >= 0 && op < 256 && (OPCODE_FLAGS[op]! & OpFlag.VALID) !== 0;
}

/** `RC_SEND_ONLY`, or `UNKNOWN_0x64` for an opcode outside the table (tracing only: allocates). */
export function opcodeName(op: number): string {
  return (op >= 0 && op < 256 && NAMES[op]) || `UNKNOWN_0x${(op >>> 0).toString(16).padStart(2, '0')}`;
}
