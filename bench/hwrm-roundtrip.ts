/**
 * The HWRM round trip on the software NIC (issue 13 goal: median <= 25 us). The driver's own
 * channel sends HWRM_FUNC_QCFG (fid 0xffff, the calling function) over and over: request
 * into the BAR0 window, trigger, the model's worker thread answers by DMA, the driver polls
 * resp_len, seq_id and the valid byte. The reference is the least any request/answer between
 * two threads costs here: the shared-memory ping-pong of shm-ping.c.
 */
import { openEmu } from '../drivers/emu/host/device.ts';
import { macFromNumber } from '../drivers/emu/model/config.ts';
import { HWRM_FID_SELF } from '../firmware-hwrm/hwrm/header.ts';
import { bringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { HWRM_COMMANDS } from '../firmware-hwrm/hwrm/commands.ts';
import { atMost, benchResult } from './helpers/result.ts';
import { sampleEach, summarize, type Durations, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'hwrm-roundtrip';

/** Issue 13 goal: the median HWRM round trip on the software NIC, in us. */
const GOAL_MEDIAN_US = 25;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  // The reference first, while no NIC worker thread competes for the cores.
  const refMedian = await options.references.figure('shm-ping', 'ns_median');
  const refP99 = await options.references.figure('shm-ping', 'ns_p99');

  // The NIC as `emu` opens it (model inline in this thread); then with its model in a worker
  // thread, whose crossings a detail shows.
  const inline = measureQcfg('inline', options.durations);
  const thread = measureQcfg('thread', options.durations);
  const detail = `${inline.count} requests, model inline (loop cable); min ${us(inline.min)}, p90 ${us(inline.p90)}; `
    + `model in a worker thread: median ${us(thread.median)}, p99 ${us(thread.p99)}`;
  return [
    benchResult({
      label: 'HWRM FUNC_QCFG round trip, median', figure: inline.median / 1e3, unit: 'us', reference: refMedian,
      goal: atMost(GOAL_MEDIAN_US), detail,
    }),
    benchResult({ label: 'HWRM FUNC_QCFG round trip, p99', figure: inline.p99 / 1e3, unit: 'us', reference: refP99 }),
  ];
}

/** Opens a software NIC, brings the function up, times FUNC_QCFG round trips (ns), tears down. */
function measureQcfg(mode: 'thread' | 'inline', durations: Durations): Summary {
  // A software NIC as drivers/open-device.ts makes one for "emu": loop cable, seed 1.
  const opened = openEmu({
    mac: macFromNumber(0xbe0001), ipv4: Uint8Array.from([10, 77, 0xbe, 1]), mtu: 9000,
    cable: { kind: 'loop' }, pcapPath: undefined, seed: 1, mode,
  });
  if (!opened.ok) throw new Error(`cannot open a software NIC: ${opened.error}`);
  const device = opened.value;
  try {
    const up = bringUp(device);
    if (!up.ok) throw new Error(up.error);
    const fn = up.value;
    try {
      const query = { fid: HWRM_FID_SELF };
      return summarize(sampleEach(() => {
        const r = fn.hwrm.send(HWRM_COMMANDS.FUNC_QCFG, query);
        if (!r.ok) throw new Error(r.error);
      }, durations));
    } finally {
      tearDown(fn);
    }
  } finally {
    device.close();
  }
}

const us = (ns: number) => `${(ns / 1e3).toFixed(1)} us`;
