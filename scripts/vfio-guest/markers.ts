/**
 * How the guest program reports on the serial console, and how the host reads it back:
 * one line per step, `VFIO-GUEST {"step":"...","ok":true,...}`, then `VFIO-GUEST-END`.
 * The console also carries the kernel's and init's lines, so only marked lines count.
 */
export const MARKER = 'VFIO-GUEST ';
export const END_MARKER = 'VFIO-GUEST-END';

export interface StepReport {
  readonly step: string;
  readonly ok: boolean;
  readonly error?: string;
  readonly [field: string]: unknown;
}

export function formatStep(report: StepReport): string {
  return MARKER + JSON.stringify(report);
}

export interface GuestRun {
  /** Every step reported, by name (a later report of the same step replaces the earlier). */
  readonly steps: Map<string, StepReport>;
  /** The guest program reached its end marker. */
  readonly ended: boolean;
  /** Marked lines that did not parse (a line cut by other console output). */
  readonly garbled: string[];
}

export function parseGuestRun(consoleText: string): GuestRun {
  const steps = new Map<string, StepReport>();
  const garbled: string[] = [];
  let ended = false;
  for (const raw of consoleText.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === END_MARKER) ended = true;
    const at = line.indexOf(MARKER);
    if (at < 0) continue;
    try {
      const report = JSON.parse(line.slice(at + MARKER.length)) as StepReport;
      if (typeof report.step !== 'string' || typeof report.ok !== 'boolean') throw new Error('not a step report');
      steps.set(report.step, report);
    } catch {
      garbled.push(line);
    }
  }
  return { steps, ended, garbled };
}
