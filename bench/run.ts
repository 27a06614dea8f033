/**
 * `npm run bench [-- --quick] [-- --only NAME] [-- --rounds N] [-- --out PATH] [-- --no-write]`:
 * runs the benchmarks of bench/registry.ts in rounds, each round every benchmark once with its
 * references measured again just before it (round-robin: a figure and the reference it is
 * divided by are measured minutes apart at most, never once per run), prints a table of each
 * figure (median, min and max over the rounds) beside its reference, and writes the report.
 *
 *   --rounds N    rounds (default 5; 1 with --quick)
 *   --out PATH    where the report goes (default bench/out/performance.md, untracked); the
 *                 tracked docs/performance.md changes only when asked: --out docs/performance.md
 *   --only NAME   run only this benchmark (repeatable, or NAME,NAME)
 *   --quick       short runs for a smoke check
 *   --no-write    print only
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { hostProbeMs } from './helpers/host-probe.ts';
import { describeMachine } from './helpers/machine.ts';
import { formatTable, performanceMarkdown, type BenchmarkOutcome, type RoundRecord } from './helpers/report.ts';
import { durations } from './helpers/timing.ts';
import type { BenchOptions } from './helpers/types.ts';
import { References } from './references.ts';
import { BENCHMARKS } from './registry.ts';

const DEFAULT_OUT = fileURLToPath(new URL('./out/performance.md', import.meta.url));
const DEFAULT_ROUNDS = 5;

interface CliOptions {
  readonly only: readonly string[] | undefined;
  readonly quick: boolean;
  readonly write: boolean;
  readonly rounds: number;
  readonly out: string;
}

const USAGE = `usage: npm run bench -- [--quick] [--rounds N] [--out PATH] [--only NAME[,NAME]] [--no-write]
benchmarks: ${BENCHMARKS.map((b) => b.name).join(', ')}`;

function parseArgs(argv: readonly string[]): CliOptions {
  const only: string[] = [];
  let quick = false;
  let write = true;
  let rounds: number | undefined;
  let out = DEFAULT_OUT;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--rounds' || arg.startsWith('--rounds=')) {
      const value = arg === '--rounds' ? argv[++i] : arg.slice('--rounds='.length);
      rounds = Number(value);
      if (!Number.isInteger(rounds) || rounds < 1)
        usageError(`--rounds needs a positive whole number, not "${value ?? ''}"`);
    } else if (arg === '--out' || arg.startsWith('--out=')) {
      const value = arg === '--out' ? argv[++i] : arg.slice('--out='.length);
      if (!value) usageError('--out needs a path');
      out = resolve(value);
    } else if (arg === '--only' || arg.startsWith('--only=')) {
      const value = arg === '--only' ? argv[++i] : arg.slice('--only='.length);
      if (!value) usageError('--only needs a benchmark name');
      only.push(...value.split(',').filter(Boolean));
    } else if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else {
      usageError(`unknown option "${arg}"`);
    }
  }
  const unknown = only.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length) usageError(`no benchmark named ${unknown.map((n) => `"${n}"`).join(', ')}`);
  return { only: only.length ? only : undefined, quick, write, rounds: rounds ?? (quick ? 1 : DEFAULT_ROUNDS), out };
}

function usageError(message: string): never {
  console.error(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}

async function main(): Promise<number> {
  const cli = parseArgs(process.argv.slice(2));
  const started = performance.now();
  const date = new Date();
  const log = (message: string) => process.stderr.write(`${message}\n`);
  const machine = await describeMachine();
  const d = durations(cli.quick);
  log(
    `rig-bnxt benchmarks${cli.quick ? ' (quick)' : ''}: ${machine.cpu}, ${machine.cores} cores, Node ` +
      `${machine.node}, gcc ${machine.gcc}, load ${machine.loadAverage.join(' ')}, ${cli.rounds} round(s)`,
  );

  const selected = cli.only ? BENCHMARKS.filter((b) => cli.only!.includes(b.name)) : BENCHMARKS;
  const rounds: RoundRecord[] = [];
  for (let r = 0; r < cli.rounds; r++) {
    // Each round measures its references again, just before the first benchmark that needs them.
    const references = new References(d, log);
    const options: BenchOptions = { quick: cli.quick, durations: d, references, log };
    const load = loadavg()[0]!;
    const outcomes: BenchmarkOutcome[] = [];
    for (const benchmark of selected) {
      // The host's speed just before: the same fixed work each time (helpers/host-probe.ts).
      const probeMs = hostProbeMs();
      log(`round ${r + 1}/${cli.rounds}: ${benchmark.name} (load ${loadavg()[0]!.toFixed(2)}, host probe ` +
        `${probeMs.toFixed(1)} ms) ...`);
      const t0 = performance.now();
      try {
        const results = await benchmark.run(options);
        const seconds = (performance.now() - t0) / 1e3;
        outcomes.push({ name: benchmark.name, results, error: undefined, seconds, probeMs });
      } catch (e) {
        const error = e instanceof Error ? e.message : String(e);
        log(`${benchmark.name} FAILED: ${error}`);
        const seconds = (performance.now() - t0) / 1e3;
        outcomes.push({ name: benchmark.name, results: [], error, seconds, probeMs });
      }
    }
    // A whole run lists every reference, also those no benchmark has used.
    if (!cli.only) await references.measureAll();
    rounds.push({ load, outcomes, references: references.records() });
  }

  console.log(`\n${formatTable(rounds)}\n`);
  const record = {
    date, machine, quick: cli.quick, durations: d, rounds, partial: cli.only !== undefined,
    seconds: (performance.now() - started) / 1e3,
  };
  if (!cli.write) log('report not written (--no-write)');
  else {
    mkdirSync(dirname(cli.out), { recursive: true });
    writeFileSync(cli.out, performanceMarkdown(record));
    log(`wrote ${cli.out}`);
  }
  return rounds.some((round) => round.outcomes.some((o) => o.error !== undefined)) ? 1 : 0;
}

// Exit explicitly: a benchmark that failed half-way may leave a worker or socket behind.
main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error('bench:', e);
    process.exit(1);
  },
);
