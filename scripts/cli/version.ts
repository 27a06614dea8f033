/**
 * The package's version, for `rig-bnxt --version`: read from rig-bnxt's own package.json, the
 * first one above this module (scripts/cli/ in a clone, dist/ in the package), so it cannot
 * drift from what npm installed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function packageVersion(from: string = import.meta.url): string | undefined {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
        if (pkg.name === 'rig-bnxt' && typeof pkg.version === 'string') return pkg.version;
      } catch {
        // Not ours or not readable: keep looking upwards.
      }
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** What --version prints (perftest's -V prints its version the same way, one line). */
export function versionLine(): string {
  return `rig-bnxt ${packageVersion() ?? '(version unknown: package.json not found)'}`;
}
