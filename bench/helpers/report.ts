/**
 * The two renderings of a run: the table printed at the end of `npm run bench`, and
 * docs/performance.md.
 */
import type { ReferenceRecord } from '../references.ts';
import { C_FLAGS } from './c-build.ts';
import type { Machine } from './machine.ts';
import type { Durations } from './timing.ts';
import type { BenchResult } from './types.ts';
import { formatFigure } from './units.ts';

export interface BenchmarkOutcome {
  readonly name: string;
  readonly results: readonly BenchResult[];
  /** Why it did not finish, if it did not. */
  readonly error: string | undefined;
  readonly seconds: number;
  /** The host probe's time just before the benchmark ran (helpers/host-probe.ts), in ms. */
  readonly probeMs: number;
}

/** One round: every benchmark once, with the references it used measured in the same round. */
export interface RoundRecord {
  /** The 1-minute load average when the round started. */
  readonly load: number;
  readonly outcomes: readonly BenchmarkOutcome[];
  readonly references: readonly ReferenceRecord[];
}

export interface RunRecord {
  readonly date: Date;
  readonly machine: Machine;
  readonly quick: boolean;
  readonly durations: Durations;
  readonly rounds: readonly RoundRecord[];
  /** Only some benchmarks ran (--only). */
  readonly partial: boolean;
  readonly seconds: number;
}

const HEADINGS = [
  'Benchmark', 'Measure', 'Figure: median (min-max)', 'Reference, same round: median (min-max)',
  'Ratio: median (min-max)', 'Goal',
] as const;

/** One figure across the rounds: a row of the table. */
interface Row {
  readonly benchmark: string;
  readonly label: string;
  readonly unit: string;
  readonly referenceName: string;
  readonly results: BenchResult[];
  readonly errors: string[];
}

function collect(rounds: readonly RoundRecord[]): Row[] {
  const rows: Row[] = [];
  const byKey = new Map<string, Row>();
  for (const round of rounds) {
    for (const o of round.outcomes) {
      if (o.error !== undefined) {
        const key = `${o.name}\0FAILED`;
        let row = byKey.get(key);
        if (!row)
          rows.push((row =
            { benchmark: o.name, label: 'FAILED', unit: '', referenceName: '', results: [], errors: [] })),
            byKey.set(key, row);
        row.errors.push(o.error.split('\n')[0]!);
      }
      for (const r of o.results) {
        const key = `${o.name}\0${r.label}`;
        let row = byKey.get(key);
        if (!row)
          rows.push((row =
            { benchmark: o.name, label: r.label, unit: r.unit, referenceName: r.referenceName, results: [],
            errors: [] })), byKey.set(key, row);
        row.results.push(r);
      }
    }
  }
  return rows;
}

/** Median (middle value; the lower of two), min and max of finite values, formatted. */
function spread(values: readonly number[], unit: string): string {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return 'n/a';
  const med = v[Math.floor((v.length - 1) / 2)]!;
  const u = unit ? ` ${unit}` : '';
  return v.length === 1 ? `${formatFigure(med)}${u}`
    : `${formatFigure(med)}${u} (${formatFigure(v[0]!)}-${formatFigure(v[v.length - 1]!)})`;
}

function rows(rounds: readonly RoundRecord[]): string[][] {
  return collect(rounds).map((row) => {
    if (row.label === 'FAILED')
      return [
        row.benchmark, `FAILED in ${row.errors.length} of ${rounds.length} rounds: ${row.errors[0]!}`, '', '', '', '',
      ];
    const goals = row.results.map((r) => r.goal).filter((g) => g !== undefined);
    const met = goals.filter((g) => g.met).length;
    return [
      row.benchmark,
      row.label,
      spread(row.results.map((r) => r.figure), row.unit),
      `${spread(row.results.map((r) => r.reference), row.unit)} (${row.referenceName})`,
      spread(row.results.map((r) => r.ratio), 'x').replace(/ x/g, 'x'),
      goals.length
        ? `${goals[0]!.text}: ${met === goals.length ? 'met' : 'NOT met'} (met in ${met} of ${goals.length} rounds)`
        : 'none set',
    ];
  });
}

/** A fixed-width table for the terminal. */
export function formatTable(rounds: readonly RoundRecord[]): string {
  const all = [[...HEADINGS], ...rows(rounds)];
  const widths = HEADINGS.map((_, c) => Math.max(...all.map((row) => row[c]!.length)));
  const line = (row: string[]) => row.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd();
  return [line(all[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...all.slice(1).map(line)].join('\n');
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function markdownTable(headings: readonly string[], body: readonly (readonly string[])[]): string {
  return [
    `| ${headings.map(cell).join(' | ')} |`,
    `|${headings.map(() => '---').join('|')}|`,
    ...body.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** Each reference figure across the rounds: median (min-max). */
function referenceRows(rounds: readonly RoundRecord[]): string[][] {
  const byFile = new Map<string,
  { what: string; figures: Map<string, { unit: string; values: number[] }>; errors: string[] }>();
  for (const round of rounds) {
    for (const r of round.references) {
      let entry = byFile.get(r.file);
      if (!entry) byFile.set(r.file, (entry = { what: r.what, figures: new Map(), errors: [] }));
      if (!r.figures) entry.errors.push(r.error ?? '');
      for (const f of r.figures ?? []) {
        let fig = entry.figures.get(f.label);
        if (!fig) entry.figures.set(f.label, (fig = { unit: f.unit, values: [] }));
        fig.values.push(f.figure);
      }
    }
  }
  return [...byFile].map(([file, e]) => [
    `\`${file}\``,
    e.what,
    [...[...e.figures].map(([label, f]) => `${label}: ${spread(f.values, f.unit)}`),
      ...(e.errors.length ? [`FAILED in ${e.errors.length} round(s): ${e.errors[0]!}`] : [])].join('; '),
  ]);
}

/** The host probe's ms before each benchmark: a row per benchmark, a column per round. */
function probeSection(rounds: readonly RoundRecord[]): string {
  const names = [...new Set(rounds.flatMap((r) => r.outcomes.map((o) => o.name)))];
  const body = names.map((name) => [
    name, ...rounds.map((r) => {
      const o = r.outcomes.find((x) => x.name === name);
      return o === undefined ? '' : o.probeMs.toFixed(1);
    }),
  ]);
  return `## The host's speed before each benchmark

${markdownTable(['Benchmark', ...rounds.map((_, i) => `round ${i + 1}`)], body)}

Each cell is the host probe's time in ms just before the benchmark ran (\`bench/helpers/host-probe.ts\`):
a fixed piece of pure JavaScript, the median of three runs. The work never changes, so a larger
number means a slower host in that minute (a busier machine, or a virtual machine's core given less
time), which the load average does not always show. Read a goal missed in a round against it.
`;
}

/** Words that would open a Markdown block if they began a continuation line. */
const BLOCK_START = /^([-*+>#|]|\d+[.)])$/;

/**
 * A Markdown list item wrapped at 120 columns (the tidy check's width), continuation lines
 * indented two spaces so they stay in the item; a line never starts with a word that would
 * open a list, quote, heading or table. It renders as the one line it was.
 */
export function wrapListItem(item: string, width = 120): string {
  const words = item.split(' ');
  const lines: string[] = [];
  let line = words[0]!;
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!;
    if (line.length + 1 + word.length > width && !BLOCK_START.test(word)) {
      lines.push(line);
      line = `  ${word}`;
    } else {
      line += ` ${word}`;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

export function performanceMarkdown(run: RunRecord): string {
  const m = run.machine;
  const d = run.durations;
  const n = run.rounds.length;
  const details = run.rounds.flatMap(
    (round, i) =>
      round.outcomes.flatMap((o) => o.results.filter((r) => r.detail).map(
        (r) => wrapListItem(`- round ${i + 1}, ${o.name}, ${r.label}: ${r.detail!}`),
      )),
  );
  return `# Performance

Generated by \`npm run bench\` (\`bench/run.ts\`) on ${run.date.toISOString().replace(/\.\d+Z$/, 'Z')}` +
  `${run.quick ? ', a **quick** run (\`--quick\`: short runs for a smoke check; the figures are rough)' : ''}` +
  `${run.partial ? ', **part** of the benchmarks (\`--only\`)' : ''}.
Do not edit by hand: rerun the benchmarks (\`npm run bench -- --out docs/performance.md\`). Every
figure stands beside a reference measured in the same round on the same machine, so compare
ratios across runs rather than raw figures.

## Machine

${markdownTable(['', ''], [
  ['CPU', m.cpu],
  ['Cores', String(m.cores)],
  ['Node', m.node],
  ['gcc', m.gcc],
  ['Kernel', m.kernel],
  ['Load average at start (1, 5, 15 min)',
    `${m.loadAverage.join(', ')} (the machine is shared: other work runs beside the benchmarks)`],
  ['Load average (1 min) at the start of each round', run.rounds.map((r) => r.load.toFixed(2)).join(', ')],
])}

## Results (${n} round${n === 1 ? '' : 's'})

${markdownTable(HEADINGS, rows(run.rounds))}

Ratio = figure / reference, per round: for a time, how many times slower than the reference;
for a rate or bandwidth, the fraction of the reference reached. "Goal" is the target the issue
set for that figure, judged in every round; "none set" means the row is there to be read.
${details.length ? `\n${details.join('\n')}\n` : ''}
${probeSection(run.rounds)}
## References measured in the rounds

${markdownTable(['Program', 'What it does', 'Figures: median (min-max) over the rounds'], referenceRows(run.rounds))}

## Method

- The benchmarks run in ${n} round${n === 1 ? '' : 's'}; in each, every benchmark runs once, and the references it
  divides by are measured in the same round just before it (the first benchmark of a round
  that needs a reference measures it), so figure and reference are interleaved, not minutes apart.
- Each benchmark runs its operation for a warm-up of ${d.warmupMs} ms (JIT, caches), then samples
  for ${d.runMs} ms or ${d.maxSamples.toLocaleString('en-US')} samples, whichever comes first. A sample is one operation
  timed with \`performance.now()\` (consecutive intervals, loop included), or one batch divided
  by its size for operations too short to time alone. Rates and bandwidths are total work over
  total time.
- A round's figure is the median (or the 99th percentile where shown) of its samples, by nearest
  rank; the table gives the median, min and max of the rounds' figures.
- The C references are compiled once per source version with the machine's gcc
  (\`gcc ${C_FLAGS.join(' ')}\`, into \`bench/out/\`); each runs its own warm-up, measures for
  ${d.referenceSeconds} s and reports one JSON line.
- The software NIC's model runs where its name puts it (docs/api.md): inline in the driver's
  thread (no crossing between threads), for the loop cable and for the UDP cable (its socket
  read through libc with koffi); rows that measure another mode (a worker thread) say so.
- Benchmarks run one after another, never two at once. The whole run took ${Math.round(run.seconds)} s.
`;
}
