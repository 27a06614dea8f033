/**
 * Every benchmark bench/run.ts runs, in this order. To add one: write bench/NAME.ts exporting
 * `name` and `run` (see bench/README.md), import it here and append it to the list.
 */
import type { Benchmark } from './helpers/types.ts';
import * as hwrmRoundtrip from './hwrm-roundtrip.ts';
import * as udpPingNode from './udp-ping-node.ts';
import * as qpPostPoll from './qp-post-poll.ts';
import * as cmdqRoundtrip from './cmdq-roundtrip.ts';
import * as qpCycles from './qp-cycles.ts';

export const BENCHMARKS: readonly Benchmark[] = [
  hwrmRoundtrip,
  udpPingNode,
  cmdqRoundtrip,
  qpCycles,
  qpPostPoll,
];
