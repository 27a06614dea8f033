/**
 * Fault hooks of the software NIC's HWRM firmware: a layer the firmware consults before it
 * answers, so faults wrap the firmware rather than living inside its handlers. Faults are set
 * one by one or drawn at random per request from the model's seeded PRNG (setRandom), which
 * draws only for a fault whose probability is above 0.
 */
import type { Random } from '../random.ts';

export type MalformedKind = 'seq' | 'resp_len' | 'no_valid' | 'wrong_type';
const MALFORMED_KINDS: readonly MalformedKind[] = ['seq', 'resp_len', 'no_valid', 'wrong_type'];
/** hwrm.h HWRM_ERR_CODE_*: FAIL, INVALID_PARAMS, RESOURCE_ACCESS_DENIED, RESOURCE_ALLOC_ERROR. */
const REFUSAL_CODES = [0x1, 0x2, 0x3, 0x4];

/** Per-request probabilities of random faults (each in [0, 1]). */
export interface HwrmRandomFaults {
  readonly refuse?: number;
  /** The firmware goes silent from this request on (until clearFaults). */
  readonly silence?: number;
  readonly malform?: number;
}

export class HwrmFaults {
  /** Requests seen so far (1-based count of the next one is `seen + 1`). */
  seen = 0;
  private readonly refuseAt = new Map<number, number>();
  private readonly refuseTypes = new Map<number, number>();
  private malformedAt = new Map<number, MalformedKind>();
  silent = false;
  /** Go silent once this many requests were seen (Infinity: never). */
  private silentFrom = Infinity;
  private random: Random | undefined;
  private randomRefuse = 0;
  private randomSilence = 0;
  private randomMalform = 0;

  /** Random faults per request, drawn from `random` (the model's seeded PRNG). */
  setRandom(random: Random, spec: HwrmRandomFaults): void {
    this.random = random;
    this.randomRefuse = probability(spec.refuse);
    this.randomSilence = probability(spec.silence);
    this.randomMalform = probability(spec.malform);
  }

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
    this.randomRefuse = this.randomSilence = this.randomMalform = 0;
  }

  /** Called once per request: what the firmware does with it. */
  next(reqType: number): { silent: boolean; refuse: number; malformed: MalformedKind | undefined } {
    this.seen++;
    let refuse = this.refuseAt.get(this.seen) ?? this.refuseTypes.get(reqType) ?? 0;
    this.refuseAt.delete(this.seen);
    let malformed = this.malformedAt.get(this.seen);
    this.malformedAt.delete(this.seen);
    const r = this.random;
    if (r !== undefined) {
      if (this.randomSilence > 0 && r.float() < this.randomSilence) this.silent = true;
      if (this.randomRefuse > 0 && r.float() < this.randomRefuse && refuse === 0)
        refuse = REFUSAL_CODES[r.below(REFUSAL_CODES.length)]!;
      if (this.randomMalform > 0 && r.float() < this.randomMalform && malformed === undefined)
        malformed = MALFORMED_KINDS[r.below(MALFORMED_KINDS.length)]!;
    }
    return { silent: this.silent || this.seen > this.silentFrom, refuse, malformed };
  }
}

function probability(p: number | undefined): number {
  const v = p ?? 0;
  if (!(typeof v === 'number' && v >= 0 && v <= 1))
    throw new RangeError(`hwrm fault probability ${String(p)} must be in [0, 1]`);
  return v;
}
