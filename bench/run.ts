/**
 * `npm run bench [-- --quick] [-- --only NAME] [-- --no-write]`: runs the benchmarks of
 * bench/registry.ts one after another, prints a table of each figure beside its reference,
 * and rewrites docs/performance.md from the run.
 *
 *   --only NAME   run only this benchmark (repeatable, or NAME,NAME); a partial run leaves
 *                 docs/performance.md alone, which always shows one whole run
 *   --quick       short runs for a smoke check
 *   --no-write    print only; leave docs/performance.md alone
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeMachine } from './helpers/machine.ts';
import { formatTable, performanceMarkdown, type BenchmarkOutcome } from './helpers/report.ts';
import { durations } from './helpers/timing.ts';
import type { BenchOptions } from './helpers/types.ts';
import { References } from './references.ts';
import { BENCHMARKS } from './registry.ts';

const DOC_PATH = fileURLToPath(new URL('../docs/performance.md', import.meta.url));

interface CliOptions {
  readonly only: readonly string[] | undefined;
  readonly quick: boolean;
  readonly write: boolean;
}

const USAGE = `usage: npm run bench -- [--quick] [--only NAME[,NAME]] [--no-write]
benchmarks: ${BENCHMARKS.map((b) => b.name).join(', ')}`;

function parseArgs(argv: readonly string[]): CliOptions {
  const only: string[] = [];
  let quick = false;
  let write = true;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--quick') quick = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--only' || arg.startsWith('--only=')) {
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
  return { only: only.length ? only : undefined, quick, write };
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
  const references = new References(d, log);
  const options: BenchOptions = { quick: cli.quick, durations: d, references, log };
  log(`rig-bnxt benchmarks${cli.quick ? ' (quick)' : ''}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, gcc ${machine.gcc}, load ${machine.loadAverage.join(' ')}`);

  const selected = cli.only ? BENCHMARKS.filter((b) => cli.only!.includes(b.name)) : BENCHMARKS;
  const outcomes: BenchmarkOutcome[] = [];
  for (const benchmark of selected) {
    log(`${benchmark.name} ...`);
    const t0 = performance.now();
    try {
      const results = await benchmark.run(options);
      outcomes.push({ name: benchmark.name, results, error: undefined, seconds: (performance.now() - t0) / 1e3 });
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      log(`${benchmark.name} FAILED: ${error}`);
      outcomes.push({ name: benchmark.name, results: [], error, seconds: (performance.now() - t0) / 1e3 });
    }
  }
  // A whole run lists every reference, also those no benchmark has used yet.
  if (!cli.only) await references.measureAll();

  console.log(`\n${formatTable(outcomes)}\n`);
  const record = { date, machine, quick: cli.quick, durations: d, outcomes, references: references.records(), seconds: (performance.now() - started) / 1e3 };
  if (!cli.write) log('docs/performance.md left alone (--no-write)');
  else if (cli.only) log('docs/performance.md left alone: --only runs part of the suite (the document always shows one whole run)');
  else {
    writeFileSync(DOC_PATH, performanceMarkdown(record));
    log(`wrote ${DOC_PATH}`);
  }
  return outcomes.some((o) => o.error !== undefined) ? 1 : 0;
}

// Exit explicitly: a benchmark that failed half-way may leave a worker or socket behind.
main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error('bench:', e);
    process.exit(1);
  },
);
