/**
 * A command trace written to a file, one JSON record a line (firmware-hwrm/trace.ts: the
 * records and their decoders). Each record is written when it happens, with the nanoseconds
 * since the file was opened, so a trace stops at the last command even if the process dies.
 * A system call per record: a traced run is slower, an untraced one runs no trace code at all.
 * Two writers may share one file: the driver creates it, the software NIC appends its "wqe"
 * records to it (O_APPEND: each record lands whole) with the driver's epoch, so the times of
 * both read on one clock (process.hrtime is the same monotonic clock in every thread).
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import type { TraceEvent, TraceSink } from '../firmware-hwrm/trace.ts';

export class TraceFile implements TraceSink {
  /** Records written so far. */
  lines = 0;
  private fd: number | undefined;
  /** process.hrtime.bigint() when the trace began: its records' `t` counts from here. */
  readonly epochNs: bigint;

  /**
   * Creates (or truncates) `path`, or with `append` adds to it (times from `epochNs`, the first
   * writer's); throws an Error naming the path if it cannot be written.
   */
  constructor(readonly path: string, options: { readonly append?: boolean; readonly epochNs?: bigint } = {}) {
    this.epochNs = options.epochNs ?? process.hrtime.bigint();
    try {
      // Both writers append (O_APPEND), or one's records would overwrite the other's.
      const { O_APPEND, O_CREAT, O_TRUNC, O_WRONLY } = constants;
      this.fd = openSync(path, O_WRONLY | O_CREAT | O_APPEND | (options.append ? 0 : O_TRUNC));
    } catch (e) {
      throw new Error(`cannot write the trace ${path}: ${(e as Error).message}`);
    }
  }

  /** Why the trace stopped short (a write failed: the disk is full...), if it did. */
  error: string | undefined;

  /**
   * Appends one record. A write that fails stops the trace, with a warning naming the file and the
   * records it holds: a trace is never cut short silently, and never fails the driver's call.
   */
  write(event: TraceEvent): void {
    if (this.fd === undefined) return;
    const t = Number(process.hrtime.bigint() - this.epochNs);
    const line = Buffer.from(JSON.stringify({ t, ...event }) + '\n');
    try {
      let done = 0;
      while (done < line.length) done += writeSync(this.fd, line, done, line.length - done);
    } catch (e) {
      this.error = `trace ${this.path}: write: ${(e as Error).message}`;
      this.close();
      process.emitWarning(`${this.error}; the trace stops after ${this.lines} records`, { code: 'RIG_BNXT_TRACE' });
      return;
    }
    this.lines++;
  }

  close(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch (e) {
      this.error ??= `trace ${this.path}: close: ${(e as Error).message}`;
    }
  }
}
