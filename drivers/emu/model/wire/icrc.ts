/**
 * The RoCEv2 Invariant CRC (IBA 7.8.1 and Annex A17.3.3), computed as rxe computes and checks
 * it (rxe_icrc.c rxe_icrc_hdr, verified against rxe): CRC-32 over
 *
 *   8 x 0xFF (stands in for the LRH)
 *   | IPv4 header with TOS = 0xFF, TTL = 0xFF, header checksum = 0xFFFF
 *   | UDP header with checksum = 0xFFFF
 *   | BTH with byte 4 (resv8a) = 0xFF
 *   | everything after the BTH up to the ICRC (extension headers, payload, pad)
 *
 * i.e. every field a router may rewrite is masked to ones. The result goes on the wire
 * little-endian. The masked headers are folded from the frame with their masked bytes replaced
 * as they are read, the rest of the packet in place, so nothing is copied or allocated per frame.
 *
 * Long payloads may go to a faster CRC-32 the host hands in (LongCrc32, useLongCrc32; the host's
 * is drivers/emu/host/long-crc32.ts: libdeflate's, native, from 256 bytes where it loads,
 * else node:zlib's from 512, each 3-6x faster than the JS slicing-by-8 above its threshold and
 * slower below, a call costing 70-190 ns), continuing the register the JS CRC left: it takes and
 * returns the finished CRC, i.e. ~register. Without one (no host handed one in, or the host has
 * none) the JS CRC takes every length: the model's own, which imports nothing.
 *
 * A sender that keeps its headers as a template (build.ts encodeFrameWith: a QP's frames) does not
 * fold the masked headers at all: their register is the template's, corrected for the bytes that
 * differ with a table lookup each (templateHeadersRegister), and its short payloads are folded as
 * 32-bit words (crc32RegisterWords).
 */
import { crc32Fold8, crc32Register, crc32RegisterWords, crc32UpdateRepeated } from './crc32.ts';
import {
  BTH_ACK_REQ, BTH_BYTES, BTH_FLAGS, BTH_OPCODE, BTH_PSN, BTH_RESV8A, ICRC_BYTES, IPV4_AT, IPV4_CHECKSUM,
  IPV4_HEADER_BYTES, IPV4_ID, IPV4_TOS, IPV4_TOTAL_LENGTH, IPV4_TTL, UDP_CHECKSUM, UDP_HEADER_BYTES, UDP_LENGTH,
} from './headers.ts';

/** IPv4 + UDP + BTH: the headers that are masked, 40 bytes. */
const MASKED_BYTES = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + BTH_BYTES;
// maskedHeadersRegister folds the headers with the masked bytes at these places, in eight-byte steps.
if (IPV4_TOS !== 1 || IPV4_TTL !== 8 || IPV4_CHECKSUM !== 10 || IPV4_HEADER_BYTES !== 20 || UDP_CHECKSUM !== 6 ||
  UDP_HEADER_BYTES !== 8 || BTH_RESV8A !== 4 || BTH_BYTES !== 12) {
  throw new Error('icrc.ts: the header layout is not the one maskedHeadersRegister folds');
}
/** CRC register after the 8 bytes of 0xFF that stand in for the LRH. */
const LRH_REGISTER = ~crc32UpdateRepeated(0, 0xff, 8) | 0;

/** A faster CRC-32 for long ranges, which the host hands in (useLongCrc32). */
export interface LongCrc32 {
  /** Its name, for reports: 'libdeflate', 'node:zlib'. */
  readonly name: string;
  /** Ranges of at least this many bytes go to it (shorter ones: the JS CRC, faster there). */
  readonly minBytes: number;
  /** CRC-32 of frame[from, end) folded into the finished CRC `crc` (zlib's convention); unsigned. */
  crc32(crc: number, frame: Uint8Array, from: number, end: number): number;
}

/**
 * No faster CRC is asked for before a range this long needs one (LongCrc32.minBytes is this or
 * more): the host may bind native code for it, which a NIC with short frames never loads.
 */
export const LONG_CRC_PROBE_BYTES = 256;
/** Where the faster CRC comes from (the host's, handed in), and what it gave: undefined until asked. */
let longCrcSource: (() => LongCrc32 | null) | null = null;
let longCrc: LongCrc32 | null | undefined = null;

/**
 * The ICRC of this thread's long frames goes to what `source` gives, asked for at the first range
 * of LONG_CRC_PROBE_BYTES (null: the JS CRC alone, the default). A NicModel sets it from its
 * HostServices when it is built; every source gives the same CRC, only faster.
 */
export function useLongCrc32(source: (() => LongCrc32 | null) | null): void {
  longCrcSource = source;
  longCrc = source === null ? null : undefined;
}

/**
 * ICRC of the RoCEv2 packet whose IPv4 header starts at `ipAt` and whose ICRC trailer ends at
 * `packetEnd` (exclusive), as an unsigned 32-bit number. The headers must be present:
 * packetEnd - ipAt >= 44.
 */
export function computeIcrc(frame: Uint8Array, ipAt: number, packetEnd: number): number {
  return icrcInt32(frame, ipAt, packetEnd) >>> 0;
}

/** computeIcrc as a signed 32-bit integer (same bits): stays unboxed, for the per-packet path. */
export function icrcInt32(frame: Uint8Array, ipAt: number, packetEnd: number): number {
  const coveredEnd = packetEnd - ICRC_BYTES;
  if (ipAt < 0 || coveredEnd < ipAt + MASKED_BYTES || packetEnd > frame.length) {
    throw new RangeError(
      `computeIcrc: packet [${ipAt}, ${packetEnd}) of ${frame.length} bytes has no room for IPv4+UDP+BTH+ICRC`,
    );
  }
  return icrcAfterHeaders(maskedHeadersRegister(frame, ipAt), frame, ipAt + MASKED_BYTES, coveredEnd, null, 0);
}

/**
 * The ICRC (signed) of a packet whose masked headers end at `from`, given the CRC register after
 * them (`reg`): folds frame[from, coveredEnd), the extension headers, payload and pad. Long ranges
 * go to libdeflate's or zlib's CRC; a short one is folded in JS, as 32-bit words when `words` is a
 * word view of the frame's memory in which frame[from] is word `wordFrom` (the range is then whole
 * words: extension headers, payload and pad are), else byte by byte.
 */
export function icrcAfterHeaders(
  reg: number, frame: Uint8Array, from: number, coveredEnd: number, words: Int32Array | null, wordFrom: number,
): number {
  const n = coveredEnd - from;
  if (n >= LONG_CRC_PROBE_BYTES) {
    if (longCrc === undefined) longCrc = longCrcSource!();
    if (longCrc !== null && n >= longCrc.minBytes) return longCrc.crc32(~reg >>> 0, frame, from, coveredEnd) | 0;
  }
  if (words !== null) return ~crc32RegisterWords(reg, words, wordFrom, wordFrom + (n >>> 2));
  return ~crc32Register(reg, frame, from, coveredEnd);
}

/**
 * The masked headers' register without folding them: from a sender's template of them and the
 * fields that differ from frame to frame. CRC-32 without its initial and final inversion is linear
 * over GF(2): folding a block x ^ y from register r gives R(r, x) ^ R(0, y). A template holds
 * R(LRH register, its 40 header bytes) with every byte that differs between frames zero, and a
 * frame's y is those bytes alone, so its register is the template's xor, for each such byte b at
 * offset p, R(0, b followed by 39 - p zeros): twelve table lookups (VARYING_TABLES) instead of
 * folding 40 bytes. The bytes, at offsets from the IPv4 header: total length 2-3, identification
 * 4-5, UDP length 24-25, BTH opcode 28, flags 29 (SE, MigReq, PadCnt, TVer), AckReq 36, PSN 37-39.
 * `ipId` is the 16-bit identification, `psn` 24 bits; the UDP length is ipTotalLength - 20.
 */
export function templateHeadersRegister(
  base: number, ipTotalLength: number, ipId: number, opcode: number, bthFlags: number, ackByte: number, psn: number,
): number {
  const t = VARYING_TABLES;
  const udpLength = ipTotalLength - IPV4_HEADER_BYTES;
  return base ^ t[ipTotalLength >>> 8]! ^ t[256 + (ipTotalLength & 0xff)]! ^ t[2 * 256 + (ipId >>> 8)]! ^
    t[3 * 256 + (ipId & 0xff)]! ^ t[4 * 256 + (udpLength >>> 8)]! ^ t[5 * 256 + (udpLength & 0xff)]! ^
    t[6 * 256 + opcode]! ^ t[7 * 256 + bthFlags]! ^ t[8 * 256 + ackByte]! ^ t[9 * 256 + (psn >>> 16)]! ^
    t[10 * 256 + ((psn >>> 8) & 0xff)]! ^ t[11 * 256 + (psn & 0xff)]!;
}

/** Offsets in the masked headers of the bytes templateHeadersRegister takes, in its tables' order. */
const UDP_IN_MASKED = IPV4_HEADER_BYTES;
const BTH_IN_MASKED = IPV4_HEADER_BYTES + UDP_HEADER_BYTES;
const VARYING_AT = [
  IPV4_TOTAL_LENGTH, IPV4_TOTAL_LENGTH + 1, IPV4_ID, IPV4_ID + 1, UDP_IN_MASKED + UDP_LENGTH,
  UDP_IN_MASKED + UDP_LENGTH + 1, BTH_IN_MASKED + BTH_OPCODE, BTH_IN_MASKED + BTH_FLAGS, BTH_IN_MASKED + BTH_ACK_REQ,
  BTH_IN_MASKED + BTH_PSN, BTH_IN_MASKED + BTH_PSN + 1, BTH_IN_MASKED + BTH_PSN + 2,
];
/**
 * VARYING_TABLES[k * 256 + b]: the register after folding, from 0, byte b at offset VARYING_AT[k]
 * of the 40 masked header bytes and zeros to their end (leading zeros leave register 0 as it is).
 */
const VARYING_TABLES = makeVaryingTables();

function makeVaryingTables(): Int32Array {
  const tables = new Int32Array(VARYING_AT.length * 256);
  const block = new Uint8Array(MASKED_BYTES);
  for (let k = 0; k < VARYING_AT.length; k++) {
    const at = VARYING_AT[k]!;
    for (let b = 0; b < 256; b++) {
      block[at] = b;
      tables[k * 256 + b] = crc32Register(0, block, at, MASKED_BYTES);
    }
    block[at] = 0;
  }
  return tables;
}

/**
 * The CRC register after the LRH stand-in and the 40 bytes of IPv4 + UDP + BTH from `ipAt`, the
 * fields a router may rewrite read as ones: five eight-byte steps straight from the frame (no
 * copy of the headers into a scratch buffer first). Offsets are from the IPv4 header's start:
 * TOS 1, TTL 8, header checksum 10-11, UDP checksum 20 + 6-7, BTH resv8a 28 + 4. Also a template's
 * register (build.ts HeaderTemplate), once per path.
 */
export function maskedHeadersRegister(f: Uint8Array, a: number): number {
  let c = crc32Fold8(LRH_REGISTER, f[a]!, 0xff, f[a + 2]!, f[a + 3]!, f[a + 4]!, f[a + 5]!, f[a + 6]!, f[a + 7]!);
  c = crc32Fold8(c, 0xff, f[a + 9]!, 0xff, 0xff, f[a + 12]!, f[a + 13]!, f[a + 14]!, f[a + 15]!);
  c = crc32Fold8(c, f[a + 16]!, f[a + 17]!, f[a + 18]!, f[a + 19]!, f[a + 20]!, f[a + 21]!, f[a + 22]!, f[a + 23]!);
  c = crc32Fold8(c, f[a + 24]!, f[a + 25]!, 0xff, 0xff, f[a + 28]!, f[a + 29]!, f[a + 30]!, f[a + 31]!);
  return crc32Fold8(c, 0xff, f[a + 33]!, f[a + 34]!, f[a + 35]!, f[a + 36]!, f[a + 37]!, f[a + 38]!, f[a + 39]!);
}

/** The ICRC trailer ending at `packetEnd` (little-endian on the wire) as a signed 32-bit integer. */
export function readIcrcInt32(frame: Uint8Array, packetEnd: number): number {
  const at = packetEnd - ICRC_BYTES;
  return frame[at]! | (frame[at + 1]! << 8) | (frame[at + 2]! << 16) | (frame[at + 3]! << 24);
}

/** Reads the ICRC trailer ending at `packetEnd` (little-endian on the wire). */
export function readIcrc(frame: Uint8Array, packetEnd: number): number {
  const at = packetEnd - ICRC_BYTES;
  return (frame[at]! | (frame[at + 1]! << 8) | (frame[at + 2]! << 16) | (frame[at + 3]! << 24)) >>> 0;
}

/**
 * Writes the ICRC of the RoCEv2 frame in frame[0, length) (IPv4 at 14, the packet's end from its
 * IPv4 total length) into its trailer: for a frame built with its ICRC deferred (build.ts
 * encodeFrameWith), before anything that reads or copies it. Idempotent on a frame whose ICRC is
 * already there; a frame too short to be one is left as it is.
 */
export function completeIcrc(frame: Uint8Array, length: number): void {
  if (length < IPV4_AT + MASKED_BYTES + ICRC_BYTES) return;
  const packetEnd = IPV4_AT + ((frame[IPV4_AT + IPV4_TOTAL_LENGTH]! << 8) | frame[IPV4_AT + IPV4_TOTAL_LENGTH + 1]!);
  if (packetEnd > length || packetEnd < IPV4_AT + MASKED_BYTES + ICRC_BYTES) return;
  writeIcrc(frame, packetEnd, icrcInt32(frame, IPV4_AT, packetEnd));
}

/** Writes `icrc` as the trailer ending at `packetEnd`, little-endian. */
export function writeIcrc(frame: Uint8Array, packetEnd: number, icrc: number): void {
  const at = packetEnd - ICRC_BYTES;
  frame[at] = icrc;
  frame[at + 1] = icrc >>> 8;
  frame[at + 2] = icrc >>> 16;
  frame[at + 3] = icrc >>> 24;
}
