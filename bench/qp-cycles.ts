/**
 * Queue-pair control path on the software NIC (issue 13 goal: >= 2000 cycles/s).
 * One cycle is Qp.make (2 x CREATE_CQ, CREATE_QP, MODIFY_QP to INIT, ~1.4 MB of rings and
 * their page tables), Qp.connect to itself (MODIFY_QP to RTR and RTS) and Qp.destroy
 * (DESTROY_QP, 2 x DESTROY_CQ, the memory freed): 9 RoCE commands and 9 DMA buffers.
 *
 * The reference is measured in the same run on the same NIC: the rate a cycle would reach if
 * it cost nothing but its 9 command round trips (QUERY_VERSION, the cheapest command). The
 * ratio then says how much of a cycle the commands take, and how much the memory work.
 */
import { Nic, Qp } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { CmdqQueryVersion, RoceOpcode } from '../firmware-hwrm/roce/index.ts';
import { atLeast, benchResult } from './helpers/result.ts';
import { cpuNs, sampleEach, summarize, type Durations, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'qp-cycles';

/** Issue 13 goal: make + connect + destroy cycles per second. */
const GOAL_CYCLES_PER_SECOND = 2000;
const COMMANDS_PER_CYCLE = 9;
/** roce_hsi.h: struct cmdq_query_version. */
const QUERY_VERSION = { opcode: RoceOpcode.QUERY_VERSION, layout: CmdqQueryVersion };

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  // The NIC as `emu` opens it (model inline); then with its model in a worker thread.
  const inline = measure(false, options.durations);
  const thread = measure(true, options.durations);
  const reference = {
    name: `${COMMANDS_PER_CYCLE} QUERY_VERSION round trips per cycle, same NIC`,
    figure: 1e9 / (COMMANDS_PER_CYCLE * inline.command.mean), unit: 'ops/s',
  };
  const detail =
    `${inline.cycle.count} cycles, model inline (loop cable); cycle median ${ms(inline.cycle.median)}, p99 ` +
    `${ms(inline.cycle.p99)}; `
    + `CPU time ${ms(inline.cpuPerCycle)} a cycle (this process, every thread, warm-up included); `
    + `command round trip mean ${usOf(inline.command.mean)}; `
    + `model in a worker thread: ${Math.round(1e9 / thread.cycle.mean)} cycles/s`;
  return [
    benchResult({
      label: 'QP make + connect + destroy, cycles per second', figure: 1e9 / inline.cycle.mean, unit: 'ops/s',
      reference, goal: atLeast(GOAL_CYCLES_PER_SECOND), detail,
    }),
  ];
}

/** Opens a software NIC, times whole cycles, then bare command round trips on the same NIC (ns), closes it. */
function measure(thread: boolean, durations: Durations): { cycle: Summary; command: Summary; cpuPerCycle: number } {
  const opened = Nic.open('emu', { thread });
  if (!opened.ok) throw new Error(`cannot open a software NIC: ${opened.error}`);
  const nic = opened.value;
  try {
    // CPU time beside the cycle's real time: on a loaded machine the two differ by the time this
    // process waited for a core, which no change to the control path can give back.
    let cycles = 0;
    const cpuStart = cpuNs();
    const cycle = summarize(sampleEach(() => {
      cycles++;
      const qp = Qp.make(nic);
      if (!qp.ok) throw new Error(qp.error);
      const connected = qp.value.connect(qp.value.endpoint);
      if (!connected.ok) throw new Error(connected.error);
      const destroyed = qp.value.destroy();
      if (!destroyed.ok) throw new Error(destroyed.error);
    }, durations));
    const cpuPerCycle = (cpuNs() - cpuStart) / cycles;
    const rcfw = nicInternals(nic).roce.rcfw;
    const body = {};
    const command = summarize(sampleEach(() => {
      const r = rcfw.send(QUERY_VERSION, body);
      if (!r.ok) throw new Error(r.error);
    }, durations));
    return { cycle, command, cpuPerCycle };
  } finally {
    nic.close();
  }
}

const ms = (ns: number) => `${(ns / 1e6).toFixed(2)} ms`;
const usOf = (ns: number) => `${(ns / 1e3).toFixed(1)} us`;
