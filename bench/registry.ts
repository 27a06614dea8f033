/**
 * Every benchmark bench/run.ts runs, in this order. To add one: write bench/NAME.ts exporting
 * `name` and `run` (see bench/README.md), import it here and append it to the list.
 */
import type { Benchmark } from './helpers/types.ts';
import * as hwrmRoundtrip from './hwrm-roundtrip.ts';
import * as udpPingNode from './udp-ping-node.ts';
import * as qpPostPoll from './qp-post-poll.ts';
import * as qpPingpong from './qp-pingpong.ts';
import * as qpMessageRate from './qp-message-rate.ts';
import * as qpBandwidth from './qp-bandwidth.ts';
import * as qpUdpPingpong from './qp-udp-pingpong.ts';
import * as qpZeroGc from './qp-zero-gc.ts';
import * as cmdqRoundtrip from './cmdq-roundtrip.ts';
import * as qpCycles from './qp-cycles.ts';
import * as qpWaitAsync from './qp-wait-async.ts';
import * as cliSendLat from './cli-send-lat.ts';
import * as traceOff from './trace-off.ts';

export const BENCHMARKS: readonly Benchmark[] = [
  hwrmRoundtrip,
  udpPingNode,
  cmdqRoundtrip,
  qpCycles,
  qpPostPoll,
  qpPingpong,
  qpWaitAsync,
  qpMessageRate,
  qpBandwidth,
  qpUdpPingpong,
  qpZeroGc,
  cliSendLat,
  traceOff,
];
