/**
 * A one-line progress bar on stderr, for runs long enough to leave the user wondering. It draws
 * only on a terminal and only when the run is expected to take more than PROGRESS_MIN_EXPECTED_MS;
 * piped or redirected output stays clean. It redraws only when the whole percentage changes, so
 * update() may be called every iteration: it does no work (and allocates nothing) in between.
 */

export const PROGRESS_MIN_EXPECTED_MS = 2000;
const BAR_MAX_WIDTH = 40;

/** The part of a stream the bar needs (process.stderr has it). */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): boolean;
}

export interface Progress {
  /** How many of the total units are done. */
  update(done: number): void;
  /** Erases the bar so the next output starts on a clean line. */
  finish(): void;
}

const SILENT: Progress = { update() {}, finish() {} };

export function createProgress(
  label: string, total: number, expectedMs: number, stream: ProgressStream = process.stderr,
): Progress {
  if (stream.isTTY !== true || !(expectedMs > PROGRESS_MIN_EXPECTED_MS) || !(total > 0)) return SILENT;
  return new TerminalProgress(label, total, stream);
}

class TerminalProgress implements Progress {
  private lastPercent = -1;
  private drawn = false;
  private readonly barWidth: number;

  constructor(private readonly label: string, private readonly total: number, private readonly stream: ProgressStream) {
    const columns = stream.columns ?? 80;
    // label, " [", bar, "] ", "100%"
    this.barWidth = Math.max(10, Math.min(BAR_MAX_WIDTH, columns - label.length - 9));
  }

  update(done: number): void {
    const percent = Math.min(100, Math.max(0, Math.floor((done * 100) / this.total)));
    if (percent === this.lastPercent) return;
    this.lastPercent = percent;
    const filled = Math.round((percent * this.barWidth) / 100);
    this.stream.write(
      `\r${this.label} [${'#'.repeat(filled)}${' '.repeat(this.barWidth - filled)}] ${String(percent).padStart(3)}%`,
    );
    this.drawn = true;
  }

  finish(): void {
    if (this.drawn) this.stream.write('\r\x1b[K');
    this.drawn = false;
    this.lastPercent = -1;
  }
}
