// The benchmark report (bench/helpers/report.ts) says what each round ran on: the host probe's time
// before every benchmark is in the document, one row per benchmark and one column per round, and a
// benchmark missing from a round leaves its cell empty rather than shifting the others.
import t from 'tap';
import { performanceMarkdown, type RunRecord } from '../bench/helpers/report.ts';
import type { BenchResult } from '../bench/helpers/types.ts';

const result = (figure: number): BenchResult => ({
  label: 'op', figure, unit: 'us', reference: 1, referenceName: 'ref', ratio: figure, goal: undefined,
  detail: undefined,
});

function run(): RunRecord {
  return {
    date: new Date('2026-12-02T08:00:00Z'),
    machine: { cpu: 'test cpu', cores: 2, node: 'v20', gcc: '12', kernel: 'Linux', loadAverage: [0.5, 0.5, 0.5] },
    quick: false,
    durations: { warmupMs: 1, runMs: 1, maxSamples: 1, referenceSeconds: 1 },
    partial: false,
    seconds: 3,
    rounds: [
      { load: 0.5, references: [], outcomes: [
        { name: 'alpha', results: [result(2)], error: undefined, seconds: 1, probeMs: 14.25 },
        { name: 'beta', results: [result(3)], error: undefined, seconds: 1, probeMs: 140.5 },
      ] },
      { load: 0.7, references: [], outcomes: [
        { name: 'beta', results: [result(4)], error: undefined, seconds: 1, probeMs: 15 },
      ] },
    ],
  };
}

t.test('the host probe before each benchmark is in the report, by benchmark and round', async (t) => {
  const md = performanceMarkdown(run());
  const section = md.split('## The host\'s speed before each benchmark')[1]?.split('\n## ')[0];
  t.ok(section, 'the section is there');
  const lines = section!.split('\n').filter((l) => l.startsWith('|'));
  t.same(lines, [
    '| Benchmark | round 1 | round 2 |',
    '|---|---|---|',
    '| alpha | 14.3 |  |',
    '| beta | 140.5 | 15.0 |',
  ]);
});
