/**
 * Fixture builders shared by the RoCE codec tests (test/roce-*.test.ts). They only place bytes
 * the tests write out by hand from the roce_hsi.h structs (offsets counted by hand); none of them calls a codec.
 */

/** A `size`-byte fixture; each row is [offset, ...the bytes at that offset]. A byte written twice is a fixture bug. */
export function wire(size: number, ...rows: number[][]): number[] {
  const out = new Array<number | undefined>(size).fill(undefined);
  for (const [offset, ...bs] of rows) {
    bs.forEach((b, i) => {
      if (out[offset! + i] !== undefined) throw new Error(`fixture writes byte ${offset! + i} twice`);
      out[offset! + i] = b;
    });
  }
  return out.map((b) => b ?? 0);
}

/** `n` consecutive byte values starting at `from`. */
export const seq = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

// The command fixtures share one cmdq_base (§2.4): every header byte holds its own offset, except
// opcode (0) and cmd_size (1), which vary, and byte 7 (reserved8, or MODIFY_QP's qp_type), left 0.

/** cmdq_base values whose bytes 0-6 and 8-15 read as in `baseRows`. */
export const base = (opcode: number, units: number) => ({
  opcode, cmd_size: units, flags: 0x0302, cookie: 0x0504, resp_size: 0x06, resp_addr: 0x0e_0d0c_0b0a_0908,
});
/** `wire` rows for cmdq_base bytes 0-6 and 8-15. */
export const baseRows = (opcode: number, units: number): number[][] => [
  [0, opcode, units, 0x02, 0x03, 0x04, 0x05, 0x06], [8, ...seq(0x08, 7), 0x00],
];

// The response fixtures share one CREQ header (§2.7): type QP_EVENT 0x38, status 0, cookie 0x0504, v 1.

/** CREQ response values whose bytes 0-3 and 8-9 read as in `respRows`. */
export const resp = (event: number) => ({ type: 0x38, status: 0x00, cookie: 0x0504, v: 1, event });
/** `wire` rows for CREQ response bytes 0-3 and 8-9. */
export const respRows = (event: number): number[][] => [[0, 0x38, 0x00, 0x04, 0x05], [8, 0x01, event]];
