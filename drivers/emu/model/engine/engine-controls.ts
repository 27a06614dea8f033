/**
 * The engine's controls (emu.engine.NAME, carried to a worker by name: drivers/emu/host/control.ts):
 * its counters and transport reports for tests and traces, and the hooks tests use to make the
 * wire or the model misbehave (faults, injected frames and CQEs, a broken invariant). None of them
 * is on the data path: each is called by a test, a trace or a report.
 */
import { QpTransport } from './transport.ts';
import { writeRawCqe, writeUnknownCqe } from './cq-writer.ts';
import { REQ_STATE_NAMES, RESP_STATE_NAMES } from './states.ts';
import type { EngineCore } from './core.ts';
import type { EngineCounterSnapshot } from './counters.ts';
import type { EngineHealth } from './health.ts';
import type { FaultSpec } from '../cable/faults.ts';

/** The controls of the engine that owns `core` and `health`: its reports and its test hooks. */
export function engineControls(core: EngineCore, health: EngineHealth) {
  return { ...engineReports(core, health), ...engineTestHooks(core, health) };
}

/** What the engine reports: counters, a QP's transport state, what went wrong inside, the port and its capture. */
function engineReports(core: EngineCore, health: EngineHealth) {
  return {
    /** Every counter, drops by reason included (ParseStatus names: dropWRONG_DEST_MAC, dropBAD_ICRC...). */
    counters: (): EngineCounterReport => {
      const counted = core.counters.snapshot();
      const faults = core.port.cable;
      const local = core.port.local;
      const forged = local ? local.forged : 0;
      return {
        ...counted,
        faultTxDropped: faults.tx.dropped,
        faultRxDropped: faults.rx.dropped,
        faultDuplicated: faults.tx.duplicated + faults.rx.duplicated,
        faultReordered: faults.tx.reordered + faults.rx.reordered,
        faultCorrupted: faults.tx.corrupted + faults.rx.corrupted,
        faultDelayed: faults.tx.delayed + faults.rx.delayed,
        faultHoldOverflow: faults.holdOverflow,
        internalErrors: health.internalErrors,
        dropForgedSource: forged,
        framesToSelf: local ? local.delivered : 0,
        framesDropped: counted.framesDropped + forged,
      };
    },
    /** Host writes attempted for destroyed QPs (none is made; this must stay 0). */
    dmaWritesAfterDestroy: (): number => core.counters.dmaWritesAfterDestroy,
    /** A QP's transport state, for tests and traces. */
    qp: (qpn: number): TransportReport | undefined => {
      const qp = core.tables.qp(qpn);
      const t = qp?.transport;
      if (!(t instanceof QpTransport)) return undefined;
      return {
        requester: REQ_STATE_NAMES[t.reqState], responder: RESP_STATE_NAMES[t.respState], sqProducer: t.sqProducer,
        compWqe: t.compWqe, txWqe: t.txWqe, txPsn: t.txPsn, ackPsn: t.ackPsn, ePsn: t.ePsn, msn: t.msn,
        rqProducer: t.rqProducer, rqConsumer: t.rqConsumer, retryLeft: t.retryLeft, rnrLeft: t.rnrLeft,
        ackDeadlineNs: t.ackDeadlineNs, rnrDeadlineNs: t.rnrDeadlineNs, mtu: t.mtu,
      };
    },
    internalErrors: (): number => health.internalErrors,
    lastInternalError: (): string | undefined => health.lastInternalError,
    /** Why the port's cable failed (socket bind), if it did. */
    portError: (): string | undefined => core.port.error,
    /** The capture file, if the NIC records its frames: frames recorded so far, and why writing stopped, if it did. */
    capture: (): CaptureReport | undefined => {
      const tap = core.port.capture;
      if (!tap) return undefined;
      return { path: tap.path, framesWritten: tap.framesWritten, error: tap.error };
    },
  };
}

/** The hooks tests use to make the wire or the model misbehave (faults, injected frames and CQEs). */
function engineTestHooks(core: EngineCore, health: EngineHealth) {
  return {
    /** Writes a CQE of a type no driver takes into CQ `cqId`; false if it has no room or no such CQ. */
    injectUnknownCqe: (cqId: number): boolean => {
      const cq = core.tables.cq(cqId);
      return cq !== undefined && writeUnknownCqe(core, cq);
    },
    /** Random faults on frames sent ('tx'), received ('rx') or both, drawn from the model's seeded PRNG. */
    setFaults: (direction: 'tx' | 'rx' | 'both', spec: FaultSpec): void => {
      if (direction !== 'tx' && direction !== 'rx' && direction !== 'both')
        throw new RangeError(`fault direction ${String(direction)}`);
      core.port.cable.setFaults(direction, spec);
    },
    clearFaults: (): void => core.port.cable.clearFaults(),
    /** Drops the next `count` frames with BTH opcode `opcode` (and PSN `psn`, unless -1) in one direction. */
    dropFrames: (direction: 'tx' | 'rx', opcode: number, psn: number, count: number): void => {
      core.port.cable.dropMatching(direction, opcode, psn, count);
    },
    /** Hands `frame` to the port as if it had come off the wire (tests; replaying captures). */
    injectFrame: (frame: Uint8Array): void => {
      core.port.fromWire(frame, frame.length);
    },
    /**
     * Writes a CQE of the caller's 8 little-endian words into CQ `cqId` (the toggle bit is
     * the writer's): malformed completions for the driver. False if it has no room or no such CQ.
     */
    injectCqe: (cqId: number, words: readonly number[]): boolean => {
      if (!Array.isArray(words) || words.length !== 8 || !words.every((w) => Number.isInteger(w)))
        throw new RangeError('engine.injectCqe: words must be 8 integers');
      const cq = core.tables.cq(cqId);
      return cq !== undefined && writeRawCqe(core, cq, words);
    },
    /**
     * Test hook (stepped models only: a function does not cross to a worker): `fn` sees every
     * frame the port sends, before any fault; undefined removes it.
     */
    onTransmit: (fn: ((frame: Uint8Array, length: number) => void) | undefined): void => {
      if (fn !== undefined && typeof fn !== 'function') throw new RangeError('engine.onTransmit: not a function');
      core.port.onTransmit = fn;
    },
    /**
     * Test hook: the engine's next run meets a broken invariant (throws inside), as a bug in the
     * model would: a strict model stops and the driver's next call fails; a counting one counts it.
     */
    breakInvariant: (why: string): void => {
      if (typeof why !== 'string') throw new RangeError('engine.breakInvariant: why must be a string');
      health.breakNextRun = why;
    },
  };
}

export type EngineControls = ReturnType<typeof engineControls>;

/** engine.counters(): the engine's counters, the fault injector's, and the port's own-frame counts. */
export type EngineCounterReport = EngineCounterSnapshot & {
  readonly faultTxDropped: number;
  readonly faultRxDropped: number;
  readonly faultDuplicated: number;
  readonly faultReordered: number;
  readonly faultCorrupted: number;
  readonly faultDelayed: number;
  /** Frames the fault injector had to drop because all its hold slots were taken. */
  readonly faultHoldOverflow: number;
  /** Exceptions caught inside the engine (counting models; a strict model throws instead). */
  readonly internalErrors: number;
  /** Frames from the cable that claimed this port's own address (counted in framesDropped too). */
  readonly dropForgedSource: number;
  /** Frames the port delivered to itself without the cable. */
  readonly framesToSelf: number;
};

/** engine.capture(): the NIC's pcap file. */
export interface CaptureReport {
  readonly path: string;
  readonly framesWritten: number;
  readonly error: string | undefined;
}

/** engine.qp(qpn): a QP's transport state, for tests and traces. */
export interface TransportReport {
  readonly requester: string;
  readonly responder: string;
  readonly sqProducer: number;
  readonly compWqe: number;
  readonly txWqe: number;
  readonly txPsn: number;
  readonly ackPsn: number;
  readonly ePsn: number;
  readonly msn: number;
  readonly rqProducer: number;
  readonly rqConsumer: number;
  readonly retryLeft: number;
  readonly rnrLeft: number;
  readonly ackDeadlineNs: number;
  readonly rnrDeadlineNs: number;
  readonly mtu: number;
}
