/**
 * 24-bit packet sequence numbers (IBA 9.7, reliable service). PSNs wrap at 2^24; comparisons are made in a
 * window of 2^23 on either side, so "a is behind b" means psnDiff(a, b) < 0. The responder
 * uses the sign to tell a duplicate (behind the expected PSN) from a sequence error (ahead).
 */
export const PSN_MASK = 0xffffff;

/** Signed distance a - b in PSN space, in [-2^23, 2^23). */
export function psnDiff(a: number, b: number): number {
  return ((a - b) << 8) >> 8;
}

/** (psn + n) mod 2^24. */
export function psnAdd(psn: number, n: number): number {
  return (psn + n) & PSN_MASK;
}
