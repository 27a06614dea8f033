/**
 * What the engine's parts share: the bus (IOMMU, driver notification), the firmware's
 * tables, the port, the clock, the
 * counters and the list of live transports. The requester, responder, completer, flusher
 * and timers are functions over (core, transport); this object is their whole world.
 */
import type { ModelBus } from '../bus.ts';
import type { Iommu } from '../iommu.ts';
import { NO_TABLES, type EmuQp, type RoceTables } from '../objects.ts';
import { EngineCounters } from './counters.ts';
import { QpTransport } from './transport.ts';
import type { Port } from './port.ts';

export class EngineCore {
  readonly counters = new EngineCounters();
  readonly iommu: Iommu;
  nowNs = 0;
  /** Every transport whose QP is not destroyed, in creation order. */
  readonly live: QpTransport[] = [];
  /**
   * Transports with responses (ACK, NAK, read responses) waiting to be sent: the first
   * outputCount entries. Two lists swapped and reused by count, never emptied by `length = 0`,
   * which frees the backing store (and the next push allocates one again).
   */
  outputList: (QpTransport | null)[] = [];
  outputCount = 0;
  spareOutputList: (QpTransport | null)[] = [];
  /** CQ ids armed with CQ_ARMSE (notify on solicited or error CQEs only). */
  readonly armedSolicitedOnly = new Set<number>();
  /** Earliest ACK/RNR timer among live transports; may be early (costs one look), never late. */
  timerDeadlineNs = Infinity;
  /** ACK timers started and not yet stamped with their start time (timers.ts stampAckTimers). */
  ackTimersStarting = 0;
  /** The firmware's object tables (attached after both exist; a unit test may attach its own). */
  tables: RoceTables = NO_TABLES;
  port!: Port;
  /**
   * The driver that reads this NIC's completions runs in another thread (the worker mode, the
   * vfio-user server's guest): a CQE's toggle word is published with a release store
   * (cq-writer.ts publishCqe). Inline and stepped models run inside the driver's own calls, in
   * its thread (config.ts mode; drivers/emu/host/open.ts starts a worker only for 'thread').
   */
  readonly driverElsewhere: boolean;

  constructor(readonly bus: ModelBus) {
    this.iommu = bus.iommu;
    this.driverElsewhere = bus.config.mode === 'thread';
  }

  /** The QP's transport, made on first sight. Undefined for a destroyed QP. */
  transportOf(qp: EmuQp): QpTransport | undefined {
    const t = qp.transport;
    if (t instanceof QpTransport) return t.dead ? undefined : t;
    if (qp.destroyed) return undefined;
    const made = new QpTransport(qp);
    made.listIndex = this.live.length;
    this.live.push(made);
    qp.transport = made;
    return made;
  }

  /** Removes a transport from the live list (its QP was destroyed). */
  forget(t: QpTransport): void {
    const i = t.listIndex;
    if (i < 0) return;
    const last = this.live.pop()!;
    if (last !== t) {
      this.live[i] = last;
      last.listIndex = i;
    }
    t.listIndex = -1;
  }

  /** Every host write for a QP passes here: none is made for a destroyed QP. */
  mayWrite(t: QpTransport): boolean {
    if (t.dead || t.qp.destroyed) {
      this.counters.dmaWritesAfterDestroy++;
      return false;
    }
    return true;
  }

  /** The responder of `t` has something to send at the end of this batch. */
  scheduleOutput(t: QpTransport): void {
    if (t.outputScheduled) return;
    t.outputScheduled = true;
    this.outputList[this.outputCount++] = t;
  }

  armTimer(deadlineNs: number): void {
    if (deadlineNs < this.timerDeadlineNs) this.timerDeadlineNs = deadlineNs;
  }
}
