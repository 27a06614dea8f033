/**
 * 1 MiB send bandwidth on one software NIC (issue goal: >= 0.5x memcpy + CRC-32 of C): a
 * keeps 4 sends of 1 MiB to b outstanding, b a receive for each. Every byte is copied from
 * a's region into frames and out of them into b's region, and each frame gets its ICRC: the
 * reference is therefore C's memcpy followed by CRC-32 of the same 1 MiB (memcpy-crc.c).
 * Thread-mode NIC, path MTU 4096 (256 packets a message).
 */
import { benchResult, ratioAtLeast } from './helpers/result.ts';
import { openBenchPair, waitOne } from './helpers/qp-setup.ts';
import { sampleEach, summarize } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'qp-bandwidth';

const MIB = 1 << 20;
const IN_FLIGHT = 4;
const LIMIT_US = 60e6;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const reference = await options.references.figure('memcpy-crc', 'memcpy_crc32_gbps');
  const p = openBenchPair({}, IN_FLIGHT * MIB);
  try {
    const { a, b, ra, rb } = p;
    for (let i = 0; i < IN_FLIGHT; i++) {
      b.receive(rb, i * MIB, MIB);
      a.send(ra, i * MIB, MIB);
    }
    let next = 0;
    // One sample per message: wait for the oldest, post the next in its slot.
    const oneMessage = () => {
      if (waitOne(b, 'receive', LIMIT_US) !== MIB) throw new Error('a receive took a message of another length');
      waitOne(a, 'send', LIMIT_US);
      const slot = next++ % IN_FLIGHT;
      b.receive(rb, slot * MIB, MIB);
      a.send(ra, slot * MIB, MIB);
    };
    const d = options.durations;
    // At tens of ms a message, a few hundred samples fill the run.
    const s = summarize(sampleEach(oneMessage, { ...d, maxSamples: Math.min(d.maxSamples, 10_000) }));
    for (let i = 0; i < IN_FLIGHT; i++) {
      waitOne(b, 'receive', LIMIT_US);
      waitOne(a, 'send', LIMIT_US);
    }
    const gbps = MIB / s.median; // bytes per ns = GB/s
    return [benchResult({
      label: `1 MiB sends, ${IN_FLIGHT} in flight, median bandwidth`, figure: gbps, unit: 'GB/s', reference,
      goal: ratioAtLeast(0.5),
      detail: `${s.count} messages on a thread-mode NIC; ${(s.median / 1e6).toFixed(2)} ms a message (p90 ${(s.p90 / 1e6).toFixed(2)} ms); GB/s = 1e9 bytes/s`,
    })];
  } finally {
    p.close();
  }
}
