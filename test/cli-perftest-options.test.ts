// Issue 14 item 3: every perftest option of the send and read tests either works with perftest's
// meaning or is refused with a message saying why. The rows of docs/cli.md's table are read here,
// and each option in them is given to the parser: a "works" row parses (and the ones that change
// what is printed are run in this process and their output checked); a "refused" row is refused
// with "is not supported: <why>" (or its own reason). One spawned run proves the refusal is one
// line on stderr, no stack, exit code 2.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, PERF_OPTIONS } from '../scripts/cli/options.ts';
import type { PerfCommand } from '../scripts/cli/commands.ts';
import { REFUSED_OPTIONS } from '../scripts/cli/perftest-options.ts';
import { runPerf } from '../scripts/cli/run-perf.ts';
import { versionLine } from '../scripts/cli/version.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const doc = readFileSync(new URL('../docs/cli.md', import.meta.url), 'utf8');

interface Row { readonly options: string[]; readonly verdict: string }

/** The option table: | `-d, --ib-dev` | meaning | works ... / refused ... | */
function tableRows(): Row[] {
  const start = doc.indexOf('| option | perftest\'s meaning | rig-bnxt |');
  const lines = doc.slice(start).split('\n').slice(2);
  const rows: Row[] = [];
  for (const line of lines) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').map((c) => c.trim());
    const names = [...cells[1]!.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1]!.split(',').map((x) => x.trim()));
    rows.push({ options: names.filter((n) => /^--?[A-Za-z]/.test(n) && !n.includes('*')), verdict: cells[3]! });
  }
  return rows;
}

/** A value for options that take one, such that a "works" option accepts it. */
const SAMPLE: Record<string, string> = {
  'ib-dev': 'emu', size: '64', iters: '10', duration: '1', port: '18515', 'gid-index': '0', 'tx-depth': '16',
  output: 'bandwidth', qp: '1', connection: 'RC',
};

function takesValue(long: string): boolean {
  const known = (PERF_OPTIONS as Record<string, { type: string }>)[long];
  if (known !== undefined) return known.type === 'string';
  return REFUSED_OPTIONS.find((o) => o.name === long)?.value ?? false;
}

function longName(option: string): string {
  if (option.startsWith('--')) return option.slice(2);
  const letter = option.slice(1);
  const known = Object.entries(PERF_OPTIONS as Record<string, { short?: string }>).find(([, c]) => c.short === letter);
  if (known) return known[0];
  return REFUSED_OPTIONS.find((o) => o.short === letter)?.name ?? option;
}

const rows = tableRows();

t.test('the table lists every option the parser knows', async (t) => {
  const listed = new Set(rows.flatMap((r) => r.options.map(longName)));
  for (const name of Object.keys(PERF_OPTIONS)) {
    // rig-bnxt's own, listed below the table
    if (['pcap', 'json', 'mac', 'ipv4', 'nic-mac', 'eth-mtu', 'chip', 'histogram', 'trace'].includes(name)) continue;
    t.ok(listed.has(name), `--${name} has a row`);
  }
  for (const o of REFUSED_OPTIONS) t.ok(listed.has(o.name) || /other/.test(doc), `--${o.name} is covered`);
});

t.test('each row: works, or is refused with its reason', async (t) => {
  for (const row of rows) {
    const works = row.verdict.startsWith('works') || row.verdict.startsWith('`RC` works');
    for (const option of row.options) {
      const long = longName(option);
      const argv = ['perf', long === 'duration' ? 'send_lat' : 'send_bw', option];
      if (takesValue(long)) argv.push(SAMPLE[long] ?? '1');
      const r = parseCommandLine(argv);
      if (works) t.ok(r.ok, `${option}: works (${r.ok ? '' : r.error})`);
      else t.match(r, { ok: false, error: /is not supported: .+|not supported/ }, `${option}: refused with why`);
      const refused = REFUSED_OPTIONS.find((o) => o.name === long);
      if (!works && refused !== undefined && !r.ok)
        t.match(r.error, refused.why, `${option}: the reason given is the table's`);
    }
  }
});

function must(argv: string[]): PerfCommand {
  const r = parseCommandLine(argv);
  if (!r.ok || r.value.command !== 'perf') throw new Error(`${argv.join(' ')}: ${r.ok ? r.value.command : r.error}`);
  return r.value;
}

async function output(argv: string[]): Promise<string[]> {
  const lines: string[] = [];
  const code = await runPerf(must(argv), { log: (l) => lines.push(l) });
  if (code !== 0) throw new Error(`${argv.join(' ')} exited ${code}`);
  return lines;
}

t.test('what the working options print', async (t) => {
  const gbits = await output(['perf', 'send_bw', '-n', '20', '-s', '4096', '--report_gbits']);
  t.ok(gbits.includes(' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'),
    '--report_gbits: RESULT_FMT_G');
  const mib = await output(['perf', 'send_bw', '-n', '20', '-s', '4096']);
  t.ok(mib.includes(' #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]'),
    'default: MiB/sec');

  const depth = await output(['perf', 'send_bw', '-n', '20', '-s', '4096', '-t', '16']);
  t.ok(depth.includes(' TX depth        : 16'), '-t 16: the TX depth printed is the one used');

  const gid = await output(['perf', 'send_lat', '-n', '20', '-x', '0', '-F']);
  t.ok(gid.includes(' GID index       : 0'), '-x 0: printed as perftest prints it');
  t.match(parseCommandLine(['perf', 'send_lat', '-x', '3']), { ok: false, error: /one GID, index 0/ },
    '-x 3: there is no such GID');

  const bw = await output(['perf', 'send_bw', '-n', '20', '-s', '4096', '--output', 'bandwidth']);
  t.equal(bw.length, 1, '--output bandwidth: one line');
  t.match(bw[0], /^\d+\.\d{6}$/, 'one number, %lf');
  const mr = await output(['perf', 'send_bw', '-n', '20', '-s', '4096', '--output', 'message_rate']);
  t.match(mr, [/^\d+\.\d{6}$/]);
  const lat = await output(['perf', 'send_lat', '-n', '20', '--output', 'latency']);
  t.match(lat, [/^\d+\.\d{6}$/]);
  t.match(parseCommandLine(['perf', 'send_lat', '--output', 'bandwidth']), {
    ok: false, error: /latency test can be: latency/,
  });
  t.match(parseCommandLine(['perf', 'send_bw', '--output', 'latency']), {
    ok: false, error: /bandwidth test can be: bandwidth, message_rate/,
  });

  t.same(parseCommandLine(['perf', 'send_lat', '-V']), { ok: true, value: { command: 'version' } }, '-V');
  t.match(versionLine(), /^rig-bnxt \d+\.\d+\.\d+/);
  t.match(parseCommandLine(['perf', 'send_lat', '-c', 'UD']), { ok: false, error: /reliable-connected/ });

  // -q: perftest's num_of_qps. Each QP runs -n iterations, so the row counts n x q messages
  // (print_report_bw); the test information and the addresses list every QP.
  const qps = await output(['perf', 'send_bw', '-n', '30', '-s', '4096', '-q', '3']);
  t.ok(qps.includes(' Number of qps   : 3\t\tTransport type : IB'), '-q 3: printed as perftest prints it');
  t.equal(qps.filter((l) => l.startsWith(' local address: ')).length, 3, 'three local addresses');
  t.equal(qps.filter((l) => l.startsWith(' remote address: ')).length, 3, 'three remote addresses');
  const localQpns = qps.filter((l) => l.startsWith(' local address: ')).map((l) => /QPN (0x[0-9a-f]+)/.exec(l)![1]);
  t.equal(new Set(localQpns).size, 3, 'three distinct queue pairs');
  t.ok(qps.some((l) => /^ 4096\s+90\s+[\d.]+\s+[\d.]+\s+[\d.]+$/.test(l)), 'the row counts 3 x 30 messages');
  const reads = await output(['perf', 'read_bw', '-n', '20', '-s', '8192', '-q', '2', '--json']);
  const readDoc = JSON.parse(reads.join('\n'));
  t.equal(readDoc.results[0].n_iterations, 40, 'read_bw -q 2: 2 x 20 reads');
  t.equal(readDoc.test_info.Number_of_qps, 2, 'and its test information says 2 QPs');
  t.match(parseCommandLine(['perf', 'send_lat', '-q', '2']),
    { ok: false, error: /multiple QPs only available on bw tests/ }, 'perftest refuses several QPs in latency tests');
  t.ok(parseCommandLine(['perf', 'send_lat', '-q', '1']).ok, '-q 1 in a latency test is the default');
  t.match(parseCommandLine(['perf', 'send_bw', '-q', '16385']), { ok: false, error: /-q\/--qp/ },
    'perftest\'s MAX_QP_NUM is 16384');
  t.match(parseCommandLine(['perf', 'send_bw', '-q', '0']), { ok: false, error: /-q\/--qp/ });

  const json = JSON.parse((await output(['perf', 'send_lat', '-n', '50', '--json'])).join('\n'));
  t.match(json.results[0], { percentile_99: Number, 'percentile_99.9': Number }, '--json carries the percentiles');

  const hist = await output(['perf', 'send_lat', '-n', '200', '--histogram']);
  const buckets = hist.filter((l) => /^\s+[\d.]+ - [\d.]+\s+\d+/.test(l));
  t.ok(buckets.length >= 1, '--histogram prints buckets');
  t.equal(buckets.reduce((n, l) => n + Number(/^\s+[\d.]+ - [\d.]+\s+(\d+)/.exec(l)![1]), 0), 200,
    'the counts add up to the samples (one per iteration)');
  t.ok(hist.some((l) => /percentiles \[usec\]: 50% [\d.]+\s+90% [\d.]+\s+99% [\d.]+\s+99\.9% [\d.]+/.test(l)),
    'and percentiles');
  const hjson = JSON.parse((await output(['perf', 'send_lat', '-n', '200', '--histogram', '--json'])).join('\n'));
  t.match(hjson.results[0], { percentiles: { '50': Number, '90': Number, '99': Number, '99.9': Number } },
    '--json --histogram: percentiles');
  t.equal(hjson.results[0].histogram.reduce((n: number, b: { count: number }) => n + b.count, 0), 200,
    'and the buckets');
});

t.test('a refusal is one line on stderr, no stack, exit code 2', async (t) => {
  const r = spawnSync(
    process.execPath,
    ['--import', './scripts/register-ts.mjs', 'scripts/cli.ts', 'perf', 'send_bw', '-F', '-e', '-s', '4096'],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  t.equal(r.status, 2);
  t.equal(r.stderr,
    'rig-bnxt perf: -e/--events is not supported: rig-bnxt polls completions (no completion interrupts through VFIO ' +
    'yet)\n');
  t.equal(r.stdout, '');
});
