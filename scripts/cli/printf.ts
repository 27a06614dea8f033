/**
 * The few printf conversions perftest and ibv_rc_pingpong use, reproduced exactly so our tables
 * line up with theirs character for character. Not for the hot path: these build strings.
 */

/**
 * C's `%.<digits>f`. JavaScript's toFixed rounds an exact tie (0.125 to 2 places) away from zero;
 * glibc rounds it to even. Both agree everywhere else, so only exact ties are redone here: a tie is
 * a value whose exact decimal expansion is "...5000..." right after the kept digits.
 */
export function cFixed(value: number, digits: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Infinity) return 'inf';
  if (value === -Infinity) return '-inf';
  const rounded = value.toFixed(digits);
  if (Math.abs(value) >= 1e21) return rounded; // toFixed switches to exponent form; never reached by our tables
  const exact = Math.abs(value).toFixed(100); // every double in range has a finite expansion within 100 places
  const dot = exact.indexOf('.');
  const rest = exact.slice(dot + 1 + digits);
  if (!/^50*$/.test(rest)) return rounded;
  // An exact tie: keep the truncated digits when the last kept digit is already even.
  const kept = exact.slice(0, dot + 1 + digits).replace(/\.$/, '');
  const lastDigit = kept.charCodeAt(kept.length - 1) - 48;
  if (lastDigit % 2 === 0) return (value < 0 ? '-' : '') + kept;
  return rounded;
}

/** `%-<width>s`: left-justified, padded with spaces on the right, never truncated. */
export function padRight(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

/** `%<width>s`: right-justified. */
export function padLeft(text: string, width: number): string {
  return text.length >= width ? text : ' '.repeat(width - text.length) + text;
}

/** `%0<width>x`: lowercase hex, zero-padded. */
export function hex(value: number, width: number): string {
  return value.toString(16).padStart(width, '0');
}

/**
 * `%#0<width>x`: the alternate form adds "0x" only when the value is not zero, and the width
 * counts the prefix. So LID 0 prints as "0000" while QPN 0x107 prints as "0x0107".
 */
export function hexAlternate(value: number, width: number): string {
  if (value === 0) return '0'.repeat(Math.max(width, 1));
  return '0x' + value.toString(16).padStart(width - 2, '0');
}
