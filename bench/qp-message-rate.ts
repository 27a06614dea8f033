/**
 * The 64-byte message rate with 32 messages in flight (issue 13 goal: >= 0.8 M msg/s): a keeps 32
 * sends to b outstanding, b keeps receives posted; each message counts once both its send
 * and its receive completed. The NIC as `emu` opens it (the model inline, loop cable); the
 * detail line has the same with the model in a worker thread, and the ACKs the responder sent
 * per message (it acknowledges what arrived in one run with one ACK, as IBA allows).
 * The reference is C's ring work as a rate (ring-work.c, 64 outstanding): the most a driver
 * and a device thread could turn over here with no transport between them.
 */
import { atLeast, benchResult } from './helpers/result.ts';
import { openBenchPair, type BenchPair } from './helpers/qp-setup.ts';
import { cpuNs, sampleBatches, summarize, type Durations, type Summary } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';
import { ratePerSecond } from './helpers/units.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/host/device.ts';

export const name = 'qp-message-rate';

const BYTES = 64;
const IN_FLIGHT = 32;
/** Messages per timed batch: the clock is read once per batch. */
const BATCH = 256;
const LIMIT_US = 10e6;

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  const ring = await options.references.figure('ring-work', 'ns_pipelined_median');
  const reference = { name: `${ring.name}, as a rate`, figure: ratePerSecond(ring.figure, 'Mops/s'), unit: 'Mops/s' };
  // The NIC as `emu` opens it: the model inline in this thread (the CPU cost of a message, driver
  // and model together); then the model in a worker thread, for the detail line.
  const inline = measureRate(false, options.durations);
  const thread = measureRate(true, options.durations);
  // Total messages over total time: the mean time per message, not the median batch.
  return [benchResult({
    label: `64 B messages, ${IN_FLIGHT} in flight, rate`, figure: ratePerSecond(inline.mean, 'Mops/s'), unit: 'Mops/s',
    reference, goal: atLeast(0.8),
    detail: `${inline.count} batches of ${BATCH} messages, model inline (loop cable); median batch ` +
      `${(inline.median / 1e3).toFixed(2)} us per message (p90 ${(inline.p90 / 1e3).toFixed(2)} us), `
      + `${inline.acksPerMessage.toFixed(3)} ACKs a message; CPU time ${(inline.cpuPerMessage / 1e3).toFixed(2)} us a `
      + `message (${(1e3 / inline.cpuPerMessage).toFixed(3)} M messages per CPU-second); `
      + `model in a worker thread: ${ratePerSecond(thread.mean, 'Mops/s').toFixed(3)} Mops/s`,
  })];
}

/** The batches, the ACKs a message, and the process CPU time a message (from the first post to the last completion). */
function measureRate(thread: boolean, d: Durations): Summary & { acksPerMessage: number; cpuPerMessage: number } {
  const p = openBenchPair({ thread }, 1 << 16);
  try {
    const engine = (nicInternals(p.nic).device as EmuDevice).emu.engine;
    const stream = new MessageStream(p);
    const cpuStart = cpuNs();
    stream.start();
    const acksBefore = engine.counters()['acksSent']!;
    const s = summarize(sampleBatches((n) => stream.complete(n), BATCH, d));
    stream.drain();
    const cpu = cpuNs() - cpuStart;
    const acks = engine.counters()['acksSent']! - acksBefore;
    return { ...s, acksPerMessage: acks / stream.messages, cpuPerMessage: cpu / stream.messages };
  } finally {
    p.close();
  }
}

/** a -> b, IN_FLIGHT sends outstanding, a receive posted for each. */
class MessageStream {
  private sendsDone = 0;
  private receivesDone = 0;
  private posted = 0;

  constructor(private readonly p: BenchPair) {}

  get messages(): number {
    return this.posted;
  }

  start(): void {
    for (let i = 0; i < IN_FLIGHT; i++) this.post();
  }

  private post(): void {
    this.p.b.receive(this.p.rb, 0, BYTES);
    this.p.a.send(this.p.ra, 0, BYTES);
    this.posted++;
  }

  /**
   * Runs until `n` more messages arrived, as perftest's ib_send_bw loop runs (run_iter_bw:
   * post while the window has room, then take the completions there are): fills the window to
   * IN_FLIGHT messages, takes every receive and send completion that is there, and when there
   * was none waits for the oldest receive (or, when all arrived, the oldest send; waitBytes
   * spins, then sleeps, leaving the NIC's thread a core). Taking every completion before posting
   * again is what lets a NIC see several doorbells at once and acknowledge several messages
   * with one ACK, as a loop that posts one message per completion never does.
   */
  complete(n: number): void {
    const { a, b } = this.p;
    const target = this.receivesDone + n;
    while (this.receivesDone < target) {
      while (this.posted - Math.min(this.sendsDone, this.receivesDone) < IN_FLIGHT) this.post();
      let taken = 0;
      for (let r = b.pollBytes('receive'); r !== -1; r = b.pollBytes('receive')) {
        if (r < 0) throw new Error(`receive failed: ${b.lastError}`);
        this.receivesDone++;
        taken++;
      }
      for (let s = a.pollBytes('send'); s !== -1; s = a.pollBytes('send')) {
        if (s < 0) throw new Error(`send failed: ${a.lastError}`);
        this.sendsDone++;
        taken++;
      }
      if (taken > 0) continue;
      if (this.receivesDone < this.posted) {
        const r = b.waitBytes('receive', LIMIT_US);
        if (r < 0) throw new Error(r === -1 ? 'no receive completion within 10 s' : `receive failed: ${b.lastError}`);
        this.receivesDone++;
      } else {
        // Every message arrived; the window waits for a send's completion (its ACK).
        const s = a.waitBytes('send', LIMIT_US);
        if (s < 0) throw new Error(s === -1 ? 'no send completion within 10 s' : `send failed: ${a.lastError}`);
        this.sendsDone++;
      }
    }
  }

  drain(): void {
    const { a, b } = this.p;
    for (; this.receivesDone < this.posted; this.receivesDone++)
      if (b.waitBytes('receive', LIMIT_US) < 0) throw new Error('a message in flight never arrived');
    for (; this.sendsDone < this.posted; this.sendsDone++)
      if (a.waitBytes('send', LIMIT_US) < 0) throw new Error('a send in flight never completed');
  }
}
