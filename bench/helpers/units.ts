/**
 * Units a figure can carry, and conversions between those of one kind, so a reference can be
 * shown in the unit of the figure it stands beside (shm-ping's ns beside HWRM's us).
 */

const SCALE: Readonly<Record<string, { readonly kind: string; readonly factor: number }>> = {
  ns: { kind: 'time', factor: 1 },
  us: { kind: 'time', factor: 1e3 },
  ms: { kind: 'time', factor: 1e6 },
  s: { kind: 'time', factor: 1e9 },
  'B/s': { kind: 'bandwidth', factor: 1 },
  'MB/s': { kind: 'bandwidth', factor: 1e6 },
  'GB/s': { kind: 'bandwidth', factor: 1e9 },
  'Gbit/s': { kind: 'bandwidth', factor: 1e9 / 8 },
  'ops/s': { kind: 'rate', factor: 1 },
  'Kops/s': { kind: 'rate', factor: 1e3 },
  'Mops/s': { kind: 'rate', factor: 1e6 },
};

/** `value` in unit `from`, expressed in unit `to`; equal units pass through whatever they are. */
export function convert(value: number, from: string, to: string): number {
  if (from === to) return value;
  const a = SCALE[from];
  const b = SCALE[to];
  if (!a || !b || a.kind !== b.kind) throw new RangeError(`cannot convert ${from} to ${to}`);
  return (value * a.factor) / b.factor;
}

/** Nanoseconds per operation as operations per second in `unit` (ops/s, Kops/s, Mops/s). */
export function ratePerSecond(nsPerOp: number, unit: 'ops/s' | 'Kops/s' | 'Mops/s' = 'ops/s'): number {
  return convert(1e9 / nsPerOp, 'ops/s', unit);
}

/** A figure for a table: three significant digits, no exponent for everyday sizes. */
export function formatFigure(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  // Number() drops the trailing zeros toPrecision keeps (40.0 -> 40).
  return String(Number(value.toPrecision(3)));
}
