/**
 * The RoCE command channel's round trip on the software NIC (issue 13 goal: median <= 10 us). The
 * driver's own RcfwChannel sends QUERY_VERSION, the cheapest RoCE command (no side buffer, no
 * table touched), over and over: the command into the CMDQ ring, the producer and trigger
 * writes in BAR0, the model's worker thread answers with a CREQ entry by DMA, the driver polls
 * the entry's valid bit and rings the CREQ doorbell. The reference, as for HWRM: the least any
 * request/answer between two threads costs here, shm-ping.c's shared-memory ping-pong.
 */
import { Nic, nicInternals } from '../lib/nic.ts';
import { CmdqQueryVersion, RoceOpcode } from '../firmware-hwrm/roce/index.ts';
import { atMost, benchResult } from './helpers/result.ts';
import { sampleEach, summarize, type Durations, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'cmdq-roundtrip';

/** Issue 13 goal: the median RoCE command round trip on the software NIC, in us. */
const GOAL_MEDIAN_US = 10;

/** roce_hsi.h: struct cmdq_query_version (the header alone). */
const QUERY_VERSION = { opcode: RoceOpcode.QUERY_VERSION, layout: CmdqQueryVersion };

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  // The reference first, while no NIC worker thread competes for the cores.
  const refMedian = await options.references.figure('shm-ping', 'ns_median');
  const refP99 = await options.references.figure('shm-ping', 'ns_p99');

  // The NIC as `emu` opens it (model inline); then with its model in a worker thread.
  const inline = measureQueryVersion(false, options.durations);
  const thread = measureQueryVersion(true, options.durations);
  const detail = `${inline.count} commands, model inline (loop cable); min ${us(inline.min)}, p90 ${us(inline.p90)}; `
    + `model in a worker thread: median ${us(thread.median)}, p99 ${us(thread.p99)}`;
  return [
    benchResult({
      label: 'RoCE QUERY_VERSION round trip (CMDQ/CREQ), median', figure: inline.median / 1e3, unit: 'us',
      reference: refMedian, goal: atMost(GOAL_MEDIAN_US), detail,
    }),
    benchResult({
      label: 'RoCE QUERY_VERSION round trip (CMDQ/CREQ), p99', figure: inline.p99 / 1e3, unit: 'us', reference: refP99,
    }),
  ];
}

/** Opens a software NIC (RoCE up), times QUERY_VERSION through the driver's channel (ns), closes it. */
function measureQueryVersion(thread: boolean, durations: Durations): Summary {
  const opened = Nic.open('emu', { thread });
  if (!opened.ok) throw new Error(`cannot open a software NIC: ${opened.error}`);
  const nic = opened.value;
  try {
    const rcfw = nicInternals(nic).roce.rcfw;
    const body = {};
    return summarize(sampleEach(() => {
      const r = rcfw.send(QUERY_VERSION, body);
      if (!r.ok) throw new Error(r.error);
    }, durations));
  } finally {
    nic.close();
  }
}

const us = (ns: number) => `${(ns / 1e3).toFixed(1)} us`;
