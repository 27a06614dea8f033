/**
 * Fuzzing the driver (issue 5) with what the NIC hands it: firmware answers that are refused,
 * never come (silence) or are malformed (HWRM: wrong sequence id, response length, request
 * type, no valid byte; RoCE: another opcode, cookie or entry type, a random object id, random
 * bytes), through bring-up, make, connect, traffic, destroy and close; and completions
 * (CQEs) of random words written into live CQs. Every fault comes from a seeded PRNG (the
 * model's for firmware faults), so a seed replays a run.
 *
 * What must hold: no exception; every failure a Result error that says what and why; no
 * internal error and no IOMMU fault in the model (the driver never points the NIC outside its
 * memory); every DMA byte back after close; and for completions: poll gives None, Ok of the
 * entry's own length (a receive: at most what it posted), or Error; once a ring gives an
 * Error every later entry of it does; room stays 4095 minus the entries due.
 */
import { Nic, Qp, Region, type Result } from '../../lib/index.ts';
import { nicInternals } from '../../lib/nic.ts';
import { openEmu, type EmuDevice } from '../../drivers/emu/host/device.ts';
import { macFromNumber } from '../../drivers/emu/model/config.ts';
import { bringUp, tearDown } from '../../lib/bnxt/bringup.ts';
import { bringUpRoce, tearDownRoce } from '../../lib/bnxt/roce-device.ts';
import { DmaPool } from '../../lib/bnxt/dma-pool.ts';
import type { BnxtQp } from '../../lib/bnxt/queue-pair.ts';
import { driverQpOf } from '../../lib/qp.ts';
import { CqeType } from '../../firmware-hwrm/roce/cqe.ts';
import {
  CQ_BASE_CQE_TYPE_SHIFT as CQE_TYPE_SHIFT, CQ_BASE_STATUS_SHIFT as CQE_TRAILER_STATUS_SHIFT,
} from '../../firmware-hwrm/roce/cqe.g.ts';
import { seeded } from './seeded.ts';

export interface DriverFuzzOptions {
  readonly seed: number;
  /** Bring-ups and teardowns under random HWRM and RoCE faults. */
  readonly bringUps: number;
  /** Rounds of make, connect, traffic, destroy under random RoCE faults (one NIC each 20 rounds). */
  readonly rounds: number;
  /** Random CQEs written into live CQs. */
  readonly cqes: number;
  readonly progress?: (line: string) => void;
}

export interface DriverFuzzResult {
  readonly seed: number;
  readonly bringUps: { readonly ok: number; readonly failed: number };
  readonly steps: { readonly ok: number; readonly failed: number };
  readonly cqes: { readonly injected: number; readonly failures: number; readonly rebuilds: number };
  /** The kinds of errors met (digits and hex numbers folded), with counts. */
  readonly errors: Record<string, number>;
  readonly wallMs: number;
  readonly violations: readonly string[];
}

const MAX_VIOLATIONS = 20;

/** mulberry32 from the tests' seeded helper: every choice comes from the printed seed. */
const prng = seeded;
type Random = () => number;

function hwOf(q: Qp): BnxtQp {
  return driverQpOf(q);
}

/** What every phase of a run reports into: the violations (the first MAX_VIOLATIONS kept) and the errors met. */
class FuzzLog {
  readonly violations: string[] = [];
  /** The kinds of errors met (digits and hex numbers folded), with counts. */
  readonly errors: Record<string, number> = {};
  count = 0;

  constructor(private readonly seed: number) {}

  violation(text: string): void {
    this.count++;
    if (this.violations.length < MAX_VIOLATIONS) this.violations.push(`${text} (seed ${this.seed})`);
  }

  /** An error the driver returned: it must say what and why. */
  noteError(message: unknown, where: string): void {
    if (typeof message !== 'string' || message.length < 10) {
      this.violation(`${where}: an error without a clear message: ${JSON.stringify(message)}`);
    }
    const kind = String(message).replace(/0x[0-9a-f]+/gi, 'N').replace(/\d+/g, 'N');
    this.errors[kind] = (this.errors[kind] ?? 0) + 1;
  }

  get clean(): boolean {
    return this.count === 0;
  }
}

export function fuzzDriver(options: DriverFuzzOptions): DriverFuzzResult {
  const seed = options.seed >>> 0;
  const r = prng(seed);
  const log = new FuzzLog(seed);
  const started = performance.now();
  const bringUps = fuzzBringUps(options, seed, log);
  options.progress?.(`${options.bringUps} bring-ups: ${bringUps.ok} whole, ${bringUps.failed} failed cleanly`);
  const steps = fuzzCommands(options, seed, r, log);
  options.progress?.(`${options.rounds} rounds of make/connect/traffic/destroy: ${steps.ok} steps Ok, ` +
    `${steps.failed} failed cleanly`);
  const cqes = { injected: 0, failures: 0, rebuilds: 0 };
  if (options.cqes > 0 && log.clean) fuzzCqes(options, seed, r, log, cqes);
  const { violations, errors } = log;
  if (log.count > violations.length) violations.push(`... and ${log.count - violations.length} more`);
  return { seed, bringUps, steps, cqes, errors, wallMs: performance.now() - started, violations };
}

type Counts = { ok: number; failed: number };

/** Bring-up and teardown under HWRM and RoCE faults, each on a fresh stepped software NIC. */
function fuzzBringUps(options: DriverFuzzOptions, seed: number, log: FuzzLog): Counts {
  const bringUps = { ok: 0, failed: 0 };
  for (let i = 0; i < options.bringUps && log.clean; i++) {
    const s = (seed + i * 7919) >>> 0;
    const opened = openEmu({
      mac: macFromNumber(0x4000 + (i & 0xfff)), ipv4: Uint8Array.from([10, 78, 1, 1 + (i % 250)]), mtu: 9000,
      cable: { kind: 'loop' }, pcapPath: undefined, seed: s, mode: 'stepped',
    });
    if (!opened.ok) { log.violation(`openEmu: ${opened.error}`); break; }
    const device = opened.value;
    try {
      device.emu.hwrm.setRandomFaults({ refuse: 0.03, silence: 0.01, malform: 0.03 });
      device.emu.roce.setRandomFaults({ refuse: 0.03, silence: 0.01, malform: 0.03 });
      // As Nic.open does: the pool's quarantine goes back once the device is closed.
      const pool = new DmaPool(device.dma);
      if (bringUpOnce(device, pool, log)) bringUps.ok++;
      else bringUps.failed++;
      checkModel(device, 'bring-up', log);
      device.close();
      pool.releaseQuarantine();
    } catch (e) {
      log.violation(`bring-up ${i} threw: ${(e as Error).stack ?? String(e)}`);
    } finally {
      device.close();
    }
    if (device.dma.allocatedBytes !== 0) {
      log.violation(`bring-up ${i}: ${device.dma.allocatedBytes} DMA bytes not given back after teardown`);
    }
  }
  return bringUps;
}

/** One bring-up, RoCE bring-up and teardown: true if both bring-ups went through. */
function bringUpOnce(device: EmuDevice, pool: DmaPool, log: FuzzLog): boolean {
  const fn = bringUp(device, { firmwareTimeoutMs: 20, pool });
  if (!fn.ok) { log.noteError(fn.error, 'bring-up'); return false; }
  const roce = bringUpRoce(fn.value, Uint8Array.from([10, 78, 1, 1]));
  if (!roce.ok) log.noteError(roce.error, 'RoCE bring-up');
  else tearDownRoce(roce.value);
  tearDown(fn.value);
  return roce.ok;
}

/** Make, connect, traffic, destroy under RoCE faults: one NIC each 20 rounds. */
function fuzzCommands(options: DriverFuzzOptions, seed: number, r: Random, log: FuzzLog): Counts {
  const steps = { ok: 0, failed: 0 };
  const step = <T>(what: string, x: Result<T>): x is { ok: true; value: T } => {
    if (x.ok) steps.ok++;
    else { steps.failed++; log.noteError(x.error, what); }
    return x.ok;
  };
  for (let round = 0; round < options.rounds && log.clean; round += 20) {
    const opened = Nic.open('emu', { stepped: true, seed: (seed + round) >>> 0, firmwareTimeoutMs: 20 });
    if (!opened.ok) { log.violation(`Nic.open: ${opened.error}`); break; }
    const nic = opened.value;
    const device = nicInternals(nic).device as EmuDevice;
    const dma = device.dma;
    try {
      device.emu.roce.setRandomFaults({ refuse: 0.08, silence: 0.001, malform: 0.03 });
      const regions: Region[] = [];
      for (let k = round; k < Math.min(options.rounds, round + 20); k++) {
        const region = Region.alloc(nic, 4096 + (r() % 65536));
        if (step('Region.alloc', region)) regions.push(region.value);
        const a = Qp.make(nic);
        const b = Qp.make(nic);
        if (step('Qp.make', a) && step('Qp.make', b) && step('Qp.connect', a.value.connect(b.value.endpoint)) &&
          step('Qp.connect', b.value.connect(a.value.endpoint)) && regions.length > 0) {
          carryOne(a.value, b.value, regions[0]!, k, log);
        }
        for (const q of [a, b]) if (q.ok) step('Qp.destroy', q.value.destroy());
        if (regions.length > 3) step('Region.deregister', regions.shift()!.deregister());
      }
      checkModel(device, 'commands', log);
    } catch (e) {
      log.violation(`round ${round} threw: ${(e as Error).stack ?? String(e)}`);
    }
    nic.close();
    if (dma.allocatedBytes !== 0) {
      log.violation(`round ${round}: ${dma.allocatedBytes} DMA bytes not given back after close`);
    }
  }
  return steps;
}

/** A connected pair carries one 64-byte message from a to b. */
function carryOne(a: Qp, b: Qp, m: Region, round: number, log: FuzzLog): void {
  b.receive(m, 0, 64);
  a.send(m, 64, 64);
  const sent = a.wait('send', 1e6);
  const got = b.wait('receive', 1e6);
  if (!sent?.ok || !got?.ok || sent.value !== 64 || got.value !== 64) {
    log.violation(`round ${round}: a connected pair did not carry a message: ${JSON.stringify([sent, got])}`);
  }
}

/** One ring as the fuzz saw it: the lengths posted, how many came back, the first failed entry (or -1). */
interface Ring { lengths: number[]; taken: number; failedAt: number }
const emptyRing = (): Ring => ({ lengths: [], taken: 0, failedAt: -1 });
type CqeCounts = { injected: number; failures: number; rebuilds: number };

/** The queue pairs of the CQE fuzz and their rings' logs; `take` checks what a ring completes against its log. */
class CqeRings {
  private readonly rings = new Map<Qp, { send: Ring; receive: Ring }>();

  constructor(private readonly nic: Nic, private readonly log: FuzzLog, private readonly cqes: CqeCounts) {}

  /** A connected pair with empty logs. */
  make(): [Qp, Qp] {
    const a = Qp.make(this.nic);
    const b = Qp.make(this.nic);
    if (!a.ok || !b.ok) throw new Error('Qp.make');
    const ca = a.value.connect(b.value.endpoint);
    const cb = b.value.connect(a.value.endpoint);
    if (!ca.ok || !cb.ok) throw new Error('connect');
    for (const q of [a.value, b.value]) {
      this.rings.set(q, { send: emptyRing(), receive: emptyRing() });
    }
    return [a.value, b.value];
  }

  posted(q: Qp, side: 'send' | 'receive', length: number): void {
    this.rings.get(q)![side].lengths.push(length);
  }

  forget(q: Qp): void {
    this.rings.delete(q);
  }

  /**
   * Every completion the ring has: None, Ok of the entry's own length (a receive: at most what
   * it posted) or Error; once Error, every later entry too; room 4095 minus the entries due.
   */
  take(q: Qp, side: 'send' | 'receive'): void {
    const { log } = this;
    const ring = this.rings.get(q)![side];
    for (;;) {
      let x: Result<number> | undefined;
      try {
        x = q.poll(side);
      } catch (e) {
        log.violation(`poll threw: ${(e as Error).stack}`);
        return;
      }
      if (x === undefined) break;
      const k = ring.taken++;
      const posted = ring.lengths[k];
      if (posted === undefined) { log.violation(`${side} poll gave a completion with no entry due`); return; }
      if (x.ok) {
        if (ring.failedAt >= 0) log.violation(`${side} entry ${k} Ok after entry ${ring.failedAt} failed`);
        const wrong = side === 'send' ? x.value !== posted : x.value > posted;
        if (!Number.isInteger(x.value) || x.value < 0 || wrong) {
          log.violation(`${side} entry ${k}: Ok ${x.value} for an entry of ${posted} bytes`);
        }
      } else {
        if (ring.failedAt < 0) { ring.failedAt = k; this.cqes.failures++; }
        log.noteError(x.error, 'poll');
        if (q.failure === undefined) log.violation(`${side} entry ${k} failed but the queue pair has not`);
      }
      const due = ring.lengths.length - ring.taken;
      if (q.room(side) !== 4095 - due) log.violation(`${side} room ${q.room(side)} with ${due} entries due`);
    }
  }
}

/** A CQE of random words, often shaped like one the ring takes (type, index, status). */
function randomCqe(r: Random, victim: Qp): number[] {
  const w = [r(), r(), r(), r(), r(), r(), r(), r()];
  const shape = r() % 4;
  if (shape > 0) {
    const type = shape === 1 ? CqeType.REQ : shape === 2 ? CqeType.RES_RC : r() % 16;
    const status = r() % 3 === 0 ? 0 : r() % 16;
    w[6] = ((type << CQE_TYPE_SHIFT) | (status << CQE_TRAILER_STATUS_SHIFT) | (w[6]! & 0xffff0000)) >>> 0;
    if (r() % 2 === 0) w[2] = (w[2]! & ~0xffff) | ((hwOf(victim).due(0) + r() % 3) & 0xfff);
    if (r() % 2 === 0) w[7] = r() % 4096;
    if (r() % 2 === 0) w[0] = r() % 10_000;
  }
  return w;
}

/** Random CQEs written into the live CQs of two connected pairs carrying traffic both ways. */
function fuzzCqes(options: DriverFuzzOptions, seed: number, r: Random, log: FuzzLog, cqes: CqeCounts): void {
  const opened = Nic.open('emu', { stepped: true, seed, firmwareTimeoutMs: 1000 });
  if (!opened.ok) throw new Error(opened.error);
  const nic = opened.value;
  const device = nicInternals(nic).device as EmuDevice;
  try {
    const mem = Region.alloc(nic, 1 << 20);
    if (!mem.ok) throw new Error(mem.error);
    const region = mem.value;
    const rings = new CqeRings(nic, log, cqes);
    let pairs: [Qp, Qp][] = [rings.make(), rings.make()];
    for (let i = 0; i < options.cqes && log.clean; i++) {
      const [a, b] = pairs[r() % pairs.length]!;
      // Traffic both ways, a few entries at a time.
      for (const [from, to] of [[a, b], [b, a]] as const) {
        if (from.room('send') > 8 && to.room('receive') > 8) {
          const n = r() % 5000;
          to.receive(region, 500_000, 8192);
          rings.posted(to, 'receive', 8192);
          from.send(region, r() % 400_000, n);
          rings.posted(from, 'send', n);
        }
      }
      const victim = r() % 2 === 0 ? a : b;
      const cq = r() % 2 === 0 ? hwOf(victim).scq : hwOf(victim).rcq;
      const w = randomCqe(r, victim);
      try {
        device.emu.engine.injectCqe(cq.id, w);
      } catch (e) {
        log.violation(`injectCqe threw: ${(e as Error).message}`);
      }
      cqes.injected++;
      device.clock.sleep(20);
      for (const q of [a, b]) { rings.take(q, 'send'); rings.take(q, 'receive'); }
      // A failed pair is destroyed (the NIC may run it on until then) and made again.
      if (a.failure !== undefined || b.failure !== undefined || r() % 50 === 0) {
        for (const q of [a, b]) {
          const d = q.destroy();
          if (!d.ok) log.violation(`destroy: ${d.error}`);
          rings.forget(q);
        }
        pairs = pairs.map((p) => (p[0] === a ? rings.make() : p));
        cqes.rebuilds++;
      }
      if (options.progress && (i + 1) % 20_000 === 0) {
        options.progress(`${i + 1} CQEs injected, ${cqes.failures} rings failed, ${cqes.rebuilds} rebuilds`);
      }
    }
    checkModel(device, 'CQEs', log);
  } catch (e) {
    log.violation(`the CQE fuzz threw: ${(e as Error).stack ?? String(e)}`);
  } finally {
    nic.close();
  }
}

/** The model met no internal error and no IOMMU fault. */
function checkModel(device: EmuDevice, where: string, log: FuzzLog): void {
  const engine = device.emu.engine.counters();
  const roce = device.emu.roce.stats();
  const faults = device.emu.model.iommuFaults();
  if (engine['internalErrors'] !== 0) {
    log.violation(`${where}: ${engine['internalErrors']} internal errors in the engine: ` +
      String(device.emu.engine.lastInternalError()));
  }
  if (roce['internalErrors'] !== 0) {
    log.violation(`${where}: ${roce['internalErrors']} internal errors in the RoCE firmware: ` +
      String(device.emu.roce.lastInternalError()));
  }
  if (faults !== 0) log.violation(`${where}: ${faults} IOMMU faults: the NIC was pointed outside the driver's memory`);
}
