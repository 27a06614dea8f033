/**
 * Fault hooks of the software NIC's RoCE firmware: a layer consulted once per command taken
 * from the CMDQ, before the firmware runs it, so faults wrap the firmware instead of living
 * inside its handlers (as HwrmFaults does for HWRM).
 */
export interface CommandFate {
  /** Neither run nor answered (a firmware that stopped answering). */
  readonly silent: boolean;
  /** Non-zero: answered with this status, not run. */
  readonly refuse: number;
}

export class RoceFaults {
  /** Commands taken so far; the next one is number `seen + 1`. */
  seen = 0;
  silent = false;
  private readonly refuseAt = new Map<number, number>();
  private readonly refuseOpcodes = new Map<number, number>();
  private fate = { silent: false, refuse: 0 };

  /** Refuse the command `n` commands from now (1 = the next) with CREQ status `status`. */
  refuseNth(n: number, status: number): void {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`roce.refuseNth: ${n} is not a count of commands from now (1 = the next)`);
    checkStatus(status);
    this.refuseAt.set(this.seen + n, status);
  }

  /** Refuse every command with `opcode` with `status` until cleared. */
  refuseOpcode(opcode: number, status: number): void {
    if (!Number.isInteger(opcode) || opcode < 0 || opcode > 0xff) throw new RangeError(`roce.refuseOpcode: ${opcode} is not an opcode`);
    checkStatus(status);
    this.refuseOpcodes.set(opcode, status);
  }

  clear(): void {
    this.refuseAt.clear();
    this.refuseOpcodes.clear();
    this.silent = false;
  }

  /** Called once per command: what the firmware does with it. The result is reused. */
  next(opcode: number): CommandFate {
    this.seen++;
    const refuse = this.refuseAt.get(this.seen) ?? this.refuseOpcodes.get(opcode) ?? 0;
    this.refuseAt.delete(this.seen);
    this.fate.silent = this.silent;
    this.fate.refuse = refuse;
    return this.fate;
  }
}

function checkStatus(status: number): void {
  // A refusal must be a failure status: 0 would read as success.
  if (!Number.isInteger(status) || status < 1 || status > 0xff) throw new RangeError(`roce fault: status ${status} is not a non-zero CREQ status`);
}
