/**
 * The CLI's own copy of the spec's result shape (`{ ok: true, value } | { ok: false, error }`).
 * It is structurally the same type as lib/result.ts, declared here so these modules need nothing
 * from lib/ and can be tested before the driver exists.
 */
export type Result<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: string };

export function ok<A>(value: A): Result<A> {
  return { ok: true, value };
}

export function err<A = never>(error: string): Result<A> {
  return { ok: false, error };
}
