/**
 * The shapes every benchmark shares. A benchmark is a module in bench/ that exports `name`
 * and `run`; bench/registry.ts lists them. Benchmarks measure, they do not assert: a missed
 * goal is reported, never thrown.
 */
import type { References } from '../references.ts';
import type { Durations } from './timing.ts';

/** What `run` gets from bench/run.ts. */
export interface BenchOptions {
  /** --quick: short runs for a smoke check (figures are rough). */
  readonly quick: boolean;
  /** Warm-up and measuring time of one measure (shorter with --quick). */
  readonly durations: Durations;
  /** The reference programs, each measured at most once per run and shared by every benchmark. */
  readonly references: References;
  /** Progress output (stderr), so stdout keeps only the table. */
  log(message: string): void;
}

/** One measured figure beside its reference, as the table and docs/performance.md show it. */
export interface BenchResult {
  /** What was measured, e.g. "FUNC_QCFG round trip, median". */
  readonly label: string;
  readonly figure: number;
  readonly unit: string;
  /** The reference's figure, converted to `unit`, measured in the same run. */
  readonly reference: number;
  /** E.g. "shm-ping.c round trip, median". */
  readonly referenceName: string;
  /**
   * figure / reference: for a time, how many times slower than the reference; for a rate, the fraction of it reached.
   */
  readonly ratio: number;
  /** The goal the issue set for this figure, and whether this run met it; undefined when the issue set none. */
  readonly goal: GoalOutcome | undefined;
  /** Sample count, spread or anything that helps read the figure. */
  readonly detail: string | undefined;
}

export interface GoalOutcome {
  /** E.g. "<= 50 us" or "<= 2x reference". */
  readonly text: string;
  readonly met: boolean;
}

/** A benchmark module's exports (a module namespace `import * as b from './b.ts'` fits). */
export interface Benchmark {
  /** Short and unique: the --only argument and the first column of the table. */
  readonly name: string;
  run(options: BenchOptions): Promise<BenchResult[]>;
}
