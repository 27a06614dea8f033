/**
 * Builds a BenchResult: converts the reference into the figure's unit, computes the ratio and
 * judges the goal. Goals are data (kind + limit) so the text in the table and the check can
 * never disagree.
 */
import type { ReferenceFigure } from '../references.ts';
import type { BenchResult } from './types.ts';
import { convert, formatFigure } from './units.ts';

export type { ReferenceFigure };

/** A goal from the issues. Limits are in the result's unit; ratio goals compare figure / reference. */
export type Goal =
  | { readonly kind: 'at-most' | 'at-least'; readonly limit: number }
  | { readonly kind: 'ratio-at-most' | 'ratio-at-least'; readonly limit: number };

/** figure <= limit (a latency, a GC count). */
export const atMost = (limit: number): Goal => ({ kind: 'at-most', limit });
/** figure >= limit (a rate, a bandwidth). */
export const atLeast = (limit: number): Goal => ({ kind: 'at-least', limit });
/** figure <= k x reference (e.g. "within 2x of C" for a time). */
export const ratioAtMost = (k: number): Goal => ({ kind: 'ratio-at-most', limit: k });
/** figure >= k x reference (e.g. "at least half of memcpy" for a bandwidth: 0.5). */
export const ratioAtLeast = (k: number): Goal => ({ kind: 'ratio-at-least', limit: k });

export interface ResultSpec {
  readonly label: string;
  readonly figure: number;
  readonly unit: string;
  readonly reference: ReferenceFigure;
  readonly goal?: Goal;
  readonly detail?: string;
}

export function benchResult(spec: ResultSpec): BenchResult {
  if (!Number.isFinite(spec.figure)) throw new RangeError(`${spec.label}: the figure is ${spec.figure}`);
  const reference = convert(spec.reference.figure, spec.reference.unit, spec.unit);
  const ratio = reference === 0 ? Number.NaN : spec.figure / reference;
  return {
    label: spec.label,
    figure: spec.figure,
    unit: spec.unit,
    reference,
    referenceName: spec.reference.name,
    ratio,
    goal: spec.goal ? judge(spec.goal, spec.figure, ratio, spec.unit) : undefined,
    detail: spec.detail,
  };
}

function judge(goal: Goal, figure: number, ratio: number, unit: string): { text: string; met: boolean } {
  const limit = formatFigure(goal.limit);
  switch (goal.kind) {
    case 'at-most': return { text: `<= ${limit} ${unit}`, met: figure <= goal.limit };
    case 'at-least': return { text: `>= ${limit} ${unit}`, met: figure >= goal.limit };
    case 'ratio-at-most': return { text: `<= ${limit}x reference`, met: ratio <= goal.limit };
    case 'ratio-at-least': return { text: `>= ${limit}x reference`, met: ratio >= goal.limit };
  }
}
