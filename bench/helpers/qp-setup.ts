/**
 * Queue pairs for the data-path benchmarks: a software NIC with two connected queue pairs
 * (a sends, b receives) and a region each, and the allocation-free loops the benchmarks time.
 */
import { Nic, Qp, Region, type NicOptions, type Result } from '../../lib/index.ts';
import type { CompletionQueue } from '../../lib/bnxt/completion-queue.ts';
import { driverQpOf } from '../../lib/qp.ts';
import { nicInternals } from '../../lib/nic.ts';
import type { Clock } from '../../drivers/device.ts';

export interface BenchPair {
  readonly nic: Nic;
  readonly a: Qp;
  readonly b: Qp;
  readonly ra: Region;
  readonly rb: Region;
  close(): void;
}

function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what}: ${r.error}`);
  return r.value;
}

/** A NIC (thread mode unless told) with a <-> b connected and a region of `bytes` each. */
export function openBenchPair(options: NicOptions = {}, bytes = 1 << 20): BenchPair {
  const nic = must(Nic.open('emu', options), 'Nic.open');
  try {
    const a = must(Qp.make(nic), 'Qp.make');
    const b = must(Qp.make(nic), 'Qp.make');
    const ra = must(Region.alloc(nic, bytes), 'Region.alloc');
    const rb = must(Region.alloc(nic, bytes), 'Region.alloc');
    must(a.connect(b.endpoint), 'connect');
    must(b.connect(a.endpoint), 'connect');
    return { nic, a, b, ra, rb, close: () => nic.close() };
  } catch (e) {
    nic.close();
    throw e;
  }
}

/** The CQs behind a queue pair (the driver's own objects), to see completions without taking them. */
export function completionQueues(q: Qp): { send: CompletionQueue; receive: CompletionQueue } {
  const driverQp = driverQpOf(q);
  return { send: driverQp.scq, receive: driverQp.rcq };
}

/**
 * Spins (allocation-free) until the entry `ahead` past the CQ's consumer is written, relaxing the
 * NIC's clock between looks (a model inline or stepped runs only then); false after `limit` looks.
 */
export function spinUntilReady(cq: CompletionQueue, ahead: number, limit: number, clock: Clock): boolean {
  for (let i = 0; i < limit; i++) {
    if (cq.readyAhead(ahead)) return true;
    clock.relax();
  }
  return false;
}

/** The clock of the NIC a queue pair belongs to. */
export function clockOf(nic: Nic): Clock {
  return nicInternals(nic).device.clock;
}

/**
 * Takes the next completion of `side` by polling (allocation-free); throws for a failed entry or none after `limit`
 * looks.
 */
export function pollOne(q: Qp, side: 'send' | 'receive', limit: number): number {
  for (let i = 0; i < limit; i++) {
    const n = q.pollBytes(side);
    if (n >= 0) return n;
    if (n !== -1) throw new Error(`${side} completion failed: ${q.lastError}`);
  }
  throw new Error(`no ${side} completion after ${limit} looks`);
}

/**
 * Takes the next completion of `side` with Qp.waitBytes (it spins, then sleeps between looks,
 * so the NIC's worker thread gets a core even when the machine has few free); throws for a
 * failed entry or none within `us`.
 */
export function waitOne(q: Qp, side: 'send' | 'receive', us: number): number {
  const n = q.waitBytes(side, us);
  if (n >= 0) return n;
  throw new Error(n === -1 ? `no ${side} completion within ${us} us` : `${side} completion failed: ${q.lastError}`);
}
