/**
 * The software NIC's RoCE engine: the RC transport that runs queue pairs on a real RoCEv2
 * wire, modelled on Linux rxe's three state machines (requester.ts, responder.ts,
 * completer.ts), with the flusher (flush.ts), the CQE writer (cq-writer.ts) and the port
 * (port.ts, plugged into a cable from ../cable/). It reaches the host only through the bus
 * (../bus.ts) and the firmware only through its tables (../objects.ts RoceTables).
 *
 * How it runs: doorbell() only moves indexes (doorbells.ts). run() (at bus.nowNs), called by the model
 * with its clock (virtual in stepped mode), takes the frames that arrived meanwhile, fires due
 * timers, then makes passes until nothing moves: every requester sends what its window and
 * the port allow; the port delivers what came in (a loop cable's frames inside the same run,
 * a socket's from the receive queue), each frame going to the responder (requests) or the
 * completer (responses) of its QP; the responders send their coalesced ACKs and read
 * responses; QPs in ERR write their flush CQEs.
 *
 *   doorbell ─> indexes
 *   run(now) ─> arrived frames ─> timers ─> [ requesters ─> port.deliver ─> responder / completer
 *                                             ─> responder output ─> flush ] x passes
 */
import type { ModelBus } from '../bus.ts';
import { ok, type Result } from '../../../../firmware-hwrm/result.ts';
import { EmuQpState, type EmuQp, type EngineHooks, type RoceTables } from '../objects.ts';
import { OPCODE_FLAGS, OpFlag, ParseStatus, ROCEV2_SRC_PORT_BASE, parseReceived } from '../wire/index.ts';
import { EngineCore } from './core.ts';
import { Port, partitionKey } from './port.ts';
import { DoorbellWindow, handleDoorbell } from './doorbells.ts';
import { requesterStep } from './requester.ts';
import { responderOutput, responderReceive } from './responder.ts';
import { completerReceive, onAckTimeout, onRnrTimer } from './completer.ts';
import { enterError, flushStep } from './flush.ts';
import { restartAckTimer, stampAckTimers } from './timers.ts';
import { ReqState, RespState } from './states.ts';
import { QpTransport } from './transport.ts';
import { EngineHealth } from './health.ts';
import { engineControls, type EngineControls } from './engine-controls.ts';

const DOORBELL_PAGE_BYTES = 4096;
/** Passes of one run() before it yields (the worker calls again at once when there is more). */
const MAX_PASSES = 64;
/** Slots of the engine's dest-QP cache (a power of two). */
const QP_CACHE_SLOTS = 64;
const QP_CACHE_MASK = QP_CACHE_SLOTS - 1;
/** UDP source port per QP: the RoCEv2 source-port base | the QP number's low 14 bits. */
const SRC_PORT_QPN_MASK = 0x3fff;

/** Parse results that mean "an Ethernet frame, but not a RoCEv2 packet to this port" (1 = hand to L2). */
const L2_STATUSES = (() => {
  const a = new Uint8Array(64);
  for (const st of [ParseStatus.WRONG_DEST_MAC, ParseStatus.NOT_IPV4, ParseStatus.NOT_UDP, ParseStatus.NOT_ROCEV2_PORT])
    a[st] = 1;
  return a;
})();

export class RoceEngine implements EngineHooks {
  private readonly core: EngineCore;
  /** A pass limit or the port's room cut the last run short: run again now. */
  private busy = false;
  /** The low half of a doorbell written as two 32-bit stores (-1 when none is waiting). */
  private pendingLoOffset = -1;
  private pendingLo = 0;
  private turn = 0;
  private closed = false;
  /**
   * Doorbell pages start here in BAR2: the chip's RoCE doorbell offset for the L2 region its
   * FUNC_QCFG reports (P5 PF: DPI 0 at DB_PF_OFFSET_P5 0x10000; firmware-hwrm/chips.ts).
   */
  private readonly doorbellBase: number;
  /**
   * Where the NQ and CREQ doorbells go: the chip's NQ doorbell offset (P7: legacy_l2_db_size_kb x
   * 1024, not page aligned; P5: the same as DPI 0). Only NQ-type doorbells are taken there, and
   * none on the DPI pages unless the two coincide (doorbells.ts DoorbellWindow).
   */
  private readonly nqDoorbellBase: number;
  /** Broken invariants caught in a counting model, and the hook that breaks one on purpose. */
  private readonly health = new EngineHealth();
  /**
   * The transports frames went to, by the low bits of their dest QP number: a frame's QP found
   * without the firmware's map. A hit counts only for the same QP number, alive and not destroyed
   * (a destroyed QP leaves the firmware's table; a new QP of its number gets a new transport).
   */
  private readonly qpCache: (QpTransport | null)[] = new Array<QpTransport | null>(QP_CACHE_SLOTS).fill(null);

  constructor(private readonly bus: ModelBus) {
    this.doorbellBase = bus.chip.dpiDoorbellOffset(bus.chip.model.legacyL2DbSizeKb);
    this.nqDoorbellBase = bus.chip.nqDoorbellOffset(bus.chip.model.legacyL2DbSizeKb);
    const core = new EngineCore(bus);
    this.core = core;
    core.port = new Port(
      bus.config,
      bus.random,
      () => core.nowNs,
      core.counters,
      this.onFrame,
      () => bus.externalWork(),
      bus.config.mode === 'stepped',
      (o) => bus.plugCable(o),
    );
    core.port.heartbeat = bus.heartbeat;
    this.controls = engineControls(core, this.health);
  }

  /** The firmware's object tables this engine runs (unit tests attach their own instead). */
  attach(tables: RoceTables): void {
    this.core.tables = tables;
    this.qpCache.fill(null);
  }

  /** A write into BAR2 at `offset`: a 64-bit doorbell, or one 32-bit half of one (low word first). */
  doorbell(offset: number, lo: number, hi: number, is64: boolean): void {
    if (this.closed) return;
    let at = offset;
    let low = lo;
    let high = hi;
    if (!is64) {
      if ((offset & 7) === 0) {
        this.pendingLoOffset = offset;
        this.pendingLo = lo;
        return;
      }
      if (this.pendingLoOffset !== offset - 4) {
        this.core.counters.doorbellsRejected++;
        return;
      }
      at = offset - 4;
      low = this.pendingLo;
      high = lo;
      this.pendingLoOffset = -1;
    }
    // QP and CQ doorbells go to offset 0 of a doorbell page (push WQEs, at other offsets, are not
    // offered); NQ and CREQ doorbells to the NQ doorbell offset. Anywhere else is refused.
    const nq = at === this.nqDoorbellBase;
    const dpi = at >= this.doorbellBase && at % DOORBELL_PAGE_BYTES === 0;
    if (!nq && !dpi) {
      this.core.counters.doorbellsRejected++;
      return;
    }
    const window = nq ? (dpi ? DoorbellWindow.ANY : DoorbellWindow.NQ) : DoorbellWindow.DPI;
    try {
      handleDoorbell(this.core, low >>> 0, high >>> 0, window);
    } catch (e) {
      this.internalError(e);
    }
  }

  /**
   * Does the engine's due work at the run's time (bus.nowNs, a field: a double argument would
   * be a heap number at each call); true if anything happened.
   */
  run(): boolean {
    if (this.closed) return false;
    const core = this.core;
    const port = core.port;
    const nowNs = this.bus.nowNs;
    core.nowNs = nowNs;
    let worked = false;
    port.runNs = nowNs;
    port.beginRun();
    try {
      if (this.health.breakNextRun !== undefined) this.breakInvariantNow();
      // Frames that came in while the engine was not running go first: an ACK that arrived
      // before its deadline must not lose to the timer it stops.
      if (port.deliver() > 0) worked = true;
      if (this.sendResponses()) worked = true;
      if (nowNs >= core.timerDeadlineNs && this.fireTimers()) worked = true;
      let pass = 0;
      for (; pass < MAX_PASSES; pass++) {
        let progress = false;
        const live = core.live;
        const n = live.length;
        for (let i = 0; i < n; i++) if (requesterStep(core, live[(i + this.turn) % n]!) > 0) progress = true;
        this.turn = n > 0 ? (this.turn + 1) % n : 0;
        if (port.deliver() > 0) progress = true;
        if (this.sendResponses()) progress = true;
        for (let i = 0; i < live.length; i++) {
          const t = live[i]!;
          if (t.flushPending && flushStep(core, t)) progress = true;
        }
        if (!progress) break;
        worked = true;
      }
      // More to do at once: passes ran out, responses wait for room, a socket's frame budget ran out.
      this.busy = pass === MAX_PASSES || core.outputCount > 0 || port.exhausted();
    } catch (e) {
      this.internalError(e);
    } finally {
      stampAckTimers(core);
      port.endRun();
    }
    return worked;
  }

  /** Earliest time the engine has something to do without a new doorbell or frame. */
  nextDeadlineNs(): number {
    const core = this.core;
    if (this.busy || core.port.pending()) return core.nowNs;
    const release = core.port.nextReleaseNs();
    return release < core.timerDeadlineNs ? release : core.timerDeadlineNs;
  }

  /** Takes the frames that are not RoCEv2 for this port (bnxt_en's receive path, drivers/emu/model/l2/). */
  onL2Frame: ((frame: Uint8Array, length: number) => void) | undefined;
  /**
   * RoCE frames for the port reach the QPs: the function has an L2 receive filter for its MAC on a
   * VNIC in a RoCE mode. Set by the HWRM firmware as that changes (firmware/hwrm-l2.ts
   * roceReceivePath); until then every RoCE frame is dropped (dropNoL2Filter).
   */
  roceReceivePath = false;

  /** Sends an L2 frame (bnxt_en's TX rings, drivers/emu/model/l2/) out of the port, as it is. */
  sendL2Frame(frame: Uint8Array, length: number): void {
    this.core.port.cable.send(frame, length);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.core.port.close();
  }

  /** The socket a sleeping worker polls for this NIC's frames, or -1 (Port.pollFd). */
  cablePollFd(): number {
    return this.core.port.pollFd;
  }

  /** Lets the event loop read that socket too, calling `onArrival` after each frame it keeps (UdpSocketCable.watch). */
  watchCable(onArrival: () => void): void {
    this.core.port.udpSocket?.watch(onArrival);
  }

  /** Settles once the port's cable can carry frames, or with why it cannot (a socket's bind). */
  cableReady(): Promise<Result<void>> {
    return this.core.port.ready ?? Promise.resolve(ok(undefined));
  }

  // ---- EngineHooks: what the firmware tells the engine -------------------------------

  /** MODIFY_QP changed `qp`'s state (qp.state is the new one). */
  qpStateChanged(qp: EmuQp, from: EmuQpState): void {
    if (qp.service !== 'rc') return; // QP1 has no RC transport
    const t = this.core.transportOf(qp);
    if (!t) return;
    const to = qp.state;
    switch (to) {
      case EmuQpState.RESET:
        t.reset();
        break;
      case EmuQpState.INIT:
        if (from === EmuQpState.RESET) t.reset();
        break;
      case EmuQpState.RTR:
        this.refreshPath(t);
        if (t.respState === RespState.OFF) {
          t.ePsn = qp.rqPsn & 0xffffff;
          t.msn = 0;
          t.setRespState(RespState.READY);
        }
        break;
      case EmuQpState.RTS:
        this.refreshPath(t);
        if (t.respState === RespState.OFF) {
          t.ePsn = qp.rqPsn & 0xffffff;
          t.setRespState(RespState.READY);
        }
        if (from === EmuQpState.RTR) {
          // The requester starts at sq_psn (the initial PSN is the QP's SQ PSN).
          const psn = qp.sqPsn & 0xffffff;
          t.nextNewPsn = t.txPsn = t.ackPsn = t.sentHighPsn = psn;
          t.retryLeft = qp.retryCnt & 7;
          t.rnrLeft = qp.rnrRetry & 7;
        }
        if (t.reqState === ReqState.OFF) t.setReqState(ReqState.READY);
        restartAckTimer(this.core, t);
        break;
      case EmuQpState.SQD:
        // Send queue drain: the requester starts no new WQE (requester.ts); what is in flight completes.
        break;
      case EmuQpState.ERR:
      case EmuQpState.SQE:
        // The driver's (or the firmware's) decision: it knows; no notification.
        enterError(this.core, t, 0, 0, false);
        break;
    }
  }

  /** DESTROY_QP: nothing more for this QP, no frame, no DMA (its timers and queued work go). */
  qpDestroyed(qp: EmuQp): void {
    const t = qp.transport;
    if (!(t instanceof QpTransport) || t.dead) return;
    t.dead = true;
    t.ackDeadlineNs = t.rnrDeadlineNs = Infinity;
    t.flushPending = false;
    t.pendingAck = t.pendingNak = false;
    t.outHead = t.outTail;
    this.core.forget(t);
    t.releaseSlots();
  }

  // ---- internals ----------------------------------------------------------------------

  /** The path attributes frames are built from (after RTR; MODIFY_QP may change them). */
  private refreshPath(t: QpTransport): void {
    const qp = t.qp;
    const cap = this.core.port.mtuCap;
    t.mtu = qp.pathMtuBytes < cap ? qp.pathMtuBytes : cap;
    // RoCEv2 over IPv4: the destination GID is IPv4-mapped (::ffff:a.b.c.d).
    const g = qp.destGid;
    t.dstIp = ((g[12]! << 24) | (g[13]! << 16) | (g[14]! << 8) | g[15]!) >>> 0;
    t.udpSrcPort = ROCEV2_SRC_PORT_BASE | (qp.qpn & SRC_PORT_QPN_MASK);
  }

  /** A frame from the port: parsed, then to the responder (requests) or completer (responses) of its QP. */
  private readonly onFrame = (frame: Uint8Array, length: number): void => {
    const core = this.core;
    const port = core.port;
    const f = port.rxf;
    const trusted = port.rxTrusted;
    port.rxTrusted = false;
    const status = parseReceived(frame, length, f, this.bus.config.mac, trusted);
    if (status !== ParseStatus.OK) {
      // Not a RoCEv2 packet for this port (ARP, ICMP, other UDP, another MAC): the L2 side's, if any.
      // Never a frame whose ICRC the port left out (its own RoCE frame to its own MAC, port.ts
      // icrcDeferred): no L2 status can be such a frame's.
      if (this.onL2Frame !== undefined && L2_STATUSES[status] === 1) return this.onL2Frame(frame, length);
      core.counters.parseDrops[status]++;
      return;
    }
    if (trusted) core.counters.icrcTrusted++;
    if (!this.roceReceivePath) {
      core.counters.dropNoL2Filter++;
      return;
    }
    const qpn = f.destQp;
    let t = this.qpCache[qpn & QP_CACHE_MASK]!;
    if (t === null || t.qp.qpn !== qpn || t.dead || t.qp.destroyed) {
      const qp = core.tables.qp(qpn);
      if (qp?.service === 'gsi' && !qp.destroyed) {
        core.counters.dropGsi++;
        return;
      }
      const found = qp && !qp.destroyed ? core.transportOf(qp) : undefined;
      if (!qp || !found) {
        core.counters.dropUnknownQp++;
        return;
      }
      t = found;
      this.qpCache[qpn & QP_CACHE_MASK] = t;
    }
    const qp = t.qp;
    // The P_Key must name the QP's partition (the low 15 bits; IBA 10.9, partitions).
    if (((f.pkey ^ partitionKey(qp.pkey)) & 0x7fff) !== 0) {
      core.counters.dropBadPkey++;
      return;
    }
    // A connected QP takes packets only from its peer's address, sent to this port's (as rxe's
    // check_addr does): nobody else speaks for the peer. Before RTR it has no peer and takes none.
    if (t.respState !== RespState.OFF && (f.srcIp !== t.dstIp || f.dstIp !== core.port.ip)) {
      core.counters.dropBadAddress++;
      return;
    }
    try {
      if ((OPCODE_FLAGS[f.opcode]! & OpFlag.REQUEST) !== 0) responderReceive(core, t, frame);
      else completerReceive(core, t, frame);
    } catch (e) {
      this.internalError(e);
    }
  };

  /** Sends the responses of every scheduled responder; true if any went out. */
  private sendResponses(): boolean {
    const core = this.core;
    const list = core.outputList;
    const count = core.outputCount;
    if (count === 0) return false;
    core.outputList = core.spareOutputList;
    core.outputCount = 0;
    let sent = false;
    for (let i = 0; i < count; i++) {
      const t = list[i]!;
      list[i] = null;
      t.outputScheduled = false;
      if (t.dead) continue;
      if (responderOutput(core, t)) sent = true;
      // Responses the port had no room for wait for the next pass.
      if (t.respState === RespState.READY && (t.outHead !== t.outTail || t.pendingAck || t.pendingNak))
        core.scheduleOutput(t);
    }
    core.spareOutputList = list;
    return sent;
  }

  private fireTimers(): boolean {
    const core = this.core;
    const now = core.nowNs;
    const live = core.live;
    let fired = false;
    let earliest = Infinity;
    for (let i = 0; i < live.length; i++) {
      const t = live[i]!;
      if (t.ackDeadlineNs <= now) {
        onAckTimeout(core, t);
        fired = true;
      }
      if (t.rnrDeadlineNs <= now) {
        onRnrTimer(t);
        fired = true;
      }
      if (t.ackDeadlineNs < earliest) earliest = t.ackDeadlineNs;
      if (t.rnrDeadlineNs < earliest) earliest = t.rnrDeadlineNs;
    }
    core.timerDeadlineNs = earliest;
    return fired;
  }

  private breakInvariantNow(): never {
    const why = this.health.breakNextRun;
    this.health.breakNextRun = undefined;
    throw new Error(`broken on purpose (engine.breakInvariant): ${why}`);
  }

  /** A broken invariant: a strict model throws (bus), a counting one counts it and goes on. */
  private internalError(e: unknown): void {
    this.bus.internalError('engine', e);
    this.health.record(e);
  }

  /** Test and diagnostic controls (emu.engine.NAME; carried to a worker by name: drivers/emu/host/control.ts). */
  readonly controls: EngineControls;
}
