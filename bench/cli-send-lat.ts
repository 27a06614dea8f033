/**
 * `rig-bnxt perf send_lat` at its default iteration count against the same test at -n 100000
 * (issue 13 goal: t_typical within 1.5x): the CLI's short default run must measure the steady
 * state, not the JIT compiling its loop. Both runs are the CLI as a user starts it (a process of
 * its own, the software NIC `emu`), one right after the other; t_typical is perftest's median
 * half round trip, read from --json.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { benchResult, ratioAtMost } from './helpers/result.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'cli-send-lat';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const LONG_ITERATIONS = 100_000;
const TIMEOUT_MS = 300_000;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const long = await tTypical(options.quick ? 20_000 : LONG_ITERATIONS);
  const short = await tTypical(undefined);
  return [benchResult({
    label: '`rig-bnxt perf send_lat` t_typical at the default iterations', figure: short.t, unit: 'us',
    reference: { name: `the same at -n ${long.n}`, figure: long.t, unit: 'us' },
    goal: ratioAtMost(1.5),
    detail: `default run: ${short.n} iterations, t_avg ${short.avg} us, p99 ${short.p99} us; `
      + `long run: t_avg ${long.avg} us, p99 ${long.p99} us`,
  })];
}

interface Row { t: number; n: number; avg: number; p99: number }

/** One row of perf --json's results (perftest's names). */
interface PerfRow { n_iterations: number; t_typical: number; t_avg: number; percentile_99: number }

function tTypical(iterations: number | undefined): Promise<Row> {
  const args = ['--import', './scripts/register-ts.mjs', 'scripts/cli.ts', 'perf', 'send_lat', '--json'];
  if (iterations !== undefined) args.push('-n', String(iterations));
  return new Promise((resolve, reject) => {
    const how = { cwd: ROOT, timeout: TIMEOUT_MS, maxBuffer: 16 << 20 };
    execFile(process.execPath, args, how, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`rig-bnxt perf send_lat: ${error.message}${stderr ? `\n${stderr.trim()}` : ''}`));
        return;
      }
      try {
        const parsed = JSON.parse(stdout) as { results: PerfRow[] };
        const r = parsed.results[0];
        if (!r || !Number.isFinite(r.t_typical)) throw new Error('no result row');
        resolve({ t: r.t_typical, n: r.n_iterations, avg: r.t_avg, p99: r.percentile_99 });
      } catch (e) {
        reject(new Error(`rig-bnxt perf send_lat --json printed no result: ${(e as Error).message}`));
      }
    });
  });
}
