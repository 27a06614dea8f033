/**
 * Queue pairs on a software NIC for the data-path tests (issue 4): a NIC with two connected
 * queue pairs and a region each, the engine's counters, the firmware request counts, and
 * seeded byte patterns that are cheap to write and compare at any size.
 */
import { Nic, Qp, Region, type NicOptions, type Result } from '../../lib/index.ts';
import { nicInternals } from '../../lib/nic.ts';
import type { EmuDevice } from '../../drivers/emu/host/device.ts';
import type { EngineCounterReport, TransportReport } from '../../drivers/emu/model/engine/engine.ts';

/** The value of an Ok result; throws with `what` and the message of an Error. */
export function must<T>(r: Result<T>, what: string): T {
  if (!r.ok) throw new Error(`${what}: ${r.error}`);
  return r.value;
}

export interface QpPair {
  readonly nic: Nic;
  /** Sends; connected to b. */
  readonly a: Qp;
  /** Receives; connected to a. */
  readonly b: Qp;
  /** a's region and b's region. */
  readonly ra: Region;
  readonly rb: Region;
}

/** A software NIC (stepped unless told otherwise) with queue pairs a <-> b and one region each. */
export function openPair(options: NicOptions = { stepped: true }, regionBytes = 1 << 20, pathMtu?: number): QpPair {
  const nic = must(Nic.open('emu', options), 'Nic.open');
  try {
    const a = must(Qp.make(nic), 'Qp.make a');
    const b = must(Qp.make(nic), 'Qp.make b');
    const ra = must(Region.alloc(nic, regionBytes), 'Region.alloc a');
    const rb = must(Region.alloc(nic, regionBytes), 'Region.alloc b');
    const connectOptions = pathMtu === undefined ? {} : { pathMtu };
    must(a.connect(b.endpoint, connectOptions), 'connect a');
    must(b.connect(a.endpoint, connectOptions), 'connect b');
    return { nic, a, b, ra, rb };
  } catch (e) {
    nic.close();
    throw e;
  }
}

/** The software NIC behind `nic`. */
export function emuOf(nic: Nic): EmuDevice {
  return nicInternals(nic).device as EmuDevice;
}

/**
 * The engine's counters once it took every write queued so far: a stepped model runs here
 * first; a worker takes the control call behind the earlier writes of the same queue.
 */
export function engineCounters(nic: Nic): EngineCounterReport {
  const d = emuOf(nic);
  d.clock.relax();
  return d.emu.engine.counters();
}

/** The engine's view of a queue pair (its producer and consumer indexes), after every queued write. */
export function engineQp(nic: Nic, qpn: number): TransportReport {
  const d = emuOf(nic);
  d.clock.relax();
  const report = d.emu.engine.qp(qpn);
  if (!report) throw new Error(`the engine runs no QP ${qpn}`);
  return report;
}

/** Requests sent to the firmware so far, RoCE (CMDQ) and HWRM. */
export function firmwareRequests(nic: Nic): { roce: number; hwrm: number } {
  const i = nicInternals(nic);
  return { roce: i.roce.rcfw.requests, hwrm: i.func.hwrm.requests };
}

/** Runs a stepped model (or lets a worker run) until `done()`, at most `limit` looks. */
export function settle(nic: Nic, done: () => boolean, limit = 100_000): boolean {
  const clock = emuOf(nic).clock;
  for (let i = 0; i < limit; i++) {
    if (done()) return true;
    clock.sleep(100);
  }
  return done();
}

/**
 * Writes a seeded pattern into bytes [at, at + n): word k of the area (little-endian, from
 * `at`) is a bijection of k, so no two words of one fill agree and a byte moved by any offset
 * shows; fills with other seeds are other sequences.
 */
export function fillPattern(bytes: Uint8Array, at: number, n: number, seed: number): void {
  const words = Math.floor(n / 4);
  if ((bytes.byteOffset + at) % 4 === 0 && words > 0) {
    // In slices, so the loop is optimised after the first few (a single call would run interpreted).
    const u = new Uint32Array(bytes.buffer, bytes.byteOffset + at, words);
    for (let from = 0; from < words; from += 1 << 16) fillWords(u, from, Math.min(words, from + (1 << 16)), seed);
  } else {
    for (let k = 0; k < words; k++) {
      const v = patternWord(k, seed);
      const p = at + k * 4;
      bytes[p] = v; bytes[p + 1] = v >>> 8; bytes[p + 2] = v >>> 16; bytes[p + 3] = v >>> 24;
    }
  }
  const tail = patternWord(words, seed);
  for (let i = words * 4; i < n; i++) bytes[at + i] = tail >>> ((i & 3) * 8);
}

function fillWords(u: Uint32Array, from: number, to: number, seed: number): void {
  for (let k = from; k < to; k++) u[k] = patternWord(k, seed);
}

function patternWord(k: number, seed: number): number {
  // A bijection of k (odd multiplier, then murmur3's finaliser), offset by the seed.
  let h = (Math.imul(k, 0x9e3779b1) + Math.imul(seed ^ 0x5bd1e995, 0x85ebca6b)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The first offset (from the areas' starts) where [a, a+n) of x and [b, b+n) of y differ, or -1. */
export function firstDifference(x: Uint8Array, a: number, y: Uint8Array, b: number, n: number): number {
  const chunk = 1 << 26;
  for (let done = 0; done < n; done += chunk) {
    const len = Math.min(chunk, n - done);
    const bx = Buffer.from(x.buffer, x.byteOffset + a + done, len);
    const by = Buffer.from(y.buffer, y.byteOffset + b + done, len);
    if (!bx.equals(by)) {
      for (let i = 0; i < len; i++) if (bx[i] !== by[i]) return done + i;
    }
  }
  return -1;
}
