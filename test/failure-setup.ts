/**
 * What the failure tests (issue 5) share: stepped software NICs, one or two cabled to each
 * other on one virtual clock, connected queue pairs, the driver's view of a queue pair
 * (its CQ ids and ring memory, for the model's fault hooks and DMA checks), taking every
 * completion of a ring, and the firmware requests sent so far.
 */
import { Nic, Qp, Region, type NicOptions, type Result } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuControls, EmuDevice } from '../drivers/emu/host/device.ts';
import type { EngineCounterReport, TransportReport } from '../drivers/emu/model/engine/engine-controls.ts';
import type { BnxtQp } from '../lib/bnxt/queue-pair.ts';
import type { DmaBuffer } from '../drivers/device.ts';
import { driverQpOf } from '../lib/qp.ts';
import type { Test } from 'tap';
import { fillPattern, firstDifference, must } from './helpers/qp-data.ts';
import { connectedPair } from '../scripts/stress/pairs.ts';

export { connectedPair, must };

let pairs = 0;

/** A stepped software NIC cabled to itself. */
export function openNic(options: NicOptions = {}): Nic {
  return must(Nic.open('emu', { stepped: true, firmwareTimeoutMs: 50, ...options }), 'Nic.open');
}

/** Two stepped software NICs cabled to each other, on one virtual clock. */
export function openTwoNics(seed = 1, options: NicOptions = {}): [Nic, Nic] {
  const pair = `failure-${process.pid}-${pairs++}`;
  const a = must(Nic.open('emu', { stepped: true, firmwareTimeoutMs: 50, seed, pair, ...options }), 'Nic.open A');
  const b = must(
    Nic.open('emu', { stepped: true, firmwareTimeoutMs: 50, seed: seed + 1, pair, ...options }), 'Nic.open B',
  );
  return [a, b];
}

export function region(nic: Nic, bytes: number): Region {
  return must(Region.alloc(nic, bytes), 'Region.alloc');
}

export function emuOf(nic: Nic): EmuDevice {
  return nicInternals(nic).device as EmuDevice;
}

/** The controls of the NIC's model, after every write queued so far (a stepped model runs them first). */
export function controls(nic: Nic): EmuControls {
  const d = emuOf(nic);
  d.clock.relax();
  return d.emu;
}

export function counters(nic: Nic): EngineCounterReport {
  return controls(nic).engine.counters();
}

/** The engine's transport state of QP `qpn`, after every queued write; throws if it runs no such QP. */
export function transport(nic: Nic, qpn: number): TransportReport {
  const report = controls(nic).engine.qp(qpn);
  if (!report) throw new Error(`the engine runs no QP ${qpn}`);
  return report;
}

/** Lets `us` microseconds of virtual time pass (the models run meanwhile; both, for a cabled pair). */
export function pass(nic: Nic, us: number): void {
  const clock = emuOf(nic).clock;
  const until = clock.nowNs() + us * 1000;
  while (clock.nowNs() < until) clock.sleep((until - clock.nowNs()) / 1000);
}

/** The driver's queue pair under the public one (its CQs and rings, for fault hooks and DMA checks). */
export function hw(qp: Qp): BnxtQp {
  return driverQpOf(qp);
}

/** Every DMA buffer of a queue pair's rings and CQs: where the NIC writes for it. */
export function ringMemory(qp: Qp): DmaBuffer[] {
  return hw(qp).memory;
}

/** The completions of `side` that are there now, oldest first, as poll returns them (stops at None). */
export function pollAll(qp: Qp, side: 'send' | 'receive', limit = 10_000): Result<number>[] {
  const out: Result<number>[] = [];
  for (let i = 0; i < limit; i++) {
    const r = qp.poll(side);
    if (r === undefined) break;
    out.push(r);
  }
  return out;
}

/** `n` completions of `side`, waiting for each at most `us` of virtual time; undefined where one did not come. */
export function waitAll(qp: Qp, side: 'send' | 'receive', n: number, us = 5_000_000): (Result<number> | undefined)[] {
  const out: (Result<number> | undefined)[] = [];
  for (let i = 0; i < n; i++) out.push(qp.wait(side, us));
  return out;
}

export function okBytes(n: number): Result<number> {
  return { ok: true, value: n };
}

export function error(message: string): Result<number> {
  return { ok: false, error: message };
}

/** Firmware requests sent so far (RoCE commands and HWRM), and the commands the model took. */
export function requestCount(nic: Nic): { roce: number; hwrm: number; taken: number } {
  const i = nicInternals(nic);
  return { roce: i.roce.rcfw.requests, hwrm: i.func.hwrm.requests, taken: emuOf(nic).emu.roce.seen() };
}

/** True if [a, a + la) and [b, b + lb) share a byte. */
export function overlaps(a: number, la: number, b: number, lb: number): boolean {
  return a < b + lb && b < a + la;
}

/** The seed of a seeded test: SEED from the environment, else `fallback`; printed with every assertion that uses it. */
export function seedFor(fallback: number): number {
  const env = process.env['SEED'];
  return env !== undefined && env !== '' ? Number(env) >>> 0 : fallback;
}

/**
 * One message of `n` pattern bytes (`seed`) from a's region to b's at offset 0: b's receive posted,
 * a's send, both completions within `us`, and b's bytes the same as a's. `label` names it.
 */
export function sendIntact(
  t: Test, [a, b]: [Qp, Qp], [ra, rb]: [Region, Region], n: number, seed: number, label: string, us = 1_000_000,
): void {
  fillPattern(ra.bytes, 0, n, seed);
  b.receive(rb, 0, n);
  a.send(ra, 0, n);
  t.same(b.wait('receive', us), okBytes(n), `${label} received`);
  t.same(a.wait('send', us), okBytes(n), `${label} sent`);
  t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, n), -1, `${label} intact`);
}

/** BTH opcode of RC SEND ONLY (IBA 9.2), at byte 42 of a RoCEv2 frame (after Ethernet, IPv4, UDP). */
const RC_SEND_ONLY = 0x04;
const BTH_OPCODE_AT = 42;

/**
 * Sends one `n`-byte message a -> b on `nic` with a transmit hook recording the frames, and
 * returns a copy of the SEND ONLY frame it sent (for a test to hand in again, whole or changed).
 */
export function sendOnlyFrame(
  t: Test, nic: Nic, [a, b]: [Qp, Qp], [ra, rb]: [Region, Region], n: number,
): Uint8Array {
  const sent: Uint8Array[] = [];
  controls(nic).engine.onTransmit((f, length) => { sent.push(f.slice(0, length)); });
  try {
    b.receive(rb, 0, n);
    a.send(ra, 0, n);
    t.same(b.wait('receive', 1_000_000), okBytes(n), 'the recorded message was received');
    t.same(a.wait('send', 1_000_000), okBytes(n), 'the recorded message was sent');
  } finally {
    controls(nic).engine.onTransmit(undefined);
  }
  const frame = sent.find((f) => f[BTH_OPCODE_AT] === RC_SEND_ONLY);
  if (frame === undefined) throw new Error('no SEND ONLY was sent');
  return frame;
}
