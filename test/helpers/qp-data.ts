/**
 * Queue pairs on a software NIC for the data-path tests (issue 4): a NIC with two connected
 * queue pairs and a region each, the engine's counters, the firmware request counts, and
 * seeded byte patterns that are cheap to write and compare at any size.
 */
import { Nic, Qp, Region, type NicOptions } from '../../lib/index.ts';
import { must } from '../../scripts/stress/pairs.ts';
import { nicInternals } from '../../lib/nic.ts';
import type { EmuDevice } from '../../drivers/emu/host/device.ts';
import type { EngineCounterReport, TransportReport } from '../../drivers/emu/model/engine/engine-controls.ts';

export { must } from '../../scripts/stress/pairs.ts';
export { fillPattern, firstDifference } from '../../scripts/stress/pattern.ts';

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
