/** The spec's `('a, string) result`: an expected failure is a value, never an exception. */
export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: string };

export function ok<A>(value: A): Result<A>;
export function ok(): Result<void>;
export function ok<A>(value?: A): Result<A> {
  return { ok: true, value: value as A };
}

export function err<A = never>(error: string): Result<A> {
  return { ok: false, error };
}

/** Re-types a failed result for a caller that returns another kind of value. */
export function fail<A>(r: { readonly ok: false; readonly error: string }, context?: string): Result<A> {
  return { ok: false, error: context ? `${context}: ${r.error}` : r.error };
}
