/**
 * Fault hooks of the software NIC's RoCE firmware: a layer consulted once per command taken
 * from the CMDQ, before the firmware runs it, so faults wrap the firmware instead of living
 * inside its handlers (as HwrmFaults does for HWRM). Faults are set one by one (refuse the
 * nth command, every command of an opcode, malform the nth answer, go silent) or drawn at
 * random per command from the model's seeded PRNG (setRandom), which draws only for a fault
 * whose probability is above 0.
 */
import type { Random } from '../random.ts';

/** How an answer is malformed: another opcode, another cookie, another entry type, a random object id, random bytes. */
export type RoceMalformKind = 'opcode' | 'cookie' | 'type' | 'xid' | 'bytes';
export const ROCE_MALFORM_KINDS: readonly RoceMalformKind[] = ['opcode', 'cookie', 'type', 'xid', 'bytes'];

export interface CommandFate {
  /** Neither run nor answered (a firmware that stopped answering). */
  readonly silent: boolean;
  /** Non-zero: answered with this status, not run. */
  readonly refuse: number;
  /** Run, then answered with a malformed CREQ entry. */
  readonly malform: RoceMalformKind | undefined;
}

/** Per-command probabilities of random faults (each in [0, 1]). */
export interface RoceRandomFaults {
  /** Refused with a failure status drawn from REFUSAL_STATUSES. */
  readonly refuse?: number;
  /** The firmware goes silent from this command on (until clearFaults). */
  readonly silence?: number;
  /** Answered with a malformed entry of a random kind. */
  readonly malform?: number;
}

/**
 * roce_hsi.h CREQ_BASE_STATUS_*: FAIL, RESOURCES, INVALID_CMD, NOT_IMPLEMENTED, INVALID_PARAMETER, HARDWARE_ERROR,
 * INTERNAL_ERROR.
 */
const REFUSAL_STATUSES = [0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7];

export class RoceFaults {
  /** Commands taken so far; the next one is number `seen + 1`. */
  seen = 0;
  silent = false;
  private readonly refuseAt = new Map<number, number>();
  private readonly refuseOpcodes = new Map<number, number>();
  private readonly malformAt = new Map<number, RoceMalformKind>();
  private randomRefuse = 0;
  private randomSilence = 0;
  private randomMalform = 0;
  private fate: { silent: boolean; refuse: number; malform: RoceMalformKind | undefined } = {
    silent: false, refuse: 0, malform: undefined,
  };

  constructor(private readonly random: Random) {}

  /** Answer the command `n` commands from now (1 = the next) with a malformed entry of `kind`. */
  malformNth(n: number, kind: RoceMalformKind): void {
    if (!Number.isInteger(n) || n < 1)
      throw new RangeError(`roce.malformNth: ${n} is not a count of commands from now (1 = the next)`);
    if (!ROCE_MALFORM_KINDS.includes(kind))
      throw new RangeError(`roce.malformNth: kind ${String(kind)} is not one of ${ROCE_MALFORM_KINDS.join(', ')}`);
    this.malformAt.set(this.seen + n, kind);
  }

  /** Random faults per command, drawn from the model's seeded PRNG. */
  setRandom(spec: RoceRandomFaults): void {
    this.randomRefuse = probability(spec.refuse);
    this.randomSilence = probability(spec.silence);
    this.randomMalform = probability(spec.malform);
  }

  /** Draws a value of the PRNG for a malformation (bytes, ids). */
  draw(): number {
    return this.random.u32();
  }

  /** Refuse the command `n` commands from now (1 = the next) with CREQ status `status`. */
  refuseNth(n: number, status: number): void {
    if (!Number.isInteger(n) || n < 1)
      throw new RangeError(`roce.refuseNth: ${n} is not a count of commands from now (1 = the next)`);
    checkStatus(status);
    this.refuseAt.set(this.seen + n, status);
  }

  /** Refuse every command with `opcode` with `status` until cleared. */
  refuseOpcode(opcode: number, status: number): void {
    if (!Number.isInteger(opcode) || opcode < 0 || opcode > 0xff)
      throw new RangeError(`roce.refuseOpcode: ${opcode} is not an opcode`);
    checkStatus(status);
    this.refuseOpcodes.set(opcode, status);
  }

  clear(): void {
    this.refuseAt.clear();
    this.refuseOpcodes.clear();
    this.malformAt.clear();
    this.silent = false;
    this.randomRefuse = this.randomSilence = this.randomMalform = 0;
  }

  /** Called once per command: what the firmware does with it. The result is reused. */
  next(opcode: number): CommandFate {
    this.seen++;
    let refuse = this.refuseAt.get(this.seen) ?? this.refuseOpcodes.get(opcode) ?? 0;
    this.refuseAt.delete(this.seen);
    let malform = this.malformAt.get(this.seen);
    this.malformAt.delete(this.seen);
    const r = this.random;
    if (this.randomSilence > 0 && r.float() < this.randomSilence) this.silent = true;
    if (this.randomRefuse > 0 && r.float() < this.randomRefuse && refuse === 0)
      refuse = REFUSAL_STATUSES[r.below(REFUSAL_STATUSES.length)]!;
    if (this.randomMalform > 0 && r.float() < this.randomMalform && malform === undefined)
      malform = ROCE_MALFORM_KINDS[r.below(ROCE_MALFORM_KINDS.length)]!;
    this.fate.silent = this.silent;
    this.fate.refuse = refuse;
    this.fate.malform = malform;
    return this.fate;
  }
}

function probability(p: number | undefined): number {
  const v = p ?? 0;
  if (!(typeof v === 'number' && v >= 0 && v <= 1))
    throw new RangeError(`roce fault probability ${String(p)} must be in [0, 1]`);
  return v;
}

function checkStatus(status: number): void {
  // A refusal must be a failure status: 0 would read as success.
  if (!Number.isInteger(status) || status < 1 || status > 0xff)
    throw new RangeError(`roce fault: status ${status} is not a non-zero CREQ status`);
}
