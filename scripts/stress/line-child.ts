/** A child Node process running a TypeScript script, read line by line (peer processes in tests). */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface LineChild {
  readonly child: ChildProcess;
  /** The next line the child prints, or a rejection naming `what` after 60 s. */
  nextLine(what: string): Promise<string>;
  stderr(): string;
  /** How the child ended: its exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills the child if it still runs (for teardown). */
  kill(): void;
}

export function spawnLineChild(script: string, args: readonly string[]): LineChild {
  const child = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', script, ...args], {
    cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const queued: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout! })
    .on('line', (line) => { const w = waiting.shift(); if (w) w(line); else queued.push(line); });
  return {
    child,
    exited,
    stderr: () => stderr,
    kill: () => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
    nextLine: (what) => new Promise<string>((resolve, reject) => {
      const q = queued.shift();
      if (q !== undefined) return resolve(q);
      const timer = setTimeout(() => reject(new Error(`no ${what} from the child within 60 s: ${stderr}`)), 60_000);
      waiting.push((line) => { clearTimeout(timer); resolve(line); });
    }),
  };
}
