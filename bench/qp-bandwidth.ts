/**
 * 1 MiB send bandwidth on one software NIC (issue 13 goal: >= 1 GB/s, as total bytes over total
 * time): a keeps 4 sends of 1 MiB to b outstanding, b a receive for each. Path MTU 4096 (256
 * packets a message), the model inline in the driver's thread (the loop cable's default).
 *
 * What the model does per byte: it copies it twice (a's region into the frame being built, which
 * the loop cable then takes over as its slot; the slot into b's region). CRC-32 passes (the ICRC
 * built by the sender, checked by the receiver; libdeflate's CRC-32 where it is installed,
 * node:zlib's otherwise) are counted, not assumed: on the loop cable a port's frames to itself
 * carry none (docs/hardware.md, "Frames a port hands to itself": the engine's icrcDeferred and
 * icrcTrusted counters), so the detail gives the share of frames whose ICRC was computed and
 * checked in the run. The reference does the least a NIC must do once per byte, a
 * copy and a CRC-32, with the fastest CRC C has here: memcpy-crc.c's memcpy + libdeflate CRC-32 of
 * 1 MiB, or memcpy + zlib CRC-32 where libdeflate is not installed.
 */
import { atLeast, benchResult } from './helpers/result.ts';
import { openBenchPair, waitOne } from './helpers/qp-setup.ts';
import { cpuNs, nowNs } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';
import type { NicOptions } from '../lib/index.ts';
import { hostLongCrc32 } from '../drivers/emu/host/long-crc32.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/host/device.ts';

const percent = (share: number) => `${(share * 100).toFixed(share > 0 && share < 0.01 ? 2 : 0)} %`;

export const name = 'qp-bandwidth';

const MIB = 1 << 20;
const IN_FLIGHT = 4;
const LIMIT_US = 60e6;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  // The reference CRCs with the fastest CRC-32 C has here: libdeflate's where the system has it
  // (the one the model's ICRC then uses too), else zlib's.
  const withDeflate = await options.references.figure('memcpy-crc', 'memcpy_libdeflate_crc32_gbps');
  const reference = withDeflate.figure > 0
    ? withDeflate : await options.references.figure('memcpy-crc', 'memcpy_zlib_crc32_gbps');
  const inline = measure({}, options);
  const thread = measure({ thread: true }, options);
  return [benchResult({
    label: `1 MiB sends, ${IN_FLIGHT} in flight, bandwidth (total bytes / total time)`, figure: inline.gbps,
    unit: 'GB/s', reference, goal: atLeast(1),
    detail: `${inline.messages} messages in ${(inline.ns / 1e9).toFixed(2)} s, model inline (loop cable), `
      + `${((inline.messages * MIB) / inline.cpuNs).toFixed(3)} GB per CPU-second of this process; model in a ` +
      `worker thread: ${thread.gbps.toFixed(3)} GB/s `
      + `(${thread.messages} messages); per byte the model makes 2 copies; ICRC computed for ` +
      `${percent(inline.icrcComputed)} of the frames sent and checked for ${percent(inline.icrcChecked)} of those ` +
      `received, model inline (where computed, ${hostLongCrc32()?.name ?? 'JS'}'s CRC-32 for full frames); ` +
      'GB/s = 1e9 bytes/s',
  })];
}

/** Messages completed in the run after a warm-up, and the time they took: total bytes over total time. */
function measure(
  nicOptions: NicOptions, options: BenchOptions,
): { gbps: number; messages: number; ns: number; cpuNs: number; icrcComputed: number; icrcChecked: number } {
  const p = openBenchPair(nicOptions, IN_FLIGHT * MIB);
  try {
    const engine = (nicInternals(p.nic).device as EmuDevice).emu.engine;
    const { a, b, ra, rb } = p;
    for (let i = 0; i < IN_FLIGHT; i++) {
      b.receive(rb, i * MIB, MIB);
      a.send(ra, i * MIB, MIB);
    }
    let next = 0;
    // Wait for the oldest message, post the next in its slot.
    const oneMessage = () => {
      if (waitOne(b, 'receive', LIMIT_US) !== MIB) throw new Error('a receive took a message of another length');
      waitOne(a, 'send', LIMIT_US);
      const slot = next++ % IN_FLIGHT;
      b.receive(rb, slot * MIB, MIB);
      a.send(ra, slot * MIB, MIB);
    };
    const d = options.durations;
    const warmEnd = nowNs() + d.warmupMs * 1e6;
    while (nowNs() < warmEnd) oneMessage();
    const before = engine.counters();
    const cpuStart = cpuNs();
    const start = nowNs();
    const end = start + d.runMs * 1e6;
    let messages = 0;
    let t = start;
    while (t < end) {
      oneMessage();
      messages++;
      t = nowNs();
    }
    const cpu = cpuNs() - cpuStart;
    const after = engine.counters();
    const counted = (key: 'framesSent' | 'framesReceived' | 'icrcDeferred' | 'icrcTrusted') => after[key] - before[key];
    const sent = counted('framesSent');
    const received = counted('framesReceived');
    for (let i = 0; i < IN_FLIGHT; i++) {
      waitOne(b, 'receive', LIMIT_US);
      waitOne(a, 'send', LIMIT_US);
    }
    const ns = t - start;
    return {
      gbps: (messages * MIB) / ns, messages, ns, cpuNs: cpu,
      icrcComputed: sent === 0 ? 0 : (sent - counted('icrcDeferred')) / sent,
      icrcChecked: received === 0 ? 0 : (received - counted('icrcTrusted')) / received,
    };
  } finally {
    p.close();
  }
}
