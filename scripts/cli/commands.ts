/**
 * What the rig-bnxt command line asks for, once parsed (options.ts reads it): one command
 * record each for perf, pingpong, probe, help and version, and the defaults and bounds they take
 * from perftest and rdma-core's ibv_rc_pingpong (options.ts cites the sources).
 */
export type PerfTest = 'send_lat' | 'send_bw' | 'read_lat' | 'read_bw';
export const PERF_TESTS: readonly PerfTest[] = ['send_lat', 'send_bw', 'read_lat', 'read_bw'];

/** perftest's DEF_PORT, which ibv_rc_pingpong also uses. */
export const DEFAULT_PORT = 18515;
/** The software NIC is the default device everywhere. */
export const DEFAULT_DEVICE = 'emu';
/** perftest DEF_SIZE_LAT / DEF_SIZE_BW. */
export const DEFAULT_LATENCY_SIZE_BYTES = 2;
export const DEFAULT_BANDWIDTH_SIZE_BYTES = 65536;
/**
 * perftest DEF_ITERS. Its DEF_ITERS_WB (5000) applies to the write bandwidth test only, so
 * send_bw and read_bw default to 1000 as well.
 */
export const DEFAULT_PERF_ITERATIONS = 1000;
/** perftest MIN_ITER / MAX_ITER. */
export const MIN_PERF_ITERATIONS = 5;
export const MAX_PERF_ITERATIONS = 2 ** 32;
/** perftest -a: every power of two from 2^1 to 2^23 (MAX_SIZE = 8388608). */
export const ALL_SIZES: readonly number[] = Array.from({ length: 23 }, (_, i) => 2 ** (i + 1));

/** ibv_rc_pingpong defaults: -s 4096, -n 1000, -m 1024; the path MTU must be one of IB's five. */
export const DEFAULT_PINGPONG_SIZE_BYTES = 4096;
export const DEFAULT_PINGPONG_ITERATIONS = 1000;
export const DEFAULT_PINGPONG_MTU_BYTES = 1024;
export const PINGPONG_MTUS: readonly number[] = [256, 512, 1024, 2048, 4096];

/** Options of the NIC a run opens (software NIC identity; the IPv4 address on hardware too). */
export interface NicSettings {
  /** The NIC's IPv4 address (its RoCEv2 GID is ::ffff:a.b.c.d). */
  readonly ipv4: string | undefined;
  /** Software NIC: its MAC. */
  readonly nicMac: string | undefined;
  /** Software NIC: its Ethernet MTU (1500 gives path MTU 1024). */
  readonly ethMtu: number | undefined;
  /** --trace: the driver's command trace (every command, doorbell and software NIC WQE fetch) to this file. */
  readonly trace?: string;
  /** Software NIC: the chip it is (a profile name: BCM57508, BCM57608, ...); unset, RIG_BNXT_CHIP's or BCM57608. */
  readonly chip?: string;
}

export interface PerfCommand extends NicSettings {
  readonly command: 'perf';
  readonly test: PerfTest;
  readonly verb: 'send' | 'read';
  readonly kind: 'latency' | 'bandwidth';
  readonly device: string;
  /** -d was given: without SERVER this side then serves a client instead of running both sides here. */
  readonly deviceGiven: boolean;
  /** The message sizes to run, in order: one, or ALL_SIZES with -a. */
  readonly sizes: readonly number[];
  readonly all: boolean;
  /** Iterations per size; with -D the run is timed instead and this is the default, unused. */
  readonly iterations: number;
  readonly durationSeconds: number | undefined;
  readonly port: number;
  readonly pcapFile: string | undefined;
  readonly json: boolean;
  /** The server to connect to; undefined means this side is the server. */
  readonly server: string | undefined;
  /** --mac: the peer's MAC (perftest's keys carry only its GID); else it is looked up. */
  readonly peerMac: Uint8Array | undefined;
  /** --report_gbits: bandwidth in Gb/s (perftest's GBS format) instead of MiB/s. */
  readonly reportGbits: boolean;
  /** -t: outstanding sends or reads in bandwidth tests (perftest's tx depth). */
  readonly txDepth: number;
  /** --output: one number per size instead of the tables. */
  readonly output: 'full' | 'bandwidth' | 'message_rate' | 'latency';
  /** -x: the GID index (0: the NIC's one RoCEv2 GID), printed in the test information. */
  readonly gidIndex: number | undefined;
  /** --histogram: latency tests also print the samples in log-scaled buckets with percentiles. */
  readonly histogram: boolean;
  /**
   * -q: queue pairs (perftest's num_of_qps; bandwidth tests only). Each one runs `iterations`
   * messages, so a size's row counts iterations x qps, as print_report_bw counts them.
   */
  readonly qps: number;
}

/** perftest's MIN_QP_NUM / MAX_QP_NUM (the NIC may have fewer: then making them fails, saying so). */
export const MIN_QPS = 1;
export const MAX_QPS = 16384;

/** perftest's default tx depth in bandwidth tests (DEF_TX_BW). */
export const DEFAULT_TX_DEPTH = 128;
export const MAX_TX_DEPTH = 4095;

export interface PingpongCommand extends NicSettings {
  readonly command: 'pingpong';
  readonly device: string;
  readonly sizeBytes: number;
  readonly iterations: number;
  /** undefined when -g was not given (rc_pingpong's -1: the driver's own GID). */
  readonly gidIndex: number | undefined;
  readonly port: number;
  /** The peer's MAC when it cannot be derived from its GID (real rc_pingpong peers send none). */
  readonly peerMac: Uint8Array | undefined;
  readonly mtuBytes: number;
  readonly server: string | undefined;
  /** -c: fill each message with a known pattern and check what arrives (both sides must use it). */
  readonly check: boolean;
  /** --pcap: every frame the NIC sends or receives, to this file. */
  readonly pcapFile: string | undefined;
}

export interface ProbeCommand {
  readonly command: 'probe';
  /** --trace: the bring-up and teardown's commands and doorbells, decoded, to this file. */
  readonly trace?: string;
  /** undefined: list the bnxt functions in sysfs instead of opening one. */
  readonly device: string | undefined;
  /** -v: also the NIC's capabilities (as ibv_devinfo -v). */
  readonly verbose: boolean;
  readonly json: boolean;
  /** --chip: the chip a software NIC is (unset: RIG_BNXT_CHIP's, else BCM57608). */
  readonly chip?: string;
}

export interface HelpCommand {
  readonly command: 'help';
  /** The usage text to print (for the whole tool or for one command). */
  readonly text: string;
}

export interface VersionCommand {
  readonly command: 'version';
}

export type CliCommand = PerfCommand | PingpongCommand | ProbeCommand | HelpCommand | VersionCommand;
