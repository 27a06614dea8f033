/**
 * The spec's `Invalid_argument`: a misuse of the API. Thrown before any state changes,
 * never returned. Expected failures (firmware refusals, failed completions) are Results.
 */
export class InvalidArgument extends RangeError {
  override readonly name = 'InvalidArgument';
  readonly code = 'ERR_RIG_BNXT_INVALID_ARGUMENT';
}

export function invalid(message: string): never {
  throw new InvalidArgument(message);
}

/** A broken invariant of our own code (never compiled out). Not for bad input. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`rig-bnxt internal assertion failed: ${message}`);
}
