/** Runs small Python 3 scripts for independent checks (zlib, scapy). */
import { spawnSync } from 'node:child_process';

const CANDIDATES = ['python3', '/usr/bin/python3'];

/** The first interpreter that runs `probe` successfully, or undefined. */
export function findPython(probe = 'import zlib'): string | undefined {
  for (const exe of CANDIDATES) {
    const r = spawnSync(exe, ['-c', probe], { encoding: 'utf8', timeout: 30000 });
    if (r.status === 0) return exe;
  }
  return undefined;
}

/** Runs `script` with `input` as JSON on stdin; returns its stdout parsed as JSON, or throws with stderr. */
export function runPython<T>(exe: string, script: string, input: unknown): T {
  const r = spawnSync(exe, ['-c', script], {
    input: JSON.stringify(input), encoding: 'utf8', timeout: 120000, maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`python failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
