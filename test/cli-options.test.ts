import t from 'tap';
import { parseCommandLine, USAGE, PERF_USAGE, PINGPONG_USAGE, PROBE_USAGE } from '../scripts/cli/options.ts';
import { ALL_SIZES } from '../scripts/cli/commands.ts';
import { parseSize, parseMac } from '../scripts/cli/option-values.ts';
import type { CliCommand } from '../scripts/cli/commands.ts';

const parse = (line: string): CliCommand => {
  const r = parseCommandLine(line === '' ? [] : line.split(' '));
  if (!r.ok) throw new Error(`expected "${line}" to parse, got: ${r.error}`);
  return r.value;
};
const failure = (line: string): string => {
  const r = parseCommandLine(line === '' ? [] : line.split(' '));
  if (r.ok) throw new Error(`expected "${line}" to be refused`);
  return r.error;
};

t.test("perf defaults are perftest's", async (t) => {
  t.same(parse('perf send_lat'), {
    command: 'perf', test: 'send_lat', verb: 'send', kind: 'latency', device: 'emu', deviceGiven: false, sizes: [2],
    all: false, iterations: 1000, durationSeconds: undefined, port: 18515, pcapFile: undefined, json: false,
    server: undefined, ipv4: undefined, nicMac: undefined, ethMtu: undefined, peerMac: undefined, reportGbits: false,
    txDepth: 1, output: 'full', gidIndex: undefined, histogram: false, qps: 1,
  });
  const bw = parse('perf send_bw');
  t.match(bw, { test: 'send_bw', verb: 'send', kind: 'bandwidth', sizes: [65536], iterations: 1000 },
    'DEF_ITERS_WB (5000) is for write_bw only');
  t.match(parse('perf read_lat'), { verb: 'read', kind: 'latency', sizes: [2] });
  t.match(parse('perf read_bw'), { verb: 'read', kind: 'bandwidth', sizes: [65536], iterations: 1000 });
});

t.test('perf options, short and long', async (t) => {
  t.match(parse('perf send_bw -d 0000:3b:00.0 -s 4096 -n 200 -p 9000 --pcap out.pcap --json 10.0.0.2'), {
    device: '0000:3b:00.0', sizes: [4096], iterations: 200, port: 9000, pcapFile: 'out.pcap', json: true,
    server: '10.0.0.2',
  });
  t.match(parse('perf read_lat --ib-dev=emu:5000:5001 --size=64K --iters=5 --port=1 127.0.0.1'), {
    device: 'emu:5000:5001', sizes: [65536], iterations: 5, port: 1, server: '127.0.0.1',
  });
  t.match(parse('perf send_lat -s1M -n0x10'), { sizes: [1048576], iterations: 16 }, 'attached values, hex');
  t.match(parse('perf send_lat -D 3'), { durationSeconds: 3 });
  t.match(parse('perf send_lat --duration=7'), { durationSeconds: 7 });
});

t.test('NIC settings: -d marks the run as one side of a pair; address, MAC and MTU of the NIC', async (t) => {
  t.match(parse('perf send_lat -d emu:5000:5001'), { deviceGiven: true });
  t.match(parse('pingpong --ipv4 10.77.0.2 --nic-mac 02:00:00:00:00:02 --eth-mtu 1500'), {
    ipv4: '10.77.0.2', nicMac: '02:00:00:00:00:02', ethMtu: 1500,
  });
  t.match(failure('perf send_bw --ipv4 300.1.1.1'), /--ipv4 '300.1.1.1' is not an IPv4 address/);
  t.match(failure('perf send_bw --nic-mac zz'), /--nic-mac 'zz' is not a MAC address/);
  t.match(failure('perf send_bw --eth-mtu 100'), /--eth-mtu/);
});

t.test('-a runs every power of two from 2 to 2^23', async (t) => {
  const cmd = parse('perf send_bw -a');
  t.match(cmd, { all: true });
  t.equal(ALL_SIZES.length, 23);
  t.equal(ALL_SIZES[0], 2);
  t.equal(ALL_SIZES[22], 8388608);
  t.ok(ALL_SIZES.every((s, i) => s === 2 ** (i + 1)));
  t.same((cmd as { sizes?: readonly number[] }).sizes, ALL_SIZES);
});

t.test("sizes accept perftest's forms: decimal, 0x hex, leading-0 octal, K and M suffixes", async (t) => {
  t.same(parseSize('4096'), { ok: true, value: 4096 });
  t.same(parseSize('0x1000'), { ok: true, value: 4096 });
  t.same(parseSize('010'), { ok: true, value: 8 });
  t.same(parseSize('64K'), { ok: true, value: 65536 });
  t.same(parseSize('8M'), { ok: true, value: 8388608 });
  t.same(parseSize('2147483647'), { ok: true, value: 2147483647 });
  for (const bad of ['', 'K', '0', '2147483648', '2G', '64k', '1.5', '-2', '12abc', '09']) {
    const r = parseSize(bad);
    t.equal(r.ok, false, `'${bad}' is refused`);
  }
});

t.test('pingpong defaults are ibv_rc_pingpong\'s', async (t) => {
  t.same(parse('pingpong'), {
    command: 'pingpong', device: 'emu', sizeBytes: 4096, iterations: 1000, gidIndex: undefined, port: 18515,
    peerMac: undefined, mtuBytes: 1024, server: undefined, check: false, ipv4: undefined, nicMac: undefined,
    ethMtu: undefined,
  });
  t.match(parse('pingpong -c'), { check: true }, '-c checks a pattern, as rc_pingpong\'s -c validates buffers');
  t.match(parse('pingpong --pcap run/host.pcap'), { pcapFile: 'run/host.pcap' },
    '--pcap: the NIC writes every frame to the file');
  t.match(parse('pingpong'), { pcapFile: undefined });
  t.match(failure('pingpong --pcap='), /--pcap needs a file name/);
});

t.test('pingpong options', async (t) => {
  const cmd = parse('pingpong -d emu:1:2 -s 512 -n 10 -g 3 -p 20000 --mac 02:00:00:aa:bb:0C -m 4096 host.example');
  t.match(cmd, {
    device: 'emu:1:2', sizeBytes: 512, iterations: 10, gidIndex: 3, port: 20000, mtuBytes: 4096, server: 'host.example',
  });
  t.same([...(cmd as { peerMac?: Uint8Array }).peerMac!], [0x02, 0x00, 0x00, 0xaa, 0xbb, 0x0c]);
  t.match(parse('pingpong --gid-idx=0 --mtu=256 --iters=1 --size=1'), {
    gidIndex: 0, mtuBytes: 256, iterations: 1, sizeBytes: 1,
  });
  t.same([...(parseMac('02-11-22-33-44-55') as { value: Uint8Array }).value], [2, 0x11, 0x22, 0x33, 0x44, 0x55]);
});

t.test('probe and help', async (t) => {
  t.same(parse('probe 0000:3b:00.0'), { command: 'probe', device: '0000:3b:00.0', verbose: false, json: false });
  t.same(parse('probe'), { command: 'probe', device: undefined, verbose: false, json: false },
    'no device: list the functions');
  t.same(parse('probe emu -v --json'), { command: 'probe', device: 'emu', verbose: true, json: true });
  t.same(parse('--help'), { command: 'help', text: USAGE });
  t.same(parse('-h'), { command: 'help', text: USAGE });
  t.same(parse('perf --help'), { command: 'help', text: PERF_USAGE });
  t.same(parse('perf send_lat -h'), { command: 'help', text: PERF_USAGE });
  t.same(parse('pingpong --help'), { command: 'help', text: PINGPONG_USAGE });
  t.same(parse('probe --help'), { command: 'help', text: PROBE_USAGE });
});

t.test('mistakes come back as clear error values', async (t) => {
  const cases: [string, RegExp][] = [
    ['', /missing command/],
    ['bogus', /unknown command 'bogus'/],
    ['perf', /missing test: expected one of send_lat, send_bw, read_lat, read_bw/],
    ['perf write_lat', /unknown test 'write_lat'/],
    ['perf send_lat -x', /option '-x, --gid-index' needs a value/],
    ['perf send_lat --bogus', /unknown option '--bogus'/],
    ['perf send_lat -s', /option '-s, --size' needs a value/],
    ['perf send_lat -s -a', /option '-s' needs a value/],
    ['perf send_lat --json=yes', /option '--json' takes no value/],
    ['perf send_lat -s lots', /-s\/--size: 'lots' is not a size/],
    ['perf send_lat -s 0', /-s\/--size: size 0 is out of range/],
    ['perf send_lat -n 4', /-n\/--iters: 4 is out of range: it must be between 5 and/],
    ['perf send_lat -n ten', /-n\/--iters: 'ten' is not a whole number/],
    ['perf send_lat -p 65536', /-p\/--port: 65536 is out of range/],
    ['perf send_lat -p 0', /-p\/--port: 0 is out of range/],
    ['perf send_lat -D 0', /-D\/--duration: 0 is out of range/],
    ['perf send_lat -a -D 2', /-D cannot be combined with -a/],
    ['perf send_lat -a -s 8', /cannot be combined with -s/],
    ['perf send_lat -D 2 -n 100', /cannot be combined with -n/],
    ['perf send_lat --pcap=', /--pcap needs a file name/],
    ['perf send_lat a b', /at most one SERVER, got 2/],
    ['pingpong -m 1500', /-m\/--mtu: '1500' is not a path MTU: expected one of 256, 512, 1024, 2048, 4096/],
    ['pingpong --mac 02:00:00:00:00', /--mac: '02:00:00:00:00' is not a MAC address/],
    ['pingpong -g 256', /-g\/--gid-idx: 256 is out of range/],
    ['pingpong -n 0', /-n\/--iters: 0 is out of range/],
    ['pingpong -a', /unknown option '-a'/],
    ['probe a b', /expected one device, got 2/],
  ];
  for (const [line, want] of cases) {
    const error = failure(line);
    t.match(error, want, `"${line}" -> ${error}`);
    t.notMatch(error, /\n|at .*\.ts:/, 'one line, no stack trace');
  }
});

t.test('options errors name the command and point at its help', async (t) => {
  t.equal(failure('perf send_lat -j'), "rig-bnxt perf: unknown option '-j' (see rig-bnxt perf --help)");
  t.equal(failure('pingpong -s 0x'),
    "rig-bnxt pingpong: -s/--size: '0x' is not a size (examples: 4096, 0x1000, 64K, 1M)");
});
