/**
 * Another CPU-heavy process beside a test, as on a loaded CI machine (issue 15: the guest tests
 * must hold with one running, so they assert what the protocol requires, not that the host was
 * scheduled promptly). A Node process at the test's own priority that spins for at most
 * `limitMs` (bounded, so nothing spins forever) and is killed when the test ends.
 */
import { spawn } from 'node:child_process';
import type { Test } from 'tap';

export function cpuHog(t: Test, limitMs = 15 * 60_000): void {
  const spin = `const end = Date.now() + ${limitMs}; let x = 0; while (Date.now() < end) x++;`;
  const hog = spawn(process.execPath, ['-e', spin], { stdio: 'ignore' });
  t.teardown(() => { if (hog.exitCode === null) hog.kill('SIGKILL'); });
}
