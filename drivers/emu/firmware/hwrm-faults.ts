/**
 * Fault hooks of the software NIC's HWRM firmware: a layer the firmware consults before it
 * answers, so faults wrap the firmware rather than living inside its handlers.
 */
export type MalformedKind = 'seq' | 'resp_len' | 'no_valid' | 'wrong_type';

export class HwrmFaults {
  /** Requests seen so far (1-based count of the next one is `seen + 1`). */
  seen = 0;
  private readonly refuseAt = new Map<number, number>();
  private readonly refuseTypes = new Map<number, number>();
  private malformedAt = new Map<number, MalformedKind>();
  silent = false;
  /** Go silent once this many requests were seen (Infinity: never). */
  private silentFrom = Infinity;

  silenceAfter(n: number): void {
    this.silentFrom = this.seen + n;
  }

  /** Refuse the request `n` requests from now (1 = the next) with HWRM error `code`. */
  refuseNth(n: number, code: number): void {
    this.refuseAt.set(this.seen + n, code);
  }

  /** Refuse every request of `reqType` with `code` until cleared. */
  refuseType(reqType: number, code: number): void {
    this.refuseTypes.set(reqType, code);
  }

  malformNth(n: number, kind: MalformedKind): void {
    this.malformedAt.set(this.seen + n, kind);
  }

  clear(): void {
    this.refuseAt.clear();
    this.refuseTypes.clear();
    this.malformedAt.clear();
    this.silent = false;
    this.silentFrom = Infinity;
  }

  /** Called once per request: what the firmware does with it. */
  next(reqType: number): { silent: boolean; refuse: number; malformed: MalformedKind | undefined } {
    this.seen++;
    const refuse = this.refuseAt.get(this.seen) ?? this.refuseTypes.get(reqType) ?? 0;
    this.refuseAt.delete(this.seen);
    const malformed = this.malformedAt.get(this.seen);
    this.malformedAt.delete(this.seen);
    return { silent: this.silent || this.seen > this.silentFrom, refuse, malformed };
  }
}
