/**
 * Everything acquired while opening a device, in order, with how to give it back. A failed
 * open and a later close() both unwind it from the top, so release is always the exact
 * reverse of acquisition.
 */
export type Release = () => string | undefined;

export class ReleaseStack {
  private readonly steps: { what: string; release: Release }[] = [];

  /** `release` returns a message when it failed (it must not throw). */
  push(what: string, release: Release): void {
    this.steps.push({ what, release });
  }

  get size(): number {
    return this.steps.length;
  }

  /** Runs every release, newest first, even after a failure; returns what failed. */
  releaseAll(): string[] {
    const failures: string[] = [];
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      let failure: string | undefined;
      try {
        failure = step.release();
      } catch (e) {
        failure = e instanceof Error ? e.message : String(e);
      }
      if (failure !== undefined) failures.push(`${step.what}: ${failure}`);
    }
    return failures;
  }
}
