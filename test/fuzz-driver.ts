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
import { Nic, Qp, Region, type Result } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { openEmu, type EmuDevice } from '../drivers/emu/device.ts';
import { macFromNumber } from '../drivers/emu/config.ts';
import { bringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { bringUpRoce, tearDownRoce } from '../lib/bnxt/roce-device.ts';
import { DmaPool } from '../lib/bnxt/dma-pool.ts';
import type { BnxtQp } from '../lib/bnxt/queue-pair.ts';
import { driverQpOf } from '../lib/qp.ts';
import { CqeType } from '../firmware-hwrm/roce/cqe.ts';
import { CQ_BASE_CQE_TYPE_SHIFT as CQE_TYPE_SHIFT, CQ_BASE_STATUS_SHIFT as CQE_TRAILER_STATUS_SHIFT } from '../firmware-hwrm/roce/cqe.g.ts';
import { seeded } from './helpers/seeded.ts';

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

function hwOf(q: Qp): BnxtQp {
  return driverQpOf(q);
}

export function fuzzDriver(options: DriverFuzzOptions): DriverFuzzResult {
  const seed = options.seed >>> 0;
  const r = prng(seed);
  const violations: string[] = [];
  let violationCount = 0;
  const violation = (text: string) => {
    violationCount++;
    if (violations.length < MAX_VIOLATIONS) violations.push(`${text} (seed ${seed})`);
  };
  const errors: Record<string, number> = {};
  const noteError = (message: unknown, where: string) => {
    if (typeof message !== 'string' || message.length < 10) violation(`${where}: an error without a clear message: ${JSON.stringify(message)}`);
    const kind = String(message).replace(/0x[0-9a-f]+/gi, 'N').replace(/\d+/g, 'N');
    errors[kind] = (errors[kind] ?? 0) + 1;
  };
  const started = performance.now();

  // ---- bring-up and teardown under HWRM and RoCE faults ------------------------------
  const bringUps = { ok: 0, failed: 0 };
  for (let i = 0; i < options.bringUps && violationCount === 0; i++) {
    const s = (seed + i * 7919) >>> 0;
    const opened = openEmu({
      mac: macFromNumber(0x4000 + (i & 0xfff)), ipv4: Uint8Array.from([10, 78, 1, 1 + (i % 250)]), mtu: 9000, cable: { kind: 'loop' },
      pcapPath: undefined, seed: s, mode: 'stepped',
    });
    if (!opened.ok) { violation(`openEmu: ${opened.error}`); break; }
    const device = opened.value;
    try {
      device.emu.hwrm.setRandomFaults({ refuse: 0.03, silence: 0.01, malform: 0.03 });
      device.emu.roce.setRandomFaults({ refuse: 0.03, silence: 0.01, malform: 0.03 });
      // As Nic.open does: the pool's quarantine goes back once the device is closed.
      const pool = new DmaPool(device.dma);
      const fn = bringUp(device, { firmwareTimeoutMs: 20, pool });
      if (!fn.ok) { bringUps.failed++; noteError(fn.error, 'bring-up'); }
      else {
        const roce = bringUpRoce(fn.value, Uint8Array.from([10, 78, 1, 1]));
        if (!roce.ok) { bringUps.failed++; noteError(roce.error, 'RoCE bring-up'); }
        else {
          bringUps.ok++;
          tearDownRoce(roce.value);
        }
        tearDown(fn.value);
      }
      checkModel(device, 'bring-up', violation);
      device.close();
      pool.releaseQuarantine();
    } catch (e) {
      violation(`bring-up ${i} threw: ${(e as Error).stack ?? String(e)}`);
    } finally {
      device.close();
    }
    if (device.dma.allocatedBytes !== 0) violation(`bring-up ${i}: ${device.dma.allocatedBytes} DMA bytes not given back after teardown`);
  }
  options.progress?.(`${options.bringUps} bring-ups: ${bringUps.ok} whole, ${bringUps.failed} failed cleanly`);

  // ---- make, connect, traffic, destroy under RoCE faults -----------------------------
  const steps = { ok: 0, failed: 0 };
  const step = <T>(what: string, x: Result<T>): x is { ok: true; value: T } => {
    if (x.ok) steps.ok++;
    else { steps.failed++; noteError(x.error, what); }
    return x.ok;
  };
  for (let round = 0; round < options.rounds && violationCount === 0; round += 20) {
    const opened = Nic.open('emu', { stepped: true, seed: (seed + round) >>> 0, firmwareTimeoutMs: 20 });
    if (!opened.ok) { violation(`Nic.open: ${opened.error}`); break; }
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
        if (step('Qp.make', a) && step('Qp.make', b)) {
          if (step('Qp.connect', a.value.connect(b.value.endpoint)) && step('Qp.connect', b.value.connect(a.value.endpoint)) && regions.length > 0) {
            const m = regions[0]!;
            b.value.receive(m, 0, 64);
            a.value.send(m, 64, 64);
            const sent = a.value.wait('send', 1e6);
            const got = b.value.wait('receive', 1e6);
            if (!sent?.ok || !got?.ok || sent.value !== 64 || got.value !== 64) violation(`round ${k}: a connected pair did not carry a message: ${JSON.stringify([sent, got])}`);
          }
        }
        for (const q of [a, b]) if (q.ok) step('Qp.destroy', q.value.destroy());
        if (regions.length > 3) step('Region.deregister', regions.shift()!.deregister());
      }
      checkModel(device, 'commands', violation);
    } catch (e) {
      violation(`round ${round} threw: ${(e as Error).stack ?? String(e)}`);
    }
    nic.close();
    if (dma.allocatedBytes !== 0) violation(`round ${round}: ${dma.allocatedBytes} DMA bytes not given back after close`);
  }
  options.progress?.(`${options.rounds} rounds of make/connect/traffic/destroy: ${steps.ok} steps Ok, ${steps.failed} failed cleanly`);

  // ---- random CQEs into live CQs ------------------------------------------------------
  const cqes = { injected: 0, failures: 0, rebuilds: 0 };
  if (options.cqes > 0 && violationCount === 0) {
    const opened = Nic.open('emu', { stepped: true, seed, firmwareTimeoutMs: 1000 });
    if (!opened.ok) throw new Error(opened.error);
    const nic = opened.value;
    const device = nicInternals(nic).device as EmuDevice;
    try {
      const mem = Region.alloc(nic, 1 << 20);
      if (!mem.ok) throw new Error(mem.error);
      const region = mem.value;
      interface Ring { lengths: number[]; taken: number; failedAt: number }
      interface Side { send: Ring; receive: Ring }
      const rings = new Map<Qp, Side>();
      const make = (): [Qp, Qp] => {
        const a = Qp.make(nic);
        const b = Qp.make(nic);
        if (!a.ok || !b.ok) throw new Error('Qp.make');
        const ca = a.value.connect(b.value.endpoint);
        const cb = b.value.connect(a.value.endpoint);
        if (!ca.ok || !cb.ok) throw new Error('connect');
        for (const q of [a.value, b.value]) rings.set(q, { send: { lengths: [], taken: 0, failedAt: -1 }, receive: { lengths: [], taken: 0, failedAt: -1 } });
        return [a.value, b.value];
      };
      let pairs: [Qp, Qp][] = [make(), make()];
      const take = (q: Qp, side: 'send' | 'receive') => {
        const ring = rings.get(q)![side];
        for (;;) {
          let x: Result<number> | undefined;
          try {
            x = q.poll(side);
          } catch (e) {
            violation(`poll threw: ${(e as Error).stack}`);
            return;
          }
          if (x === undefined) break;
          const k = ring.taken++;
          const posted = ring.lengths[k];
          if (posted === undefined) { violation(`${side} poll gave a completion with no entry due`); return; }
          if (x.ok) {
            if (ring.failedAt >= 0) violation(`${side} entry ${k} Ok after entry ${ring.failedAt} failed`);
            if (!Number.isInteger(x.value) || x.value < 0 || (side === 'send' ? x.value !== posted : x.value > posted)) violation(`${side} entry ${k}: Ok ${x.value} for an entry of ${posted} bytes`);
          } else {
            if (ring.failedAt < 0) { ring.failedAt = k; cqes.failures++; }
            noteError(x.error, 'poll');
            if (q.failure === undefined) violation(`${side} entry ${k} failed but the queue pair has not`);
          }
          const due = ring.lengths.length - ring.taken;
          if (q.room(side) !== 4095 - due) violation(`${side} room ${q.room(side)} with ${due} entries due`);
        }
      };
      for (let i = 0; i < options.cqes && violationCount === 0; i++) {
        const [a, b] = pairs[r() % pairs.length]!;
        // Traffic both ways, a few entries at a time.
        for (const [from, to] of [[a, b], [b, a]] as const) {
          if (from.room('send') > 8 && to.room('receive') > 8) {
            const n = r() % 5000;
            to.receive(region, 500_000, 8192);
            rings.get(to)!.receive.lengths.push(8192);
            from.send(region, r() % 400_000, n);
            rings.get(from)!.send.lengths.push(n);
          }
        }
        // A CQE of random words, often shaped like one the ring takes (type, index, status).
        const victim = r() % 2 === 0 ? a : b;
        const cq = r() % 2 === 0 ? hwOf(victim).scq : hwOf(victim).rcq;
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
        try {
          device.emu.engine.injectCqe(cq.id, w);
        } catch (e) {
          violation(`injectCqe threw: ${(e as Error).message}`);
        }
        cqes.injected++;
        device.clock.sleep(20);
        for (const q of [a, b]) { take(q, 'send'); take(q, 'receive'); }
        // A failed pair is destroyed (the NIC may run it on until then) and made again.
        if (a.failure !== undefined || b.failure !== undefined || r() % 50 === 0) {
          for (const q of [a, b]) {
            const d = q.destroy();
            if (!d.ok) violation(`destroy: ${d.error}`);
            rings.delete(q);
          }
          pairs = pairs.map((p) => (p[0] === a ? make() : p));
          cqes.rebuilds++;
        }
        if (options.progress && (i + 1) % 20_000 === 0) options.progress(`${i + 1} CQEs injected, ${cqes.failures} rings failed, ${cqes.rebuilds} rebuilds`);
      }
      checkModel(device, 'CQEs', violation);
    } catch (e) {
      violation(`the CQE fuzz threw: ${(e as Error).stack ?? String(e)}`);
    } finally {
      nic.close();
    }
  }
  if (violationCount > violations.length) violations.push(`... and ${violationCount - violations.length} more`);
  return { seed, bringUps, steps, cqes, errors, wallMs: performance.now() - started, violations };
}

/** The model met no internal error and no IOMMU fault. */
function checkModel(device: EmuDevice, where: string, violation: (text: string) => void): void {
  const engine = device.emu.engine.counters();
  const roce = device.emu.roce.stats();
  const faults = device.emu.model.iommuFaults();
  if (engine['internalErrors'] !== 0) violation(`${where}: ${engine['internalErrors']} internal errors in the engine: ${String(device.emu.engine.lastInternalError())}`);
  if (roce['internalErrors'] !== 0) violation(`${where}: ${roce['internalErrors']} internal errors in the RoCE firmware: ${String(device.emu.roce.lastInternalError())}`);
  if (faults !== 0) violation(`${where}: ${faults} IOMMU faults: the NIC was pointed outside the driver's memory`);
}
