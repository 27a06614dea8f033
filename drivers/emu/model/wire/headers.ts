/**
 * Sizes and field offsets of every header in a RoCEv2 frame: the one source of truth for
 * these byte layouts. Offsets are relative to the start of their own header; all multi-byte
 * fields are big-endian. A RoCEv2 frame is
 *
 *   | Ethernet II 14 | IPv4 20 | UDP 8 | BTH 12 | [ext headers] | payload | pad 0-3 | ICRC 4 |
 *                                       \____________ UDP payload (IBA "packet") __________/
 *
 * Extension headers follow the BTH in the IBA order RETH, AtomicETH, AETH, AtomicAckETH,
 * ImmDt, IETH (each opcode carries a subset; see opcodes.ts).
 */

// The sizes the path-MTU rule sums live with it, once (firmware-hwrm/roce/ib-transport.ts).
import {
  ATOMIC_ETH_BYTES, BTH_BYTES, ICRC_BYTES, UDP_HEADER_BYTES,
} from '../../../../firmware-hwrm/roce/ib-transport.ts';
export { ATOMIC_ETH_BYTES, BTH_BYTES, ICRC_BYTES, UDP_HEADER_BYTES };

// IEEE 802.3 Ethernet II header (no 802.1Q tag, no FCS: neither appears in a QEMU datagram).
export const ETH_HEADER_BYTES = 14;
export const ETH_DST = 0;
export const ETH_SRC = 6;
export const ETH_TYPE = 12;
export const ETH_TYPE_IPV4 = 0x0800;
export const MAC_BYTES = 6;
/** Shortest Ethernet frame without its FCS; shorter frames are zero-padded by the sender. */
export const ETH_MIN_FRAME_BYTES = 60;

// RFC 791 IPv4 header without options (IHL 5).
export const IPV4_HEADER_BYTES = 20;
export const IPV4_VERSION_IHL = 0; // version << 4 | IHL
export const IPV4_TOS = 1;
export const IPV4_TOTAL_LENGTH = 2;
export const IPV4_ID = 4;
export const IPV4_FLAGS_FRAGMENT = 6; // flags (3 bits: reserved, DF, MF) << 13 | fragment offset
export const IPV4_TTL = 8;
export const IPV4_PROTOCOL = 9;
export const IPV4_CHECKSUM = 10;
export const IPV4_SRC = 12;
export const IPV4_DST = 16;
export const IPV4_VERSION_IHL_PLAIN = 0x45; // version 4, 5 words
export const IPV4_FLAG_DF = 0x4000;
export const IPV4_FLAG_MF = 0x2000;
export const IPV4_FRAGMENT_OFFSET_MASK = 0x1fff;
/** rdma_rxe sends TTL 64, TOS 0 and DF set (rxe_net.c, prepare_ipv4_hdr). */
export const IPV4_TTL_DEFAULT = 64;
export const IP_PROTOCOL_UDP = 17;

// RFC 768 UDP header (UDP_HEADER_BYTES = 8).
export const UDP_SRC_PORT = 0;
export const UDP_DST_PORT = 2;
export const UDP_LENGTH = 4;
export const UDP_CHECKSUM = 6;
/** IANA port of RoCEv2 (IBA Annex A17). */
export const ROCEV2_UDP_PORT = 4791;
/**
 * Source ports are chosen per QP in 0xC000-0xFFFF (rdma_rxe: RXE_ROCE_V2_SPORT | a 14-bit hash of the QP number,
 * rxe_qp.c); rxe does not check them.
 */
export const ROCEV2_SRC_PORT_BASE = 0xc000;

// IBA 9.2 Base Transport Header (BTH_BYTES = 12).
export const BTH_OPCODE = 0;
export const BTH_FLAGS = 1; // SE bit 7 | M bit 6 | PadCnt bits 5-4 | TVer bits 3-0
export const BTH_PKEY = 2;
export const BTH_RESV8A = 4; // FECN/BECN + reserved in RoCEv2; masked to 0xFF in the ICRC
export const BTH_DEST_QP = 5; // 24 bits
export const BTH_ACK_REQ = 8; // A bit 7 | 7 reserved bits
export const BTH_PSN = 9; // 24 bits
export const BTH_SE_BIT = 0x80;
export const BTH_MIG_REQ_BIT = 0x40;
export const BTH_PAD_SHIFT = 4;
export const BTH_TVER_MASK = 0x0f;
export const BTH_ACK_REQ_BIT = 0x80;
export const BTH_TVER = 0;
/** The default partition key (full member, IBA 10.9.1.2); rdma_rxe uses and accepts 0xFFFF. */
export const PKEY_DEFAULT = 0xffff;

// IBA 9.3.3 RDMA Extended Transport Header.
export const RETH_BYTES = 16;
export const RETH_VA = 0; // u64 as hi, lo
export const RETH_RKEY = 8;
export const RETH_DMA_LENGTH = 12;

// IBA 9.3.4 Atomic Extended Transport Header (ATOMIC_ETH_BYTES = 28).
export const ATOMIC_ETH_VA = 0;
export const ATOMIC_ETH_RKEY = 8;
export const ATOMIC_ETH_SWAP = 12; // u64 swap (or add) data
export const ATOMIC_ETH_COMPARE = 20; // u64 compare data

// IBA 9.3.5 ACK Extended Transport Header.
export const AETH_BYTES = 4;
export const AETH_SYNDROME = 0;
export const AETH_MSN = 1; // 24 bits

// IBA 9.3.6 Atomic ACK Extended Transport Header.
export const ATOMIC_ACK_ETH_BYTES = 8;
export const ATOMIC_ACK_ETH_ORIG = 0; // u64 original remote data

// IBA 9.3.7 Immediate Data Extended Transport Header.
export const IMMDT_BYTES = 4;

// IBA 9.3.8 Invalidate Extended Transport Header.
export const IETH_BYTES = 4;

// Invariant CRC trailer (IBA 7.8.1, ICRC_BYTES = 4), little-endian on the wire.

/** Where the IPv4 header, UDP header and BTH start in a frame. */
export const IPV4_AT = ETH_HEADER_BYTES;
export const UDP_AT = IPV4_AT + IPV4_HEADER_BYTES;
export const BTH_AT = UDP_AT + UDP_HEADER_BYTES;
/** Bytes before the first extension header: Ethernet + IPv4 + UDP + BTH = 54. */
export const EXT_AT = BTH_AT + BTH_BYTES;

