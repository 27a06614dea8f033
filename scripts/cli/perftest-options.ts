/**
 * perftest's options that `rig-bnxt perf` refuses, each with why, so that a perftest command line
 * pasted here fails with a reason instead of "unknown option". Names and value-taking follow
 * perftest's long-option table (src/perftest_parameters.c, parser()). The options that work are
 * in options.ts; docs/cli.md lists both, and test/cli-perftest-options.test.ts exercises each.
 */

export interface RefusedOption {
  /** perftest's long name (without --). */
  readonly name: string;
  /** Its one-letter form, if it has one. */
  readonly short?: string;
  /** Whether it takes a value (so the value is not mistaken for SERVER). */
  readonly value: boolean;
  /** Why rig-bnxt refuses it. */
  readonly why: string;
}

const NO_CYCLES = 'rig-bnxt measures with a monotonic clock, not CPU cycles';
const NOT_YET = 'not implemented';

export const REFUSED_OPTIONS: readonly RefusedOption[] = [
  { name: 'rx-depth', short: 'r', value: true,
    why: 'the server keeps min(iterations, 512) receives posted, perftest\'s default' },
  { name: 'mtu', short: 'm', value: true,
    why: 'the path MTU follows the NIC\'s Ethernet MTU (--eth-mtu) and the peer\'s, as exchanged' },
  { name: 'events', short: 'e', value: false,
    why: 'rig-bnxt polls completions (no completion interrupts through VFIO yet)' },
  { name: 'inline_size', short: 'I', value: true, why: 'sends are not inlined' },
  { name: 'cq-mod', short: 'Q', value: true, why: 'every entry completes (no completion moderation)' },
  { name: 'outs', short: 'o', value: true, why: 'the queue pair\'s read depth (16) is fixed' },
  { name: 'post_list', short: 'l', value: true, why: 'one entry per post' },
  { name: 'qp-timeout', short: 'u', value: true, why: 'the spec fixes the ACK timeout at 67 ms (exponent 14)' },
  { name: 'sl', short: 'S', value: true, why: 'the service level is not configurable' },
  { name: 'tos', short: 'T', value: true, why: 'the traffic class is not configurable' },
  { name: 'hop_limit', short: 'L', value: true, why: 'the hop limit is not configurable' },
  { name: 'flow_label', value: true, why: 'the flow label is not configurable' },
  { name: 'tclass', value: true, why: 'the traffic class is not configurable' },
  { name: 'ib-port', short: 'i', value: true, why: 'a bnxt function has one port' },
  { name: 'bidirectional', short: 'b', value: false, why: NOT_YET },
  { name: 'noPeak', short: 'N', value: false,
    why: 'the peak is dropped above 20,000 iterations by itself, as perftest does' },
  { name: 'report-cycles', short: 'C', value: false, why: NO_CYCLES },
  { name: 'report-histogrm', short: 'H', value: false, why: NO_CYCLES },
  { name: 'report-unsorted', short: 'U', value: false, why: NO_CYCLES },
  { name: 'rdma_cm', short: 'R', value: false, why: 'the exchange is over TCP only (no RDMA-CM)' },
  { name: 'comm_rdma_cm', short: 'z', value: false, why: 'the exchange is over TCP only (no RDMA-CM)' },
  { name: 'mcg', short: 'g', value: false, why: 'multicast needs UD queue pairs; the spec\'s are reliable-connected' },
  { name: 'MGID', short: 'M', value: true, why: 'multicast needs UD queue pairs; the spec\'s are reliable-connected' },
  { name: 'dualport', short: 'O', value: false, why: 'a bnxt function has one port' },
  { name: 'atomic_type', short: 'A', value: true, why: 'there are no atomic tests' },
  { name: 'vector', short: 'X', value: true, why: 'no completion events (rig-bnxt polls)' },
  { name: 'report-counters', short: 'W', value: true, why: NOT_YET },
  { name: 'cpu_util', value: false, why: NOT_YET },
  { name: 'limit_bw', short: 'w', value: true, why: NOT_YET },
  { name: 'limit_msgrate', short: 'y', value: true, why: NOT_YET },
  { name: 'margin', short: 'f', value: true, why: NOT_YET },
  { name: 'rate_limit', value: true, why: NOT_YET },
  { name: 'rate_limit_type', value: true, why: NOT_YET },
  { name: 'rate_units', value: true, why: NOT_YET },
  { name: 'burst_size', value: true, why: NOT_YET },
  { name: 'typical_pkt_size', value: true, why: NOT_YET },
  { name: 'run_infinitely', value: false, why: NOT_YET },
  { name: 'use-srq', value: false, why: 'there is no shared receive queue' },
  { name: 'ipv6', value: false, why: 'the GID is IPv4-mapped (::ffff:a.b.c.d)' },
  { name: 'out_json', value: false, why: 'use --json, which prints perftest\'s JSON keys to stdout' },
  { name: 'out_json_file', value: true, why: 'use --json, which prints perftest\'s JSON keys to stdout' },
  { name: 'dont_xchg_versions', value: false, why: 'the version exchange decides the peer\'s formats' },
  { name: 'use_hugepages', value: false, why: 'regions are the driver\'s own DMA memory' },
  { name: 'mmap', value: true, why: 'regions are the driver\'s own DMA memory' },
  { name: 'odp', value: false, why: 'regions are the driver\'s own DMA memory (no on-demand paging)' },
  { name: 'use_cuda', value: true, why: 'regions are the driver\'s own DMA memory' },
  { name: 'use_rocm', value: true, why: 'regions are the driver\'s own DMA memory' },
  { name: 'use-null-mr', value: false, why: 'regions are the driver\'s own DMA memory' },
  { name: 'latency_gap', value: true, why: NOT_YET },
  { name: 'retry_count', value: true, why: 'the spec fixes 7 retries' },
  { name: 'report-both', value: false, why: NOT_YET },
  { name: 'reversed', value: false, why: NOT_YET },
  { name: 'pkey_index', value: true, why: 'the P_Key is the default one (0xffff)' },
  { name: 'payload_file_path', value: true, why: NOT_YET },
  { name: 'mr_per_qp', value: false, why: NOT_YET },
  { name: 'use_old_post_send', value: false, why: 'there is one way to post' },
  { name: 'report-per-port', value: false, why: 'a bnxt function has one port' },
  { name: 'aes_xts', value: false, why: 'no encryption offload' },
];

/** The parseArgs option table for the refused options (so they parse, then are refused by name). */
export function refusedOptionConfig(): Record<string, { type: 'string' | 'boolean'; short?: string }> {
  const config: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const o of REFUSED_OPTIONS)
    config[o.name] = { type: o.value ? 'string' : 'boolean', ...(o.short !== undefined ? { short: o.short } : {}) };
  return config;
}

/** The first refused option present in parsed values, as the one-line refusal. */
export function refusal(where: string, values: Record<string, unknown>): string | undefined {
  for (const o of REFUSED_OPTIONS) {
    if (values[o.name] === undefined) continue;
    const label = o.short !== undefined ? `-${o.short}/--${o.name}` : `--${o.name}`;
    return `${where}: ${label} is not supported: ${o.why}`;
  }
  return undefined;
}
