/**
 * The rig-bnxt command line: `perf` (perftest's ib_send_lat, ib_send_bw, ib_read_lat, ib_read_bw),
 * `pingpong` (rdma-core's ibv_rc_pingpong), `probe`, `--help`. Option names and defaults follow
 * those tools (perftest src/perftest_parameters.[ch], rdma-core libibverbs/examples/rc_pingpong.c)
 * so that their users' muscle memory works. Every mistake comes back as an error value whose text
 * the caller prints before exiting non-zero; nothing here throws or prints.
 */
import { type Result, ok, err } from './result.ts';
import { refusal, refusedOptionConfig } from './perftest-options.ts';
import { chipByName, chipNames } from '../../firmware-hwrm/chips.ts';
import {
  parseCInteger, parseIntegerIn, parseMac, parseOptional, parseOptions, parsePort, parseServer,
  parseSize,
  type ParsedValues,
} from './option-values.ts';
import {
  ALL_SIZES, DEFAULT_BANDWIDTH_SIZE_BYTES, DEFAULT_DEVICE, DEFAULT_LATENCY_SIZE_BYTES, DEFAULT_PERF_ITERATIONS,
  DEFAULT_PINGPONG_ITERATIONS, DEFAULT_PINGPONG_MTU_BYTES, DEFAULT_PINGPONG_SIZE_BYTES, DEFAULT_PORT, DEFAULT_TX_DEPTH,
  MAX_PERF_ITERATIONS, MAX_QPS, MAX_TX_DEPTH, MIN_PERF_ITERATIONS, MIN_QPS, PERF_TESTS, PINGPONG_MTUS,
  type CliCommand, type NicSettings, type PerfCommand, type PerfTest,
} from './commands.ts';


export const USAGE = `Usage:
  rig-bnxt perf send_lat|send_bw|read_lat|read_bw [options] [SERVER]
  rig-bnxt pingpong [options] [SERVER]
  rig-bnxt probe [DEV] [-v] [--json] [--trace FILE]
  rig-bnxt --help | --version

perf without SERVER and without -d runs both sides in this process on one software NIC;
with -d and no SERVER it waits for a client; with SERVER it connects to it. pingpong
without SERVER waits for a client (as ibv_rc_pingpong does).
DEV is "emu" (software NIC, the default), "emu:LOCAL:REMOTE" (software NIC cabled over UDP on
127.0.0.1) or a PCI address such as 0000:3b:00.0 (real NIC through VFIO).
Run "rig-bnxt perf --help" or "rig-bnxt pingpong --help" for their options.`;

export const PERF_USAGE = `Usage: rig-bnxt perf send_lat|send_bw|read_lat|read_bw [options] [SERVER]
Options (as perftest's; docs/cli.md lists every perftest option and why some are refused):
  -d, --ib-dev=<dev>     device (default ${DEFAULT_DEVICE})
  -s, --size=<size>      message size, e.g. 4096, 0x1000, 64K, 1M
                         (default ${DEFAULT_LATENCY_SIZE_BYTES} for *_lat, ${DEFAULT_BANDWIDTH_SIZE_BYTES} for *_bw)
  -n, --iters=<iters>    iterations per size (at least ${MIN_PERF_ITERATIONS}, default ${DEFAULT_PERF_ITERATIONS})
  -a, --all              run every size from 2 to 2^23
  -D, --duration=<sec>   run for a time instead of a number of iterations
  -p, --port=<port>      listen on/connect to port <port> (default ${DEFAULT_PORT})
      --pcap=<file>      write every frame to a pcap file
      --json             print the results as JSON
      --report_gbits     bandwidth in Gb/s instead of MiB/s
      --histogram        latency tests: the samples in log-scaled buckets, with percentiles
      --output=<what>    print only bandwidth, message_rate or latency
  -t, --tx-depth=<n>     outstanding messages in bandwidth tests (default ${DEFAULT_TX_DEPTH})
  -q, --qp=<n>           queue pairs in bandwidth tests, each running -n messages (default 1)
  -x, --gid-index=<n>    GID index (the NIC has one: 0)
  -F, --CPU-freq         accepted (nothing to check: rig-bnxt does not count CPU cycles)
  -V, --version          print the version
      --mac=<mac>        the peer's MAC, aa:bb:cc:dd:ee:ff (perftest's keys carry only its GID;
                         without it the MAC is looked up in /proc/net/arp and among rig-bnxt peers)
      --ipv4=<addr>      the NIC's IPv4 address (its GID is ::ffff:<addr>)
      --nic-mac=<mac>    software NIC: its MAC
      --eth-mtu=<bytes>  software NIC: its Ethernet MTU (1500 gives path MTU 1024)
      --trace=<file>     write every command, doorbell and fetched WQE, decoded, one JSON line each
      --chip=<name>      software NIC: the chip it is (${chipNames().join(', ')}; default BCM57608)
  -h, --help             show this text`;

export const PINGPONG_USAGE = `Usage: rig-bnxt pingpong [options] [SERVER]
Options (as ibv_rc_pingpong's):
  -d, --ib-dev=<dev>     device (default ${DEFAULT_DEVICE})
  -s, --size=<size>      size of message to exchange (default ${DEFAULT_PINGPONG_SIZE_BYTES})
  -n, --iters=<iters>    number of exchanges (default ${DEFAULT_PINGPONG_ITERATIONS})
  -g, --gid-idx=<index>  local port GID index
  -p, --port=<port>      listen on/connect to port <port> (default ${DEFAULT_PORT})
  -m, --mtu=<size>       path MTU: ${PINGPONG_MTUS.join(', ')} (default ${DEFAULT_PINGPONG_MTU_BYTES})
      --mac=<mac>        the peer's MAC, aa:bb:cc:dd:ee:ff (when its GID does not carry it)
  -c, --chk              fill messages with a pattern and check them (both sides)
      --pcap=<file>      write every frame to a pcap file
      --ipv4=<addr>      the NIC's IPv4 address (its GID is ::ffff:<addr>)
      --nic-mac=<mac>    software NIC: its MAC
      --eth-mtu=<bytes>  software NIC: its Ethernet MTU (1500 gives path MTU 1024)
      --trace=<file>     write every command, doorbell and fetched WQE, decoded, one JSON line each
      --chip=<name>      software NIC: the chip it is (${chipNames().join(', ')}; default BCM57608)
  -h, --help             show this text`;

export const PROBE_USAGE = `Usage: rig-bnxt probe [DEV] [-v] [--json] [--trace FILE] [--chip NAME]
Without DEV: lists the bnxt functions in sysfs with their driver binding (as ibv_devices lists
devices; a function bound to vfio-pci is one rig-bnxt can open).
With DEV: opens it and prints what the NIC reports (chip, firmware, MAC, link); -v adds its
capabilities (as ibv_devinfo -v); --json prints the same as data; --trace FILE writes every
command of the bring-up and teardown (HWRM, RoCE, doorbells), decoded, one JSON line each; --chip
NAME: the chip a software NIC is (${chipNames().join(', ')}; default BCM57608).`;

/** Parses the arguments after the program name (process.argv.slice(2)). */
export function parseCommandLine(argv: readonly string[]): Result<CliCommand> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
      return err(`missing command: expected perf, pingpong or probe (see rig-bnxt --help)`);
    case '-h':
    case '--help':
    case 'help':
      return ok({ command: 'help', text: USAGE });
    case '-V':
    case '--version':
    case 'version':
      return ok({ command: 'version' });
    case 'perf':
      return parsePerf(rest);
    case 'pingpong':
      return parsePingpong(rest);
    case 'probe':
      return parseProbe(rest);
    default:
      return err(`unknown command '${command}': expected perf, pingpong or probe (see rig-bnxt --help)`);
  }
}

// ---- perf ----------------------------------------------------------------------------------

export const PERF_OPTIONS = {
  'ib-dev': { type: 'string', short: 'd' },
  size: { type: 'string', short: 's' },
  iters: { type: 'string', short: 'n' },
  all: { type: 'boolean', short: 'a' },
  duration: { type: 'string', short: 'D' },
  port: { type: 'string', short: 'p' },
  pcap: { type: 'string' },
  json: { type: 'boolean' },
  mac: { type: 'string' },
  ipv4: { type: 'string' },
  'nic-mac': { type: 'string' },
  'eth-mtu': { type: 'string' },
  trace: { type: 'string' },
  chip: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  // perftest's options that work here (docs/cli.md).
  version: { type: 'boolean', short: 'V' },
  'CPU-freq': { type: 'boolean', short: 'F' },
  report_gbits: { type: 'boolean' },
  'gid-index': { type: 'string', short: 'x' },
  'tx-depth': { type: 'string', short: 't' },
  qp: { type: 'string', short: 'q' },
  connection: { type: 'string', short: 'c' },
  output: { type: 'string' },
  perform_warm_up: { type: 'boolean' },
  histogram: { type: 'boolean' },
} as const;

const OUTPUTS = ['bandwidth', 'message_rate', 'latency'] as const;

function parsePerf(args: readonly string[]): Result<CliCommand> {
  const where = 'rig-bnxt perf';
  const parsed = parseOptions(where, args, { ...PERF_OPTIONS, ...refusedOptionConfig() });
  if (!parsed.ok) return parsed;
  const { values, positionals } =
    parsed.value as { values: ParsedValues<typeof PERF_OPTIONS> & Record<string, unknown>; positionals: string[] };
  if (values.help) return ok({ command: 'help', text: PERF_USAGE });
  if (values.version) return ok({ command: 'version' });
  const refused = refusal(where, values);
  if (refused !== undefined) return err(refused);

  const [testName, ...servers] = positionals;
  if (testName === undefined) return err(`${where}: missing test: expected one of ${PERF_TESTS.join(', ')}`);
  if (!(PERF_TESTS as readonly string[]).includes(testName)) {
    return err(`${where}: unknown test '${testName}': expected one of ${PERF_TESTS.join(', ')}`);
  }
  const test = testName as PerfTest;
  const kind = test.endsWith('_lat') ? 'latency' : 'bandwidth';

  const server = parseServer(where, servers);
  if (!server.ok) return server;
  const device = parseDevice(where, values['ib-dev']);
  if (!device.ok) return device;
  const port = parseOptional(where, '-p/--port', values.port, DEFAULT_PORT, parsePort);
  if (!port.ok) return port;
  const iterations = parseOptional(where, '-n/--iters', values.iters, DEFAULT_PERF_ITERATIONS, (t) =>
    parseIntegerIn(t, MIN_PERF_ITERATIONS, MAX_PERF_ITERATIONS));
  if (!iterations.ok) return iterations;
  const defaultSize = kind === 'latency' ? DEFAULT_LATENCY_SIZE_BYTES : DEFAULT_BANDWIDTH_SIZE_BYTES;
  const size = parseOptional(where, '-s/--size', values.size, defaultSize, parseSize);
  if (!size.ok) return size;
  const duration = parseOptional<number | undefined>(where, '-D/--duration', values.duration, undefined, (t) =>
    parseIntegerIn(t, 1, 0x7fffffff));
  if (!duration.ok) return duration;
  if (values.pcap !== undefined && values.pcap === '') return err(`${where}: --pcap needs a file name`);

  const all = values.all === true;
  if (all && values.size !== undefined) return err(`${where}: -a runs every size; it cannot be combined with -s`);
  // perftest refuses -a with -D ("Duration mode currently doesn't support running on all sizes").
  if (all && duration.value !== undefined) return err(`${where}: -D cannot be combined with -a`);
  // perftest silently ignores -n under -D; saying so is kinder.
  if (duration.value !== undefined && values.iters !== undefined)
    return err(`${where}: -D runs for a time; it cannot be combined with -n`);

  const mac = parseOptional<Uint8Array | undefined>(where, '--mac', values.mac, undefined, parseMac);
  if (!mac.ok) return mac;
  if (values.connection !== undefined && values.connection !== 'RC') {
    return err(
      `${where}: -c/--connection ${values.connection} is not supported: the spec's queue pairs are ` +
        `reliable-connected (RC)`,
    );
  }
  const queues = perfQueueOptions(where, kind, values);
  if (!queues.ok) return queues;
  const output = perfOutput(where, kind, values.output);
  if (!output.ok) return output;
  const nic = parseNicSettings(where, values);
  if (!nic.ok) return nic;
  return ok({
    ...nic.value, peerMac: mac.value, reportGbits: values.report_gbits === true, ...queues.value, output: output.value,
    histogram: values.histogram === true, command: 'perf', deviceGiven: values['ib-dev'] !== undefined, test,
    verb: test.startsWith('send') ? 'send' : 'read', kind, device: device.value, sizes: all ? ALL_SIZES : [size.value],
    all, iterations: iterations.value, durationSeconds: duration.value, port: port.value, pcapFile: values.pcap,
    json: values.json === true, server: server.value,
  });
}

/** -q, -x and -t as perftest's parser takes them for a test of this kind. */
function perfQueueOptions(
  where: string, kind: PerfCommand['kind'], values: ParsedValues<typeof PERF_OPTIONS>,
): Result<{ qps: number; gidIndex: number | undefined; txDepth: number }> {
  const qps = parseOptional(where, '-q/--qp', values.qp, 1, (t) => parseIntegerIn(t, MIN_QPS, MAX_QPS));
  if (!qps.ok) return qps;
  // perftest's parser: "Multiple QPs only available on bw tests" (perftest_parameters.c, case 'q').
  if (qps.value > 1 && kind === 'latency')
    return err(`${where}: -q/--qp ${qps.value}: multiple QPs only available on bw tests (as perftest's)`);
  const gidIndex = parseOptional<number | undefined>(
    where, '-x/--gid-index', values['gid-index'], undefined, (t) => parseIntegerIn(t, 0, 255),
  );
  if (!gidIndex.ok) return gidIndex;
  if (gidIndex.value !== undefined && gidIndex.value !== 0) {
    return err(
      `${where}: -x/--gid-index ${gidIndex.value}: the NIC has one GID, index 0, its RoCEv2 GID ::ffff:<its IPv4>`,
    );
  }
  const txDepth = parseOptional(
    where, '-t/--tx-depth', values['tx-depth'], kind === 'latency' ? 1 : DEFAULT_TX_DEPTH,
    (t) => parseIntegerIn(t, 1, MAX_TX_DEPTH),
  );
  if (!txDepth.ok) return txDepth;
  if (kind === 'latency' && txDepth.value !== 1)
    return err(`${where}: -t/--tx-depth: a latency test keeps one message outstanding (perftest's as well)`);
  return ok({ qps: qps.value, gidIndex: gidIndex.value, txDepth: txDepth.value });
}

/** --output: full unless given; bandwidth or message_rate for a bandwidth test, latency for a latency test. */
function perfOutput(
  where: string, kind: PerfCommand['kind'], given: string | undefined,
): Result<PerfCommand['output']> {
  if (given === undefined) return ok('full');
  if (!(OUTPUTS as readonly string[]).includes(given))
    return err(`${where}: --output '${given}': use bandwidth, latency or message_rate`);
  const output = given as PerfCommand['output'];
  if (kind === 'bandwidth' && output === 'latency')
    return err(`${where}: --output for a bandwidth test can be: bandwidth, message_rate`);
  if (kind === 'latency' && output !== 'latency') return err(`${where}: --output for a latency test can be: latency`);
  return ok(output);
}

// ---- pingpong ------------------------------------------------------------------------------

const PINGPONG_OPTIONS = {
  'ib-dev': { type: 'string', short: 'd' },
  size: { type: 'string', short: 's' },
  iters: { type: 'string', short: 'n' },
  'gid-idx': { type: 'string', short: 'g' },
  port: { type: 'string', short: 'p' },
  mtu: { type: 'string', short: 'm' },
  mac: { type: 'string' },
  chk: { type: 'boolean', short: 'c' },
  pcap: { type: 'string' },
  ipv4: { type: 'string' },
  'nic-mac': { type: 'string' },
  'eth-mtu': { type: 'string' },
  trace: { type: 'string' },
  chip: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parsePingpong(args: readonly string[]): Result<CliCommand> {
  const where = 'rig-bnxt pingpong';
  const parsed = parseOptions(where, args, PINGPONG_OPTIONS);
  if (!parsed.ok) return parsed;
  const { values, positionals } = parsed.value;
  if (values.help) return ok({ command: 'help', text: PINGPONG_USAGE });

  const server = parseServer(where, positionals);
  if (!server.ok) return server;
  const device = parseDevice(where, values['ib-dev']);
  if (!device.ok) return device;
  const size = parseOptional(where, '-s/--size', values.size, DEFAULT_PINGPONG_SIZE_BYTES, parseSize);
  if (!size.ok) return size;
  const iterations = parseOptional(where, '-n/--iters', values.iters, DEFAULT_PINGPONG_ITERATIONS, (t) =>
    parseIntegerIn(t, 1, 0xffffffff));
  if (!iterations.ok) return iterations;
  const gidIndex = parseOptional<number | undefined>(where, '-g/--gid-idx', values['gid-idx'], undefined, (t) =>
    parseIntegerIn(t, 0, 255));
  if (!gidIndex.ok) return gidIndex;
  const port = parseOptional(where, '-p/--port', values.port, DEFAULT_PORT, parsePort);
  if (!port.ok) return port;
  const mtu = parseOptional(where, '-m/--mtu', values.mtu, DEFAULT_PINGPONG_MTU_BYTES, parseMtu);
  if (!mtu.ok) return mtu;
  const mac = parseOptional<Uint8Array | undefined>(where, '--mac', values.mac, undefined, parseMac);
  if (!mac.ok) return mac;
  if (values.pcap !== undefined && values.pcap === '') return err(`${where}: --pcap needs a file name`);

  const nic = parseNicSettings(where, values);
  if (!nic.ok) return nic;
  return ok({
    ...nic.value,
    command: 'pingpong',
    device: device.value,
    sizeBytes: size.value,
    iterations: iterations.value,
    gidIndex: gidIndex.value,
    port: port.value,
    peerMac: mac.value,
    mtuBytes: mtu.value,
    server: server.value,
    check: values.chk === true,
    pcapFile: values.pcap,
  });
}

function parseNicSettings(
  where: string,
  values: { ipv4?: string; 'nic-mac'?: string; 'eth-mtu'?: string; trace?: string; chip?: string },
): Result<NicSettings> {
  if (values.trace === '') return err(`${where}: --trace needs a file name`);
  if (values.ipv4 !== undefined && !/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(values.ipv4)) {
    return err(`${where}: --ipv4 '${values.ipv4}' is not an IPv4 address`);
  }
  if (values.ipv4 !== undefined && values.ipv4.split('.').some((p) => Number(p) > 255))
    return err(`${where}: --ipv4 '${values.ipv4}' is not an IPv4 address`);
  if (values['nic-mac'] !== undefined && !parseMac(values['nic-mac']).ok)
    return err(`${where}: --nic-mac '${values['nic-mac']}' is not a MAC address`);
  const ethMtu = parseOptional<number | undefined>(
    where, '--eth-mtu', values['eth-mtu'], undefined, (t) => parseIntegerIn(t, 576, 9216),
  );
  if (!ethMtu.ok) return ethMtu;
  const chip = parseChip(where, values.chip);
  if (!chip.ok) return chip;
  return ok({
    ipv4: values.ipv4, nicMac: values['nic-mac'], ethMtu: ethMtu.value, trace: values.trace, chip: chip.value,
  });
}

/** --chip NAME: a chip with a profile (firmware-hwrm/chips.ts), else an error naming them. */
function parseChip(where: string, name: string | undefined): Result<string | undefined> {
  if (name === undefined || chipByName(name)) return ok(name);
  return err(`${where}: --chip '${name}' is not a known chip (one of ${chipNames().join(', ')})`);
}

// ---- probe ---------------------------------------------------------------------------------

function parseProbe(args: readonly string[]): Result<CliCommand> {
  const where = 'rig-bnxt probe';
  const parsed = parseOptions(where, args, {
    help: { type: 'boolean', short: 'h' }, verbose: { type: 'boolean', short: 'v' }, json: { type: 'boolean' },
    trace: { type: 'string' },
    chip: { type: 'string' },
  } as const);
  if (!parsed.ok) return parsed;
  const { values, positionals } = parsed.value;
  if (values.help) return ok({ command: 'help', text: PROBE_USAGE });
  if (values.trace === '') return err(`${where}: --trace needs a file name`);
  if (values.trace !== undefined && positionals.length === 0)
    return err(`${where}: --trace traces a NIC's bring-up: name the device (e.g. rig-bnxt probe emu --trace FILE)`);
  const chip = parseChip(where, values.chip);
  if (!chip.ok) return chip;
  const flags = {
    verbose: values.verbose === true, json: values.json === true, trace: values.trace, chip: chip.value,
  };
  if (positionals.length === 0) return ok({ command: 'probe', device: undefined, ...flags });
  if (positionals.length > 1)
    return err(`${where}: expected one device, got ${positionals.length}: ${positionals.join(' ')}`);
  const device = parseDevice(where, positionals[0]);
  if (!device.ok) return device;
  return ok({ command: 'probe', device: device.value, ...flags });
}

// ---- Values of pingpong and every command ---------------------------------------------------

function parseMtu(text: string): Result<number> {
  const n = parseCInteger(text);
  if (n === undefined || !PINGPONG_MTUS.includes(n))
    return err(`'${text}' is not a path MTU: expected one of ${PINGPONG_MTUS.join(', ')}`);
  return ok(n);
}

function parseDevice(where: string, text: string | undefined): Result<string> {
  if (text === undefined) return ok(DEFAULT_DEVICE);
  if (text.trim() === '') return err(`${where}: the device name is empty`);
  return ok(text);
}
