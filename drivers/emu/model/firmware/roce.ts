/**
 * The software NIC's RoCE firmware: it takes RCFW commands from the CMDQ when the driver
 * writes the trigger register, runs them against its tables, and answers each with one
 * 16-byte entry on the CREQ (roce_hsi.h creq_base, creq_qp_event; Linux bnxt_re qplib_rcfw.c
 * bnxt_qplib_process_qp_event). It also writes the asynchronous
 * entries the engine asks for: QP error notifications on the CREQ, CQ notifications on NQs.
 *
 *   trigger (BAR0 0x700) ─> CmdqChannel.take ─> RoceFaults ─> runCommand ─> side buffer (DMA)
 *                                                                         └> CREQ entry (v last)
 *   NQ/NQ_ARM doorbell   ─> NotifyRing.doorbell (returns space; held answers go out)
 *
 * Nothing escapes trigger() or a doorbell in a counting model: a broken invariant inside it is
 * counted (stats.internalErrors) and the command is answered INTERNAL_ERROR, so the worker lives
 * on. A strict model (tests) throws instead, through the bus (../bus.ts).
 */
import { internalErrorText, type ModelBus } from '../bus.ts';
import {
  EmuQpState, type EmuCq, type EmuGid, type EmuMr, type EmuQp, type EngineHooks, type RoceTables,
} from '../objects.ts';
import {
  CMDQ_TRIGGER_VALUE, CmdqBase, CreqQpErrorNotification, CreqRespSbHeader, CreqEvent, CreqType, RoceStatus,
  NqType, roceOpcodeName, CREQ_ENTRY_BYTES, NQE_BYTES,
} from '../../../../firmware-hwrm/roce/index.ts';
import {
  CREQ_QP_EVENT_V_WORD, creqQpEventCookie, creqQpEventWord0, setCreqQpEventCookie, setCreqQpEventEvent,
  setCreqQpEventType, setCreqQpEventWord0, setCreqQpEventXid,
} from '../../../../firmware-hwrm/roce/creq.g.ts';
import {
  nqCnWord0, setNqCnCqHandleHigh, setNqCnCqHandleLow, setNqCnWord0,
} from '../../../../firmware-hwrm/roce/nqe.g.ts';
import { CmdqChannel, Take } from './roce-channel.ts';
import { NotifyRing } from './roce-notify-ring.ts';
import { RoceFaults, type RoceMalformKind, type RoceRandomFaults } from './roce-faults.ts';
import { RoceState } from './roce-tables.ts';
import { roceLimits, type RoceCeilings, type RoceLimits } from './roce-limits.ts';
import { firmwarePersonality, personalityOnChip } from './personality.ts';
import { refuse, type Answer, type RoceContext } from './roce-answer.ts';
import { runCommand } from './roce-commands.ts';
import { cmdqEvent, creqEvent } from '../../../../firmware-hwrm/trace.ts';
import type { FunctionResources, RoceOfFunction } from './function-resources.ts';

const ENTRY_BYTES = CREQ_ENTRY_BYTES;
const SB_UNIT_BYTES = 16;
/** sq/rq_cons_idx of a QP error notification when the caller knows none (as TERMINAL CQEs say "no information"). */
const NO_CONS_IDX = 0xffff;

export interface RoceResources {
  readonly initialized: boolean;
  readonly qps: number;
  readonly cqs: number;
  /** Memory keys allocated (registered or not). */
  readonly mrs: number;
  readonly gids: number;
}

export class RoceFirmware implements RoceTables, RoceOfFunction {
  private readonly state = new RoceState();
  private readonly faults: RoceFaults;
  private readonly channel: CmdqChannel;
  /** Writers of the NQ-type rings HWRM allocated (the CREQ and the CQ notification queues), by ring id. */
  private readonly rings = new Map<number, NotifyRing>();
  private readonly ctx: RoceContext;
  private readonly entry = new Uint8Array(ENTRY_BYTES);
  private readonly entryWords = new Uint32Array(this.entry.buffer);
  private readonly nqe = new Uint32Array(NQE_BYTES / 4);
  readonly stats = {
    /** Commands taken from the CMDQ. */
    commands: 0,
    /** Commands answered with a non-zero status. */
    refused: 0,
    /** Headers with cmd_size 0 or running past the producer. */
    malformed: 0,
    /** Commands taken and dropped while silenced. */
    silenced: 0,
    /** Exceptions inside the model (each answered INTERNAL_ERROR when a command was running). */
    internalErrors: 0,
    /** Triggers with commands pending but no usable CREQ to answer on (the commands wait). */
    noCreq: 0,
    /** Asynchronous entries (QP errors, CQ notifications) with no ring to go to, or dropped on a full one. */
    lostEvents: 0,
  };
  lastRefusal: string | undefined;
  lastInternalError: string | undefined;
  /** A test's RoCE ceilings in place of the chip's (controls.setCeilings). */
  private ceilings: Partial<RoceCeilings> = {};

  constructor(
    private readonly bus: ModelBus,
    /** What HWRM set up for the function: context memory, NQ rings, statistics contexts (read only here). */
    private readonly fn: Readonly<FunctionResources>,
    /** The engine, told of QP state changes and destroyed QPs. */
    hooks: EngineHooks,
  ) {
    this.faults = new RoceFaults(bus.random);
    this.channel = new CmdqChannel(bus.iommu);
    const channel = this.channel;
    this.ctx = {
      bus,
      fn,
      state: this.state,
      hooks,
      limits: (): RoceLimits => roceLimits(bus.chip, fn.backingStore, this.ceilings),
      firmware: personalityOnChip(firmwarePersonality(bus.config.firmware), bus.chip),
      // Variable-size WQEs where the kernel runs them (bnxt_re_set_drv_mode: P7 only).
      variableWqe: bus.chip.wqeMode === 'variable',
      get creqRingId(): number | undefined {
        return channel.open ? channel.creqRingId : undefined;
      },
    };
  }

  // ---- the register side -------------------------------------------------------------

  /** A write of the CMDQ trigger register (BAR0 0x700). */
  trigger(value: number): void {
    if (value !== CMDQ_TRIGGER_VALUE) return;
    try {
      this.channel.latch(this.bus.bar0Written);
      this.process();
    } catch (e) {
      this.internalError(e);
    }
  }

  /**
   * An NQ or NQ_ARM doorbell for the CREQ (xid = the mailbox's creq_ring_id): the driver's
   * consumer is at `index`, on a pass of parity `epoch`. Held answers go out if it made room.
   */
  creqDoorbell(index: number, epoch: number): void {
    if (this.channel.open) this.nqDoorbell(this.channel.creqRingId, index, epoch);
  }

  /** An NQ or NQ_ARM doorbell for any NQ-type ring (the CREQ included), by its ring id (the doorbell xid). */
  nqDoorbell(ringId: number, index: number, epoch: number): void {
    try {
      const ring = this.notifyRing(ringId);
      if (!ring) return;
      if (ring.doorbell(index, epoch) > 0) this.bus.notifyDriver();
      if (this.channel.open && ringId === this.channel.creqRingId) this.process();
    } catch (e) {
      this.internalError(e);
    }
  }

  /** The CREQ's ring id while the channel is open (the engine routes NQ doorbells with it). */
  get creqRingId(): number | undefined {
    return this.ctx.creqRingId;
  }

  /** HWRM_FUNC_RESET: every RoCE object, the channel and the initialized state are gone. */
  reset(): void {
    try {
      for (const { qp } of this.state.qps.values()) {
        qp.destroyed = true;
        this.ctx.hooks.qpDestroyed(qp);
      }
      for (const { cq } of this.state.cqs.values()) cq.destroyed = true;
    } catch (e) {
      this.internalError(e);
    }
    this.state.clear();
    this.rings.clear();
    this.channel.forget();
  }

  /**
   * True while RoCE names ring `ringId` (HWRM refuses to free it): the CREQ of an initialized
   * function, or a CQ's NQ.
   */
  usesRing(ringId: number): boolean {
    if (this.state.initialized && this.channel.open && ringId === this.channel.creqRingId) return true;
    for (const { cq } of this.state.cqs.values()) if (cq.nqId === ringId) return true;
    return false;
  }

  // ---- RoceTables: what the engine reads and asks for --------------------------------

  qp(qpn: number): EmuQp | undefined {
    return this.state.qps.get(qpn)?.qp;
  }

  cq(id: number): EmuCq | undefined {
    return this.state.cqs.get(id)?.cq;
  }

  mr(key: number): EmuMr | undefined {
    return this.state.keys.get(key)?.mr;
  }

  gid(index: number): EmuGid | undefined {
    return this.state.gids.get(index);
  }

  /**
   * A QP error notification (CREQ type 0x38, event 0xC0) for `qp`, which is in ERR from now
   * on. The engine is not called back: it is the one reporting.
   */
  postQpError(
    qp: EmuQp, reqErrStateReason: number, resErrStateReason: number, sqConsIdx = NO_CONS_IDX, rqConsIdx = NO_CONS_IDX,
  ): void {
    try {
      if (qp.destroyed) return;
      qp.state = EmuQpState.ERR;
      const creq = this.channel.open ? this.notifyRing(this.channel.creqRingId) : undefined;
      if (!creq) {
        this.stats.lostEvents++;
        return;
      }
      CreqQpErrorNotification.encode({
        type: CreqType.QP_EVENT, status: 0, req_err_state_reason: reqErrStateReason & 0xff, xid: qp.qpn,
        event: CreqEvent.QP_ERROR_NOTIFICATION, res_err_state_reason: resErrStateReason & 0xff,
        sq_cons_idx: sqConsIdx & 0xffff, rq_cons_idx: rqConsIdx & 0xffff,
      }, this.entry, 0);
      this.postEntry(creq);
    } catch (e) {
      this.internalError(e);
    }
  }

  /** A CQ notification (NQE type 0x30 with the cq_handle) on the CQ's NQ, if the CQ is armed; disarms it. */
  postCqNotification(cq: EmuCq): void {
    if (!cq.armed || cq.destroyed) return;
    const entry = this.state.cqs.get(cq.id);
    if (!entry || entry.cq !== cq) return;
    const nq = this.notifyRing(cq.nqId);
    cq.armed = false;
    const w = this.nqe;
    w.fill(0);
    setNqCnWord0(w, 0, nqCnWord0(NqType.CQ_NOTIFICATION, 0)); // toggle 0: P5 has none
    setNqCnCqHandleLow(w, 0, cq.handleLo);
    setNqCnCqHandleHigh(w, 0, cq.handleHi);
    if (!nq || !nq.post(w[0]!, w[1]!, w[2]!, w[3]!)) {
      this.stats.lostEvents++;
      return;
    }
    entry.cnqEvents++;
    this.bus.notifyDriver();
  }

  // ---- the command loop --------------------------------------------------------------

  /** Runs commands while the CREQ has room for their answers. */
  private process(): void {
    const ch = this.channel;
    if (!ch.open) return;
    const creq = this.notifyRing(ch.creqRingId);
    if (!creq) {
      this.stats.noCreq++;
      return;
    }
    for (let budget = ch.depth; budget > 0 && creq.hasRoom(); budget--) {
      const took = ch.take();
      if (took === Take.Empty) return;
      this.stats.commands++;
      const fate = this.faults.next(ch.opcode);
      if (fate.silent) {
        this.stats.silenced++;
        continue;
      }
      const cmd = ch.scratch.subarray(0, ch.length);
      this.bus.trace?.write(cmdqEvent(cmd, ch.encapsulated));
      let answer: Answer;
      if (took === Take.Malformed) {
        this.stats.malformed++;
        answer = refuse(RoceStatus.INVALID_CMD, `cmd_size ${cmd[1]} runs past the producer or is 0`);
      } else if (fate.refuse !== 0) {
        answer = refuse(fate.refuse, 'refused by a fault control');
      } else {
        try {
          answer = runCommand(this.ctx, ch.opcode, cmd);
        } catch (e) {
          this.internalError(e);
          answer = refuse(RoceStatus.INTERNAL_ERROR, `internal error: ${String(e)}`);
        }
      }
      this.answer(creq, ch.opcode, ch.cookie, answer, cmd, fate.malform);
    }
  }

  /** Writes the side buffer (if any), then the CREQ entry. */
  private answer(
    creq: NotifyRing, opcode: number, cookie: number, answer: Answer, cmd: Uint8Array, malform?: RoceMalformKind,
  ): void {
    const e = this.entry;
    e.fill(0);
    let status = answer.status;
    let why = answer.why;
    if (status === RoceStatus.SUCCESS && answer.entry) e.set(answer.entry.subarray(0, ENTRY_BYTES));
    if (status === RoceStatus.SUCCESS && answer.sideBuffer) {
      const units = this.writeSideBuffer(opcode, cookie, cmd, answer.sideBuffer);
      if (units === undefined) {
        status = RoceStatus.INVALID_PARAMETER;
        why = 'the side buffer (resp_addr, resp_size) is not mapped host memory';
      } else {
        setCreqQpEventXid(this.entryWords, 0, units); // creq_query_*_resp.size shares the xid word
      }
    }
    if (status !== RoceStatus.SUCCESS) {
      e.fill(0);
      this.stats.refused++;
      this.lastRefusal = `${roceOpcodeName(opcode)} (cookie ${cookie}): ${why ?? 'refused'}`;
    }
    const w = this.entryWords;
    setCreqQpEventWord0(w, 0, creqQpEventWord0(CreqType.QP_EVENT, status, cookie & 0xffff));
    setCreqQpEventEvent(w, 0, opcode);
    if (malform !== undefined) this.malform(malform, opcode);
    const success = status === RoceStatus.SUCCESS;
    this.postEntry(creq, success ? answer.sideBuffer : undefined, success ? undefined : why);
  }

  /** Fault hook: spoils the answer in `entry` (its valid bit stays the ring's to set). */
  private malform(kind: RoceMalformKind, opcode: number): void {
    const e = this.entry;
    const w = this.entryWords;
    const f = this.faults;
    switch (kind) {
      // Another command's opcode (0x01..0x3f).
      case 'opcode': setCreqQpEventEvent(w, 0, ((opcode + (f.draw() % 0x3e)) % 0x3f) + 1); break;
      case 'cookie': setCreqQpEventCookie(w, 0, creqQpEventCookie(w, 0) ^ (1 + (f.draw() & 0xfe))); break;
      case 'type': setCreqQpEventType(w, 0, (CreqType.QP_EVENT + 1 + (f.draw() % 0x3e)) & 0x3f); break;
      case 'xid': setCreqQpEventXid(w, 0, f.draw()); break;
      case 'bytes':
        // Every byte but the valid byte's (the ring sets v).
        for (let i = 0; i < ENTRY_BYTES; i++) if (i !== CREQ_QP_EVENT_V_WORD * 4) e[i] = f.draw() & 0xff;
        break;
    }
  }

  /**
   * Writes `sb` (its 8-byte header filled here) at the command's resp_addr, cut to resp_size
   * units. Returns the units written, or undefined if the buffer is not mapped.
   */
  private writeSideBuffer(opcode: number, cookie: number, cmd: Uint8Array, sb: Uint8Array): number | undefined {
    const hdr = CmdqBase.decode(cmd);
    const bytes = Math.min(hdr.resp_size * SB_UNIT_BYTES, sb.length);
    if (bytes < CreqRespSbHeader.size || !this.bus.iommu.check(hdr.resp_addr, bytes)) return undefined;
    const units = Math.ceil(bytes / SB_UNIT_BYTES);
    CreqRespSbHeader.encode({ opcode, status: 0, cookie, flags: 0, resp_size: units }, sb, 0);
    this.bus.iommu.writeFrom(hdr.resp_addr, sb, 0, bytes);
    return units;
  }

  private postEntry(ring: NotifyRing, side?: Uint8Array, why?: string): void {
    const w = this.entryWords;
    const posted = ring.post(w[0]!, w[1]!, w[2]!, w[3]!);
    if (!posted) this.stats.lostEvents++;
    else this.bus.trace?.write(creqEvent(this.entry, side, why));
    this.bus.notifyDriver();
  }

  /** The writer of NQ-type ring `id`, opened (or reopened after HWRM re-allocated it) on use. */
  private notifyRing(id: number): NotifyRing | undefined {
    const desc = this.fn.rings.get(id);
    const known = this.rings.get(id);
    if (!desc) {
      if (known) this.rings.delete(id);
      return undefined;
    }
    if (known && known.desc === desc) return known;
    const opened = NotifyRing.open(this.bus.iommu, desc);
    if (opened) this.rings.set(id, opened);
    else this.rings.delete(id);
    return opened;
  }

  /** A broken invariant: a strict model throws (bus), a counting one counts it and goes on. */
  private internalError(e: unknown): void {
    this.bus.internalError('roce firmware', e);
    this.stats.internalErrors++;
    this.lastInternalError = internalErrorText(e);
  }

  // ---- test and fault controls (emu.roce.NAME; by name to a worker: ../control.ts) ---

  readonly controls = {
    /** Refuse the command `n` commands from now (1 = the next) with CREQ status `status`. */
    refuseNth: (n: number, status: number) => this.faults.refuseNth(n, status),
    /** Refuse every command with `opcode` with `status` until clearFaults. */
    refuseOpcode: (opcode: number, status: number) => this.faults.refuseOpcode(opcode, status),
    /** Stop answering: commands are taken and neither run nor answered. */
    silence: () => {
      this.faults.silent = true;
    },
    /**
     * Answer the command `n` commands from now with a malformed CREQ entry ('opcode', 'cookie',
     * 'type', 'xid', 'bytes').
     */
    malformNth: (n: number, kind: RoceMalformKind) => this.faults.malformNth(n, kind),
    /**
     * Per-command probabilities of a refusal, of going silent, of a malformed answer, drawn from
     * the model's seeded PRNG.
     */
    setRandomFaults: (spec: RoceRandomFaults) => this.faults.setRandom(spec),
    clearFaults: () => this.faults.clear(),
    /**
     * Report (QUERY_FUNC) and enforce (CREATE_CQ, CREATE_QP, ...) these RoCE ceilings in place of
     * the chip's (firmware-hwrm/chips.ts), from the next command on: a device with other limits.
     */
    setCeilings: (ceilings: Partial<RoceCeilings>) => {
      this.ceilings = { ...ceilings };
    },
    /** Commands taken so far. */
    seen: () => this.faults.seen,
    resources: (): RoceResources => ({
      initialized: this.state.initialized, qps: this.state.qps.size, cqs: this.state.cqs.size,
      mrs: this.state.keys.size, gids: this.state.gids.size,
    }),
    /** Reports a QP error (as the NIC would) and moves the QP to ERR; false if there is no such QP. */
    injectQpError: (qpn: number, reqReason: number, resReason: number): boolean => {
      const entry = this.state.qps.get(qpn);
      if (!entry) return false;
      const from = entry.qp.state;
      this.postQpError(entry.qp, reqReason, resReason);
      if (from !== EmuQpState.ERR) {
        try {
          this.ctx.hooks.qpStateChanged(entry.qp, from);
        } catch (e) {
          this.internalError(e);
        }
      }
      return true;
    },
    stats: () => ({ ...this.stats }),
    lastRefusal: () => this.lastRefusal,
    lastInternalError: () => this.lastInternalError,
    /** What MODIFY_QP stored on QP `qpn` (copies), or undefined if there is no such QP. */
    qpAttributes: (qpn: number): QpAttributes | undefined => {
      const qp = this.state.qps.get(qpn)?.qp;
      if (!qp) return undefined;
      return {
        state: qp.state, access: qp.access, pathMtuBytes: qp.pathMtuBytes, timeout: qp.timeout, retryCnt: qp.retryCnt,
        rnrRetry: qp.rnrRetry, minRnrTimer: qp.minRnrTimer, destQpn: qp.destQpn, rqPsn: qp.rqPsn, sqPsn: qp.sqPsn,
        destGid: qp.destGid.slice(), destMac: qp.destMac.slice(), sgidIndex: qp.sgidIndex, hopLimit: qp.hopLimit,
        maxRdAtomic: qp.maxRdAtomic, maxDestRdAtomic: qp.maxDestRdAtomic, pkey: qp.pkey,
      };
    },
    /** The region registered under `key` as the firmware resolved it, or undefined if none is. */
    mrAttributes: (key: number): MrAttributes | undefined => {
      const k = this.state.keys.get(key);
      const mr = k?.mr;
      if (!k || !mr) return undefined;
      return {
        key: mr.key, pd: mr.pd, va: mr.va, length: mr.length, access: mr.access, pageBytes: mr.memory.pageBytes,
        pages: [...mr.memory.pages],
      };
    },
  };
}

/** A QP's attributes as the firmware holds them (controls.qpAttributes). */
export interface QpAttributes {
  readonly state: number;
  readonly access: number;
  readonly pathMtuBytes: number;
  readonly timeout: number;
  readonly retryCnt: number;
  readonly rnrRetry: number;
  readonly minRnrTimer: number;
  readonly destQpn: number;
  readonly rqPsn: number;
  readonly sqPsn: number;
  readonly destGid: Uint8Array;
  readonly destMac: Uint8Array;
  readonly sgidIndex: number;
  readonly hopLimit: number;
  readonly maxRdAtomic: number;
  readonly maxDestRdAtomic: number;
  readonly pkey: number;
}

/** A registered region as the firmware resolved its page list (controls.mrAttributes). */
export interface MrAttributes {
  readonly key: number;
  readonly pd: number;
  readonly va: number;
  readonly length: number;
  readonly access: number;
  readonly pageBytes: number;
  /** IOVA of each page, in order. */
  readonly pages: readonly number[];
}
