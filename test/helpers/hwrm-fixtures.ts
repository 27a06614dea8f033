/**
 * Fixture pattern shared by the HWRM codec tests (test/hwrm-*.test.ts), from the hsi.h
 * structs: every field holds, in each of its bytes, that byte's own offset (mod 256), so the
 * expected bytes read 00 01 02 ... with zeros where the struct has unused bytes. A u64 keeps
 * only its low 6 bytes (values stay below 2^53). Nothing here calls a codec.
 */

/** The byte values `from` to `to` inclusive, each mod 256. */
export const seq = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => (from + i) & 0xff);
export const zeros = (n: number): number[] => new Array<number>(n).fill(0);
/** `length` pattern bytes starting at offset `from`, for array fields. */
export const seqBytes = (from: number, length: number): Uint8Array => Uint8Array.from(seq(from, from + length - 1));
/** The 8 bytes of a u64 field at `at` under the pattern: its low 6 bytes, then two zeros. */
export const u64pat = (at: number): number[] => [...seq(at, at + 5), 0, 0];

/** hwrm_input header (16 bytes) under the pattern; resp_addr keeps its low 6 bytes. */
export const REQ_HDR = {
  req_type: 0x0100, cmpl_ring: 0x0302, seq_id: 0x0504, target_id: 0x0706, resp_addr: 0x0d0c0b0a0908,
};
export const REQ_HDR_BYTES = [...seq(0, 13), 0, 0];
/** hwrm_output header (8 bytes) under the pattern. */
export const RESP_HDR = { error_code: 0x0100, req_type: 0x0302, seq_id: 0x0504, resp_len: 0x0706 };
