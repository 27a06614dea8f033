/**
 * RoCEv2 frames written out by hand, byte by byte, from the header layouts (Ethernet II,
 * RFC 791 IPv4, RFC 768 UDP, IBA 9.2 BTH, 9.3.3 RETH, 9.3.5 AETH) and rxe's header values
 * (rxe_net.c prepare4, rxe_hdr.h). The IPv4 header checksums and ICRCs were computed once with Python's
 * zlib.crc32 and the masking rules of IBA annex A17 as rxe_icrc.c applies them (not with the code under test).
 *
 * All four share: dst MAC 52:54:00:77:00:01, src MAC 02:62:6e:00:00:01, 10.77.0.2 ->
 * 10.77.0.1, IP id 0, UDP source port 0xC001, P_Key 0xFFFF.
 */
import { RoceFrame } from '../../drivers/emu/model/wire/roce-frame.ts';

export const DST_MAC = Uint8Array.from([0x52, 0x54, 0x00, 0x77, 0x00, 0x01]);
export const SRC_MAC = Uint8Array.from([0x02, 0x62, 0x6e, 0x00, 0x00, 0x01]);
export const SRC_IP = 0x0a4d0002; // 10.77.0.2
export const DST_IP = 0x0a4d0001; // 10.77.0.1

const eth = [
  0x52, 0x54, 0x00, 0x77, 0x00, 0x01, // destination MAC
  0x02, 0x62, 0x6e, 0x00, 0x00, 0x01, // source MAC
  0x08, 0x00, //                         EtherType IPv4
];

/** IPv4 header: version 4 / IHL 5, TOS 0, total length, id 0, DF, TTL 64, UDP, checksum, addresses. */
function ipv4(totalLength: number, checksum: number): number[] {
  return [
    0x45, 0x00, totalLength >> 8, totalLength & 0xff,
    0x00, 0x00, 0x40, 0x00,
    0x40, 0x11, checksum >> 8, checksum & 0xff,
    10, 77, 0, 2,
    10, 77, 0, 1,
  ];
}

/** UDP header: source port 0xC001, destination 4791 (0x12B7), length, checksum 0. */
function udp(length: number): number[] {
  return [0xc0, 0x01, 0x12, 0xb7, length >> 8, length & 0xff, 0x00, 0x00];
}

export interface Fixture {
  readonly name: string;
  readonly bytes: Uint8Array;
  /** The record that builds these bytes (and that parsing them gives back). */
  readonly record: RoceFrame;
  readonly payload: Uint8Array;
  readonly icrc: number;
}

function record(fields: Partial<Record<keyof RoceFrame, number>>): RoceFrame {
  const f = new RoceFrame();
  f.dstMac.set(DST_MAC);
  f.srcMac.set(SRC_MAC);
  f.srcIp = SRC_IP;
  f.dstIp = DST_IP;
  f.udpSrcPort = 0xc001;
  Object.assign(f, fields);
  return f;
}

/** RC SEND_ONLY, SE and AckReq set, QP 0x123456, PSN 0xABCDEF, payload "hello", pad 3. */
export const SEND_ONLY: Fixture = {
  name: 'SEND_ONLY',
  bytes: Uint8Array.from([
    ...eth,
    ...ipv4(52, 0x261d),
    ...udp(32),
    // BTH: opcode 0x04 | SE 1, M 0, PadCnt 3, TVer 0 = 0xB0 | P_Key | resv8a | dest QP | A=1 | PSN
    0x04, 0xb0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
    0x68, 0x65, 0x6c, 0x6c, 0x6f, // "hello"
    0x00, 0x00, 0x00, //             pad
    0x16, 0x1f, 0xe0, 0x7c, //       ICRC 0x7CE01F16, little-endian
  ]),
  record: record({ opcode: 0x04, se: 1, ackReq: 1, destQp: 0x123456, psn: 0xabcdef, payloadLength: 5 }),
  payload: Uint8Array.from([0x68, 0x65, 0x6c, 0x6c, 0x6f]),
  icrc: 0x7ce01f16,
};

/** RC ACKNOWLEDGE of PSN 5 on QP 0x11: AETH syndrome 0x1F (ACK, credits 31), MSN 3. */
export const ACK: Fixture = {
  name: 'ACKNOWLEDGE',
  bytes: Uint8Array.from([
    ...eth,
    ...ipv4(48, 0x2621),
    ...udp(28),
    0x11, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x05, // BTH
    0x1f, 0x00, 0x00, 0x03, //                                                AETH
    0x64, 0xed, 0x95, 0x3f, //                                                ICRC 0x3F95ED64
  ]),
  record: record({ opcode: 0x11, destQp: 0x11, psn: 5, aethSyndrome: 0x1f, aethMsn: 3 }),
  payload: new Uint8Array(0),
  icrc: 0x3f95ed64,
};

/** RC RDMA_READ_REQUEST, AckReq, PSN 6: RETH VA 0x00007F1234567000, R_Key 0x00C0FFEE, length 4096. */
export const READ_REQUEST: Fixture = {
  name: 'RDMA_READ_REQUEST',
  bytes: Uint8Array.from([
    ...eth,
    ...ipv4(60, 0x2615),
    ...udp(40),
    0x0c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11, 0x80, 0x00, 0x00, 0x06, // BTH
    0x00, 0x00, 0x7f, 0x12, 0x34, 0x56, 0x70, 0x00, //                        RETH virtual address
    0x00, 0xc0, 0xff, 0xee, //                                                R_Key
    0x00, 0x00, 0x10, 0x00, //                                                DMA length
    0x71, 0x82, 0xbf, 0xc8, //                                                ICRC 0xC8BF8271
  ]),
  record: record({
    opcode: 0x0c, ackReq: 1, destQp: 0x11, psn: 6,
    rethVaHi: 0x00007f12, rethVaLo: 0x34567000, rethRkey: 0x00c0ffee, rethDmaLength: 4096,
  }),
  payload: new Uint8Array(0),
  icrc: 0xc8bf8271,
};

/** RC RDMA_READ_RESPONSE_FIRST to QP 0x12, PSN 6, AETH ACK MSN 7, payload 01..06, pad 2. */
export const READ_RESPONSE_FIRST: Fixture = {
  name: 'RDMA_READ_RESPONSE_FIRST',
  bytes: Uint8Array.from([
    ...eth,
    ...ipv4(56, 0x2619),
    ...udp(36),
    // BTH: PadCnt 2 -> flags 0x20
    0x0d, 0x20, 0xff, 0xff, 0x00, 0x00, 0x00, 0x12, 0x00, 0x00, 0x00, 0x06,
    0x1f, 0x00, 0x00, 0x07, //             AETH
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, // payload
    0x00, 0x00, //                         pad
    0x68, 0xa6, 0x9d, 0xd2, //             ICRC 0xD29DA668
  ]),
  record: record({ opcode: 0x0d, destQp: 0x12, psn: 6, aethSyndrome: 0x1f, aethMsn: 7, payloadLength: 6 }),
  payload: Uint8Array.from([1, 2, 3, 4, 5, 6]),
  icrc: 0xd29da668,
};

export const FIXTURES: readonly Fixture[] = [SEND_ONLY, ACK, READ_REQUEST, READ_RESPONSE_FIRST];

/**
 * Rewrites the IPv4 header checksum (bytes 24-25) of a frame whose IPv4 header is at 14, by RFC 1071,
 * written here independently of the code under test: for tests that change a header and want only
 * that change refused.
 */
export function fixIpChecksum(b: Uint8Array): void {
  b[24] = 0;
  b[25] = 0;
  let sum = 0;
  for (let i = 14; i < 34; i += 2) sum += b[i]! * 256 + b[i + 1]!;
  while (sum > 0xffff) sum = (sum % 65536) + Math.floor(sum / 65536);
  const c = 0xffff - sum;
  b[24] = c >> 8;
  b[25] = c & 0xff;
}
