/**
 * The RoCE command channel ("RCFW", the kernel's qplib_rcfw.c): commands go into the CMDQ
 * ring in 16-byte units, the producer register and trigger in BAR0 tell the firmware, and
 * answers come back on the CREQ ring, which HWRM allocated as an NQ. The CREQ also carries
 * asynchronous QP/CQ error notifications: they are kept for the data path, never dropped
 * while a command waits, and read without sending the firmware anything.
 *
 *   CMDQ (host -> fw)  [ cmd0: n units ][ cmd1 ]...        producer: BAR0 + 0x60C, trigger 0x700
 *   CREQ (fw -> host)  [ 16-byte entry, v bit flips each pass ]   doorbell: NQ_ARM in BAR2
 */
import { cmdqEvent, creqEvent, type TraceSink } from '../../firmware-hwrm/trace.ts';
import type { Device, DmaBuffer, Mmio, Clock } from '../../drivers/device.ts';
import type { FieldSpec, Layout, Values } from '../../firmware-hwrm/layout.ts';
import {
  CMDQE_BYTES, CMDQ_COOKIE_MASK, CMDQ_PROD_OFFSET, CMDQ_TRIGGER_OFFSET, CMDQ_TRIGGER_VALUE, CMDQ_MAILBOX_OFFSET,
  CMDQ_BASE_FIELDS, CmdqInit, cmdqProdWord, cmdqUnits,
} from '../../firmware-hwrm/roce/cmdq.ts';
import {
  CreqQpErrorNotification, reqErrStateReasonName, resErrStateReasonName,
} from '../../firmware-hwrm/roce/creq.ts';
import {
  CREQ_BASE_V_WORD, CREQ_BASE_WORDS, creqBaseVOf, creqQpEventCookie, creqQpEventEvent, creqQpEventStatus,
  creqQpEventType, creqQpEventXid,
} from '../../firmware-hwrm/roce/creq.g.ts';
import { CreqType, CreqEvent, RoceOpcode, roceOpcodeName, roceStatusName } from '../../firmware-hwrm/roce/opcodes.ts';
import { CreqQueryFuncRespSb } from '../../firmware-hwrm/roce/commands-fw.ts';
import { DbType, doorbellHi } from '../../firmware-hwrm/roce/doorbell.ts';
import { RingCursor } from '../../firmware-hwrm/ring.ts';
import { ok, err, type Result } from '../result.ts';
import type { DmaPool } from './dma-pool.ts';
import { CommandDeadline } from './command-deadline.ts';
import { LIMITS } from './limits.ts';

/** CMDQ depth in entries; commands are sent one at a time, so a small ring suffices. */
export const CMDQ_ENTRIES = 256;
/** CREQ depth in entries (a power of two: the valid phase flips at each wrap). */
export const CREQ_ENTRIES = 4096;
/** The two rings' slots, laps and phases (firmware-hwrm/ring.ts). */
const CMDQ_RING = new RingCursor(CMDQ_ENTRIES);
const CREQ_RING = new RingCursor(CREQ_ENTRIES);

export interface RcfwAnswer {
  /** Object the command created or touched (QP number, CQ id, key, GID index). */
  readonly xid: number;
  /** The whole 16-byte CREQ entry, for command-specific fields. */
  readonly entry: Uint8Array;
}

/** A QP error notification kept for the data path. */
export interface QpErrorEvent {
  readonly qpn: number;
  readonly message: string;
}

export interface RcfwCommand<Q extends Record<string, FieldSpec>> {
  readonly opcode: number;
  readonly layout: Layout<Q>;
}

export class RcfwChannel {
  private readonly bar0: Mmio;
  private readonly clock: Clock;
  private prod = 0;
  private first = true;
  private seq = 0;
  /** Where each command is encoded before it is copied into the CMDQ (grown to the largest layout). */
  private encoded = new Uint8Array(8 * CMDQE_BYTES);
  private creqCons = 0;
  private stalledBecause: string | undefined;
  private readonly creqWords: Uint32Array;
  /** The NIC writes the CREQ from this thread (Device.writesInCallerThread): its valid bits by plain loads. */
  private readonly plainLoads: boolean;
  /** QP error notifications by QP number, waiting for the data path to take them. */
  private readonly qpErrors = new Map<number, QpErrorEvent>();
  /** Requests sent so far (tests count them: poll and wait must send none). */
  requests = 0;
  timeoutMs: number = LIMITS.roceCommandTimeoutMs;
  /** Where every command and its answer are traced (RIG_BNXT_TRACE, Nic.open's trace), if anywhere. */
  trace: TraceSink | undefined;

  constructor(
    device: Device,
    private readonly pool: DmaPool,
    readonly cmdq: DmaBuffer,
    readonly creq: DmaBuffer,
    readonly creqRingId: number,
    private readonly doorbells: Mmio,
    private readonly creqDoorbellOffset: number,
  ) {
    this.bar0 = device.bar(0);
    this.clock = device.clock;
    this.creqWords = creq.u32;
    this.plainLoads = device.writesInCallerThread === true;
  }

  get stalled(): string | undefined {
    return this.stalledBecause;
  }

  /** Arms the CREQ and hands the CMDQ to the firmware through the BAR0 mailbox (bnxt_qplib_enable_rcfw_channel). */
  start(): void {
    this.ringCreqDoorbell();
    const init = CmdqInit.encode({
      cmdq_pbl: this.cmdq.iova,
      cmdq_lvl: 0,
      cmdq_size: CMDQ_ENTRIES,
      creq_ring_id: this.creqRingId,
      prod_idx: 0,
    });
    const v = new DataView(init.buffer);
    for (let at = 0; at < 16; at += 4) this.bar0.write32(CMDQ_MAILBOX_OFFSET + at, v.getUint32(at, true));
  }

  /**
   * Sends one command and waits for its answer. `names` is DMA memory the command tells
   * the firmware about: if the firmware stops answering, that memory is quarantined.
   */
  send<Q extends Record<string, FieldSpec>>(
    cmd: RcfwCommand<Q>,
    body: Partial<Values<Q>>,
    names: readonly DmaBuffer[] = [],
  ): Result<RcfwAnswer> {
    const name = roceOpcodeName(cmd.opcode);
    if (this.stalledBecause) return err(`${name} not sent: ${this.stalledBecause}`);
    const cookie = this.seq & CMDQ_COOKIE_MASK;
    this.seq = (this.seq + 1) & 0xffff;
    // Encoded into one buffer kept for every command (zeroed by encode first): a fresh one of more
    // than 64 bytes lives outside the JS heap, an allocation the collector tracks and frees.
    const size = cmd.layout.size;
    if (this.encoded.length < size) this.encoded = new Uint8Array(size);
    const bytes = cmd.layout.encode(body, this.encoded, 0);
    // cmdq_base's opcode, cmd_size and cookie (whole bytes at 0, 1 and 4) written over whatever the
    // body named: the same bytes a merged { ...body, ...header } gave, without the copy of the body.
    const units = cmdqUnits(size);
    bytes[CMDQ_BASE_FIELDS.opcode.offset] = cmd.opcode;
    bytes[CMDQ_BASE_FIELDS.cmd_size.offset] = units;
    bytes[CMDQ_BASE_FIELDS.cookie.offset] = cookie & 0xff;
    bytes[CMDQ_BASE_FIELDS.cookie.offset + 1] = cookie >>> 8;
    // Copy unit by unit: a command may wrap at the ring's end (as the kernel's __send_message copies it).
    // A whole unit overwrites its slot; a last unit shorter than 16 bytes clears the slot first, so
    // nothing of an earlier command stays behind.
    for (let u = 0; u < units; u++) {
      const slot = CMDQ_RING.slot(this.prod + u) * CMDQE_BYTES;
      const end = Math.min(size, (u + 1) * CMDQE_BYTES);
      if (end - u * CMDQE_BYTES < CMDQE_BYTES) this.cmdq.bytes.fill(0, slot, slot + CMDQE_BYTES);
      this.cmdq.bytes.set(bytes.subarray(u * CMDQE_BYTES, end), slot);
    }
    this.prod += units;
    this.requests++;
    this.trace?.write(cmdqEvent(bytes.subarray(0, size)));
    this.bar0.write32(CMDQ_PROD_OFFSET, cmdqProdWord(this.prod, this.first));
    this.first = false;
    this.bar0.write32(CMDQ_TRIGGER_OFFSET, CMDQ_TRIGGER_VALUE);

    const answer = this.awaitAnswer(cookie);
    if (answer === undefined) {
      this.stalledBecause = `the firmware stopped answering (${name} had no answer within ${this.timeoutMs} ms)`;
      this.pool.quarantine(this.cmdq, this.creq, ...names);
      return err(`${name}: the firmware did not answer within ${this.timeoutMs} ms`);
    }
    if (this.trace) {
      // QUERY_FUNC answers in its side buffer (the first buffer it names): traced with it.
      const side = cmd.opcode === RoceOpcode.QUERY_FUNC
        ? names[0]?.bytes.subarray(0, CreqQueryFuncRespSb.size)
        : undefined;
      this.trace.write(creqEvent(new Uint8Array(answer.buffer, answer.byteOffset, answer.byteLength), side));
    }
    const status = creqQpEventStatus(answer, 0);
    const event = creqQpEventEvent(answer, 0);
    if (event !== cmd.opcode) {
      // What the firmware did with the command is unknown: it may name the memory it was told of.
      this.pool.quarantine(...names);
      return err(`${name}: malformed firmware answer (it answers opcode 0x${event.toString(16)})`);
    }
    if (status !== 0) return err(`${name} refused by the firmware: ${roceStatusName(status)}`);
    return ok({ xid: creqQpEventXid(answer, 0), entry: new Uint8Array(answer.buffer) });
  }

  /**
   * Reads the CREQ until the answer with `cookie`; QP error notifications met on the way
   * are kept. Undefined if none came within the timeout.
   */
  private awaitAnswer(cookie: number): Uint32Array | undefined {
    const deadline = new CommandDeadline(this.clock, this.timeoutMs * 1e6);
    let looks = 0;
    for (;;) {
      const entry = this.takeCreqEntry();
      if (entry) {
        const type = creqQpEventType(entry, 0);
        const event = creqQpEventEvent(entry, 0);
        const answer = type === CreqType.QP_EVENT && event < CreqEvent.QP_ERROR_NOTIFICATION;
        if (answer && creqQpEventCookie(entry, 0) === cookie) return entry;
        this.keepEvent(entry); // an async event, or a stale answer: never lost, never mistaken
        continue;
      }
      if (deadline.expired()) return undefined;
      if (looks++ < LIMITS.spinsBeforeSleep) this.clock.relax();
      else this.clock.sleep(LIMITS.pollSleepUs);
    }
  }

  /** Takes (a copy of) the next CREQ entry if the firmware wrote it (valid bit = this pass's phase). */
  private takeCreqEntry(): Uint32Array | undefined {
    const w = CREQ_RING.slot(this.creqCons) * CREQ_BASE_WORDS;
    // The valid bit is 1 on the first lap and flips at each wrap.
    // A poll that finds no CQE looks here too: one plain load, where the NIC writes in this thread.
    const i = w + CREQ_BASE_V_WORD;
    const valid = creqBaseVOf(this.plainLoads === true ? this.creqWords[i]! : Atomics.load(this.creqWords, i));
    if (valid !== CREQ_RING.phase(this.creqCons)) return undefined;
    const entry = this.creqWords.slice(w, w + CREQ_BASE_WORDS);
    this.creqCons++;
    this.ringCreqDoorbell();
    return entry;
  }

  private keepEvent(entry: Uint32Array): void {
    // Function events and stale answers are dropped.
    if (creqQpEventType(entry, 0) !== CreqType.QP_EVENT) return;
    if (creqQpEventEvent(entry, 0) !== CreqEvent.QP_ERROR_NOTIFICATION) return;
    const e = CreqQpErrorNotification.decode(new Uint8Array(entry.buffer));
    const parts: string[] = [];
    if (e.req_err_state_reason) parts.push(`requester: ${reqErrStateReasonName(e.req_err_state_reason)}`);
    if (e.res_err_state_reason) parts.push(`responder: ${resErrStateReasonName(e.res_err_state_reason)}`);
    const message = `the NIC reported the QP failed (${parts.join(', ') || 'no reason given'})`;
    this.qpErrors.set(e.xid, { qpn: e.xid, message });
  }

  /** Reads any new CREQ entries (no firmware request); cheap when there are none. */
  pollEvents(): void {
    for (let e = this.takeCreqEntry(); e; e = this.takeCreqEntry()) this.keepEvent(e);
  }

  /** The error the NIC reported for `qpn`, if any (kept until the QP is destroyed). */
  qpError(qpn: number): QpErrorEvent | undefined {
    return this.qpErrors.size === 0 ? undefined : this.qpErrors.get(qpn);
  }

  forgetQp(qpn: number): void {
    this.qpErrors.delete(qpn);
  }

  private ringCreqDoorbell(): void {
    this.doorbells.doorbell64(
      this.creqDoorbellOffset, CREQ_RING.doorbellLo(this.creqCons), doorbellHi(this.creqRingId, DbType.NQ_ARM),
    );
  }
}
