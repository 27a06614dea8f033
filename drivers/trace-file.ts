/**
 * A command trace written to a file, one JSON record a line (firmware-hwrm/trace.ts: the
 * records and their decoders). Each record is written when it happens, with the nanoseconds
 * since the file was opened, so a trace stops at the last command even if the process dies.
 * Used for the control path only (HWRM, CMDQ, CREQ), where a system call per record is cheap.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { TraceEvent, TraceSink } from '../firmware-hwrm/trace.ts';

export class TraceFile implements TraceSink {
  /** Records written so far. */
  lines = 0;
  private fd: number | undefined;
  private readonly start = process.hrtime.bigint();

  /** Creates (or truncates) `path`; throws an Error naming the path if it cannot be written. */
  constructor(readonly path: string) {
    try {
      this.fd = openSync(path, 'w');
    } catch (e) {
      throw new Error(`cannot write the trace ${path}: ${(e as Error).message}`);
    }
  }

  write(event: TraceEvent): void {
    if (this.fd === undefined) return;
    const t = Number(process.hrtime.bigint() - this.start);
    writeSync(this.fd, JSON.stringify({ t, ...event }) + '\n');
    this.lines++;
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
