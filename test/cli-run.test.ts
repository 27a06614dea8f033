// Issue 6: the rig-bnxt command as a user runs it: each subcommand briefly, a server and a
// client pairing over TCP in two processes, rc_pingpong's exchange between two processes,
// and clear one-line errors with a non-zero exit for bad options and unreachable servers.
// What needs no second process runs in this one, through the same parser and runners
// scripts/cli.ts calls (issue 10 item 11: each spawn costs a Node start and a loader); one
// bad option still goes through the real command, for the exit code and stderr a user sees.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freeTcpPort, freeUdpPortPair } from '../scripts/interop/free-ports.ts';
import { parseCommandLine } from '../scripts/cli/options.ts';
import type { PerfCommand, ProbeCommand } from '../scripts/cli/commands.ts';
import { runPerf } from '../scripts/cli/run-perf.ts';
import { runProbe } from '../scripts/cli/run-probe.ts';
import { emuChip } from '../drivers/emu/model/config.ts';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPingpongCapture, readPcap } from '../scripts/interop/capture-check.ts';
import { parsePingpongOutput } from '../scripts/interop/serial-transcript.ts';

/** The chip software NICs opened without one are (RIG_BNXT_CHIP's, else the default). */
const CHIP = emuChip(undefined);

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = ['--import', './scripts/register-ts.mjs', 'scripts/cli.ts'];

function run(args: string[], timeout = 120_000) {
  const r = spawnSync(process.execPath, [...cli, ...args], { cwd: root, encoding: 'utf8', timeout });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function runAsync(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [...cli, ...args], { cwd: root });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

/**
 * A probe or perf command line run here as scripts/cli.ts runs it: parsed, then its runner;
 * what it prints is collected (stdout through the runner's log, stderr from console.error).
 */
async function runHere(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const parsed = parseCommandLine(args);
  if (!parsed.ok) return { code: 2, out: '', err: parsed.error };
  const out: string[] = [];
  const err: string[] = [];
  const consoleError = console.error;
  console.error = (...parts: unknown[]) => { err.push(parts.map(String).join(' ')); };
  try {
    const cmd = parsed.value;
    const log = (line: string) => { out.push(line); };
    const code = cmd.command === 'probe' ? runProbe(cmd as ProbeCommand, log)
      : cmd.command === 'perf' ? await runPerf(cmd as PerfCommand, { log })
      : -1;
    return { code, out: out.map((l) => `${l}\n`).join(''), err: err.join('\n') };
  } finally {
    console.error = consoleError;
  }
}

const freeUdpPorts = freeUdpPortPair;

const LATENCY_HEADER = new RegExp([
  '#bytes', '#iterations', 't_min\\[usec\\]', 't_max\\[usec\\]', 't_typical\\[usec\\]', 't_avg\\[usec\\]',
  't_stdev\\[usec\\]', '99% percentile\\[usec\\]', '99\\.9% percentile\\[usec\\]',
].join('\\s+'));
const BANDWIDTH_HEADER = /#bytes\s+#iterations\s+BW peak\[MiB\/sec\]\s+BW average\[MiB\/sec\]\s+MsgRate\[Mpps\]/;

t.test('probe prints the NIC\'s identity', async (t) => {
  const r = await runHere(['probe', 'emu']);
  t.equal(r.code, 0, r.err);
  t.match(r.out, new RegExp(`chip:\\s+${CHIP.name} \\(0x${CHIP.chipNum.toString(16)}, ${CHIP.family}\\)`));
  t.match(r.out, /HWRM:\s+1\.10\.3\.\d+/);
  t.match(r.out, /MAC:\s+([0-9a-f]{2}:){5}[0-9a-f]{2}/);
  t.match(r.out, /GID:\s+0000:0000:0000:0000:0000:ffff:/);
  t.match(r.out, /link:\s+up/);
});

t.test('each perf test runs briefly on one software NIC and prints perftest\'s table', async (t) => {
  for (const test of ['send_lat', 'read_lat']) {
    const r = await runHere(['perf', test, '-n', '50']);
    t.equal(r.code, 0, `${test}: ${r.err}`);
    t.match(r.out, LATENCY_HEADER, `${test} latency header`);
    t.match(r.out, /^ 2\s+50\s+[\d.]+\s+[\d.]+/m, `${test}: a row for 2 bytes x 50 iterations`);
  }
  for (const test of ['send_bw', 'read_bw']) {
    const r = await runHere(['perf', test, '-n', '50', '-s', '4096']);
    t.equal(r.code, 0, `${test}: ${r.err}`);
    t.match(r.out, BANDWIDTH_HEADER, `${test} bandwidth header`);
    t.match(r.out, /^ 4096\s+50\s+[\d.]+\s+[\d.]+\s+[\d.]+/m, `${test}: a row for 4096 bytes`);
  }
  // A read test has no server side: with -d and no SERVER both sides run on the NIC it names.
  const named = await runHere(['perf', 'read_lat', '-n', '20', '-d', 'emu']);
  t.equal(named.code, 0, `read_lat -d emu: ${named.err}`);
  t.match(named.out, /^ 2\s+20\s+[\d.]+\s+[\d.]+/m, 'read_lat -d emu: both sides on that NIC');
  const paired = await runHere(['perf', 'read_lat', '-n', '20', '-d', 'emu', '127.0.0.1']);
  t.equal(paired.code, 1, 'read_lat with a SERVER is refused');
  t.match(paired.err, /reads are served only to queue pairs of the same NIC; run it without SERVER/);
  const json = await runHere(['perf', 'send_lat', '-n', '20', '--json']);
  t.equal(json.code, 0, json.err);
  const doc = JSON.parse(json.out);
  t.ok(Array.isArray(doc.results) && doc.results.length === 1, 'JSON document with one result');
  // docs/cli.md: a run on one NIC warms up unmeasured first, one ms per iteration asked (at most 1 s), and says so.
  t.equal(doc.test_info.Warm_up, 'ON, unmeasured: 20 ms before the first size, 20 iterations before each');
});

t.test('perf pairs a server and a client over TCP in two processes, cabled over UDP', async (t) => {
  const port = await freeTcpPort();
  const [a, b] = await freeUdpPorts();
  const server = runAsync(['perf', 'send_lat', '-n', '100', '-p', String(port), '-d', `emu:${a}:${b}`]);
  const client = runAsync(['perf', 'send_lat', '-n', '100', '-p', String(port), '-d', `emu:${b}:${a}`, '127.0.0.1']);
  const [s, c] = await Promise.all([server, client]);
  t.equal(c.code, 0, `client: ${c.err}`);
  t.equal(s.code, 0, `server: ${s.err}`);
  t.match(c.out, LATENCY_HEADER);
  t.match(c.out, /^ 2\s+100\s+/m, 'the client reports 100 iterations of 2 bytes');
  t.match(c.out, /remote address: LID 0000 QPN 0x[0-9a-f]+/);
});

t.test('perf send_bw -q 3 pairs three queue pairs each way; every one runs -n messages', async (t) => {
  const port = await freeTcpPort();
  const [a, b] = await freeUdpPorts();
  const common = ['perf', 'send_bw', '-q', '3', '-n', '40', '-s', '4096', '-p', String(port)];
  const server = runAsync([...common, '-d', `emu:${a}:${b}`]);
  const client = runAsync([...common, '-d', `emu:${b}:${a}`, '127.0.0.1']);
  const [s, c] = await Promise.all([server, client]);
  t.equal(c.code, 0, `client: ${c.err}`);
  t.equal(s.code, 0, `server: ${s.err}`);
  const qpns = (out: string, side: string) =>
    [...out.matchAll(new RegExp(` ${side} address: LID 0000 QPN (0x[0-9a-f]+)`, 'g'))].map((m) => m[1]);
  t.equal(qpns(s.out, 'local').length, 3, 'the server has three QPs');
  t.same(qpns(c.out, 'remote'), qpns(s.out, 'local'), "the client's remote addresses are the server's QPs, in order");
  t.same(qpns(s.out, 'remote'), qpns(c.out, 'local'), "and the other way round");
  for (const out of [s.out, c.out]) {
    t.match(out, / Number of qps   : 3\t/);
    t.match(out, /^ 4096\s+120\s+[\d.]+\s+[\d.]+\s+[\d.]+$/m, 'both rows count 3 x 40 messages');
  }
});

t.test('pingpong: two processes pair with ibv_rc_pingpong\'s exchange and check every message', async (t) => {
  const port = await freeTcpPort();
  const [a, b] = await freeUdpPorts();
  const serverMac = '02:00:00:00:00:0a';
  const clientMac = '02:00:00:00:00:0b';
  const common = ['-s', '4096', '-n', '200', '-p', String(port), '-c', '--eth-mtu', '1500', '-m', '1024'];
  const server = runAsync([
    'pingpong', ...common, '-d', `emu:${a}:${b}`, '--ipv4', '10.77.0.10', '--nic-mac', serverMac, '--mac', clientMac,
  ]);
  const client = runAsync([
    'pingpong', ...common, '-d', `emu:${b}:${a}`, '--ipv4', '10.77.0.11', '--nic-mac', clientMac, '--mac', serverMac,
    '127.0.0.1',
  ]);
  const [s, c] = await Promise.all([server, client]);
  t.equal(s.code, 0, `server: ${s.err}`);
  t.equal(c.code, 0, `client: ${c.err}`);
  for (const out of [s.out, c.out]) {
    t.match(out, /local address:\s+LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:10\.77\.0\.1[01]/);
    t.match(out, /1638400 bytes in [\d.]+ seconds = [\d.]+ Mbit\/sec/, 'rc_pingpong\'s summary: 2 x 200 x 4096 bytes');
    t.match(out, /200 iters in [\d.]+ seconds = [\d.]+ usec\/iter/);
  }
});

t.test('pingpong without -c echoes as ibv_rc_pingpong does: the server sends back each message it received, ' +
  'as the cable shows', async (t) => {
  const port = await freeTcpPort();
  const [a, b] = await freeUdpPorts();
  const serverMac = '02:00:00:00:00:1a';
  const clientMac = '02:00:00:00:00:1b';
  const pcap = join(mkdtempSync(join(tmpdir(), 'pingpong-echo-')), 'server.pcap');
  const iters = 6;
  const common = ['-s', '3000', '-n', String(iters), '-p', String(port), '--eth-mtu', '1500', '-m', '1024'];
  const server = runAsync([
    'pingpong', ...common, '-d', `emu:${a}:${b}`, '--ipv4', '10.77.0.12', '--nic-mac', serverMac, '--mac', clientMac,
    '--pcap', pcap,
  ]);
  // The client sends a fresh pattern each time and checks what comes back (-c): only an echo matches.
  const client = runAsync([
    'pingpong', ...common, '-c', '-d', `emu:${b}:${a}`, '--ipv4', '10.77.0.13', '--nic-mac', clientMac,
    '--mac', serverMac, '127.0.0.1',
  ]);
  const [s, c] = await Promise.all([server, client]);
  t.equal(s.code, 0, `server: ${s.err}`);
  t.equal(c.code, 0, `the client found every message it got back to be the one it sent: ${c.err}`);
  const pp = parsePingpongOutput(s.out.split('\n'));
  if (pp === null) return void t.fail('no pingpong report from the server');
  const check = checkPingpongCapture(readPcap(readFileSync(pcap)), {
    guestQpn: pp.localQpn, guestPsn: pp.localPsn, hostQpn: pp.remoteQpn, hostPsn: pp.remotePsn, sizeBytes: 3000,
    iters, role: 'server',
  }, serverMac);
  t.equal(check.echoesCompared, iters, 'every echo compared in the capture');
  t.same(check.echoMismatches, [], 'the server sends back the message it received, byte for byte');
});

t.test('bad options and unreachable servers: one clear line on stderr, non-zero exit, no stack', async (t) => {
  const spawned = run(['perf', 'send_lat', '--bogus']);
  t.equal(spawned.code, 2, 'the command exits 2 for a usage mistake');
  t.match(spawned.err, /unknown option/, 'clear message');
  t.equal(spawned.err.trimEnd().split('\n').length, 1, 'one line on stderr');
  t.equal(spawned.out, '', 'nothing on stdout');
  const cases: [string[], RegExp][] = [
    [['perf', 'send_lat', '--bogus'], /unknown option/],
    [['perf', 'nonsense'], /unknown test 'nonsense'/],
    [['perf', 'send_lat', '-s', 'huge'], /size/],
    [['pingpong', '-m', '1000'], /mtu|MTU/],
    [['probe', 'eth0'], /neither a PCI address|not a PCI address|emu/],
    [['frobnicate'], /unknown command/],
  ];
  for (const [args, want] of cases) {
    const r = await runHere(args);
    t.not(r.code, 0, `${args.join(' ')} exits non-zero`);
    t.match(r.err, want, `${args.join(' ')}: clear message`);
    t.notMatch(r.err, /\n\s+at /, 'no stack trace');
  }
  const port = await freeTcpPort();
  const [a, b] = await freeUdpPorts();
  const r = await runHere(['perf', 'send_lat', '-n', '10', '-p', String(port), '-d', `emu:${a}:${b}`, '127.0.0.1']);
  t.not(r.code, 0, 'unreachable server exits non-zero');
  t.match(r.err, /cannot reach 127\.0\.0\.1:\d+/);
  t.notMatch(r.err, /\n\s+at /, 'no stack trace');
  const absent = await runHere(['probe', '0000:99:00.0']);
  t.not(absent.code, 0);
  t.match(absent.err, /0000:99:00\.0 .*not found/);
});
