/**
 * What went wrong inside the engine: a broken invariant caught in a counting model (a strict one
 * throws through the bus instead), and the test hook that breaks one on purpose. The engine writes
 * it; its controls (engine-controls.ts) read it.
 */
import { internalErrorText } from '../bus.ts';

export class EngineHealth {
  /** Exceptions caught inside the engine in a counting model; the worker lives on. */
  internalErrors = 0;
  lastInternalError: string | undefined;
  /** Test hook (breakInvariant): the next run throws inside, as a bug in the model would. */
  breakNextRun: string | undefined;

  /** Counts a caught exception and keeps its text for lastInternalError. */
  record(e: unknown): void {
    this.internalErrors++;
    this.lastInternalError = internalErrorText(e);
  }
}
