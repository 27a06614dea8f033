/**
 * The raw Node dgram ping-pong (the `udp-ping-node` reference, bench/helpers/udp-ping-node.ts,
 * the baseline the issue names for the UDP-cabled software NIC) as a benchmark of its own: it
 * compares Node's round trip with the same ping-pong in C (udp-ping.c), what the runtime adds
 * to the kernel's loopback.
 */
import { benchResult } from './helpers/result.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'udp-ping-node';

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const refs = options.references;
  const nodeMedian = await refs.figure('udp-ping-node', 'us_median');
  const nodeP99 = await refs.figure('udp-ping-node', 'us_p99');
  const trips = `${String((await refs.result('udp-ping-node')).round_trips)} round trips of 64 B`;
  return [
    benchResult({
      label: 'Node dgram ping-pong, median', figure: nodeMedian.figure, unit: nodeMedian.unit,
      reference: await refs.figure('udp-ping', 'us_median'), detail: trips,
    }),
    benchResult({
      label: 'Node dgram ping-pong, p99', figure: nodeP99.figure, unit: nodeP99.unit,
      reference: await refs.figure('udp-ping', 'us_p99'),
    }),
  ];
}
