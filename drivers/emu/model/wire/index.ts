/** The software NIC's wire layer: RoCEv2 frame layouts, builder, parser, ICRC (the pcap writer is the host's). */
export * from './headers.ts';
export * from './bytes.ts';
export { crc32, crc32Update, crc32Register, crc32UpdateRepeated } from './crc32.ts';
export { completeIcrc, computeIcrc, icrcInt32, readIcrc, readIcrcInt32, writeIcrc } from './icrc.ts';
export { ipv4HeaderChecksum, onesComplementSum } from './ipv4-checksum.ts';
export * from './opcodes.ts';
export * from './aeth.ts';
export { RoceFrame } from './roce-frame.ts';
export { ParseStatus, PARSE_STATUS_NAMES, PARSE_STATUS_COUNT, parseStatusName,
  type ParseStatusCode } from './parse-status.ts';
export {
  encodeFrame, encodeFrameWith, frameWordsOf, HeaderTemplate, buildFrame, payloadOffsetFor, padCountFor, packetBytesFor,
  frameBytesFor,
} from './build.ts';
export { parseFrame, parseReceived } from './parse.ts';
export { parseIpv4, formatIpv4, parseMac, formatMac } from './addresses.ts';
export { describeFrame } from './trace.ts';
