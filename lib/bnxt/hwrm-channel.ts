/**
 * The HWRM channel to the function's management firmware (bnxt_en's bnxt_hwrm.c, hwrm_req_send):
 * write the request into the BAR0 window (or a short-command descriptor pointing at it in
 * DMA memory), ring the trigger, then poll the DMA'd response: resp_len and seq_id first,
 * then the valid byte at resp_len - 1. One request at a time, as both reference drivers do.
 */
import { hwrmEvent, type TraceSink } from '../../firmware-hwrm/trace.ts';
import type { Device, DmaBuffer, Mmio, Clock } from '../../drivers/device.ts';
import type { FieldSpec, Values } from '../../firmware-hwrm/layout.ts';
import { HWRM_COMMANDS, type HwrmCommand } from '../../firmware-hwrm/hwrm/commands.ts';
import {
  HwrmShortInput, HWRM_MAX_REQ_LEN, HWRM_NO_CMPL_RING, HWRM_TARGET_ID, HWRM_RESP_VALID_KEY,
  SHORT_REQ_SIGNATURE_SHORT_CMD, SHORT_REQ_TARGET_ID,
} from '../../firmware-hwrm/hwrm/header.ts';
import { hwrmErrorName } from '../../firmware-hwrm/hwrm/errors.ts';
import {
  OUTPUT_RESP_LEN_WORD, hwrmErrOutputCmdErr, outputErrorCode, outputReqType, outputRespLenOf, outputSeqIdOf,
} from '../../firmware-hwrm/hwrm/header.g.ts';
import { ok, err, type Result } from '../result.ts';
import type { DmaPool } from './dma-pool.ts';
import { CommandDeadline } from './command-deadline.ts';
import { LIMITS } from './limits.ts';

const CHIMP_COMM = 0x000; // BAR0 request window
const CHIMP_COMM_TRIGGER = 0x100;
const RESP_BUFFER_BYTES = 4096;
/** Sent before the firmware's limits are known (they come in its answer). */
const VER_GET = HWRM_COMMANDS.VER_GET.req_type;

export interface HwrmCaps {
  maxReqWinLen: number;
  maxExtReqLen: number;
  shortCmd: boolean;
  defaultTimeoutMs: number;
  maxTimeoutMs: number;
}

export interface SendOptions {
  timeoutMs?: number;
  /** DMA memory the request names: if the firmware stops answering, it may still write it. */
  names?: readonly DmaBuffer[];
  /** Send only the first `lengthBytes` of the request (older, shorter forms such as the 256-byte BACKING_STORE_CFG). */
  lengthBytes?: number;
}

export class HwrmChannel {
  private seq = 0;
  private stalledBecause: string | undefined;
  private readonly bar0: Mmio;
  private readonly clock: Clock;
  /** Requests sent so far (tests count them). */
  requests = 0;
  caps: HwrmCaps = {
    maxReqWinLen: HWRM_MAX_REQ_LEN,
    maxExtReqLen: HWRM_MAX_REQ_LEN,
    shortCmd: false,
    defaultTimeoutMs: LIMITS.hwrmDefaultTimeoutMs,
    maxTimeoutMs: LIMITS.hwrmMaxTimeoutMs,
  };

  private constructor(
    device: Device,
    private readonly pool: DmaPool,
    private readonly resp: DmaBuffer,
    private readonly shortReq: DmaBuffer,
    /** Tests shorten every wait to see a silent firmware quickly. */
    readonly timeoutCapMs: number,
  ) {
    this.bar0 = device.bar(0);
    this.clock = device.clock;
  }

  static open(device: Device, pool: DmaPool, timeoutCapMs = Infinity): Result<HwrmChannel> {
    const resp = pool.alloc(RESP_BUFFER_BYTES);
    if (!resp.ok) return err(`no DMA memory for HWRM responses: ${resp.error}`);
    const shortReq = pool.alloc(RESP_BUFFER_BYTES);
    if (!shortReq.ok) {
      pool.free(resp.value);
      return err(`no DMA memory for HWRM requests: ${shortReq.error}`);
    }
    return ok(new HwrmChannel(device, pool, resp.value, shortReq.value, timeoutCapMs));
  }

  /** Where every request and response is traced (RIG_BNXT_TRACE, Nic.open's trace), if anywhere. */
  trace: TraceSink | undefined;

  get stalled(): string | undefined {
    return this.stalledBecause;
  }

  /**
   * Sends one request (a row of firmware-hwrm/hwrm/commands.ts HWRM_COMMANDS, with its request
   * fields) and waits for its response, decoded with the row's response layout. A refusal or a
   * silence is a Result error naming the command.
   */
  send<Q extends Record<string, FieldSpec>, S extends Record<string, FieldSpec>>(
    cmd: HwrmCommand<Q, S>,
    body: Partial<Values<Q>>,
    options: SendOptions = {},
  ): Result<Values<S>> {
    if (this.stalledBecause) return err(`${cmd.name} not sent: ${this.stalledBecause}`);
    const seq = this.seq;
    this.seq = (this.seq + 1) & 0xffff;
    const full = cmd.request.encode({
      ...body, req_type: cmd.req_type, cmpl_ring: HWRM_NO_CMPL_RING, seq_id: seq, target_id: HWRM_TARGET_ID.HWRM,
      resp_addr: this.resp.iova,
    } as Partial<Values<Q>>);
    const request = options.lengthBytes ? full.subarray(0, options.lengthBytes) : full;
    this.trace?.write(hwrmEvent('req', cmd.req_type, request));

    // The polling depends on resp_len and valid starting at zero (bnxt_en clears both before each request).
    this.resp.bytes.fill(0);
    const direct = !this.caps.shortCmd && request.length <= this.caps.maxReqWinLen;
    if (!direct && request.length > Math.max(this.caps.maxExtReqLen, HWRM_MAX_REQ_LEN) && cmd.req_type !== VER_GET) {
      return err(`${cmd.name}: a ${request.length}-byte request exceeds the firmware's ` +
        `${this.caps.maxExtReqLen}-byte limit`);
    }
    this.requests++;
    if (direct) {
      this.writeWindow(request, this.caps.maxReqWinLen);
    } else {
      this.shortReq.bytes.fill(0, 0, request.length + 16);
      this.shortReq.bytes.set(request);
      const descriptor = HwrmShortInput.encode({
        req_type: cmd.req_type,
        signature: SHORT_REQ_SIGNATURE_SHORT_CMD,
        target_id: SHORT_REQ_TARGET_ID.DEFAULT,
        size: request.length,
        req_addr: this.shortReq.iova,
      });
      this.writeWindow(descriptor, 16);
    }
    this.bar0.write32(CHIMP_COMM_TRIGGER, 1);

    const timeoutMs =
      Math.min(options.timeoutMs ?? this.caps.defaultTimeoutMs, this.caps.maxTimeoutMs, this.timeoutCapMs);
    const respLen = this.awaitResponse(seq, timeoutMs);
    if (respLen < 0) {
      const why = respLen === -1 ? `did not answer within ${timeoutMs} ms` : 'never set the valid byte of its answer';
      this.stalledBecause = `the firmware stopped answering (${cmd.name} ${why})`;
      this.pool.quarantine(this.resp, this.shortReq, ...(options.names ?? []));
      return err(`${cmd.name}: the firmware ${why}`);
    }
    if (respLen < 8 || respLen > RESP_BUFFER_BYTES) {
      return err(`${cmd.name}: malformed firmware answer (resp_len ${respLen} outside 8..${RESP_BUFFER_BYTES})`);
    }
    const words = this.resp.u32;
    const errorCode = outputErrorCode(words, 0);
    const echoedType = outputReqType(words, 0);
    const cmdErr = respLen >= 16 ? hwrmErrOutputCmdErr(words, 0) : 0;
    const answer = this.resp.bytes.slice(0, respLen);
    this.trace?.write(hwrmEvent('resp', echoedType, answer));
    // Clear the valid byte so a later, longer answer never sees a stale 1 (as __hwrm_send does).
    this.resp.bytes[respLen - 1] = 0;
    if (echoedType !== cmd.req_type) {
      return err(`${cmd.name}: malformed firmware answer (it answers request type 0x${echoedType.toString(16)})`);
    }
    if (errorCode !== 0) {
      const detail = cmdErr ? ` (cmd_err ${cmdErr})` : '';
      return err(`${cmd.name} refused by the firmware: ${hwrmErrorName(errorCode)}${detail}`);
    }
    return ok(cmd.response.decode(answer));
  }

  /** Resp_len when the answer is complete; -1 if none came in time, -2 if the valid byte never came. */
  private awaitResponse(seq: number, timeoutMs: number): number {
    const words = this.resp.u32;
    const bytes = this.resp.bytes;
    const deadline = new CommandDeadline(this.clock, timeoutMs * 1e6);
    let looks = 0;
    let respLen = 0;
    for (;;) {
      const w1 = Atomics.load(words, OUTPUT_RESP_LEN_WORD); // seq_id and resp_len share a word
      respLen = outputRespLenOf(w1);
      // A non-zero resp_len with another seq_id is a stale answer: ignore it.
      if (respLen !== 0 && outputSeqIdOf(w1) === seq) break;
      if (deadline.expired()) return -1;
      this.pause(looks++);
    }
    if (respLen < 8 || respLen > RESP_BUFFER_BYTES) return respLen;
    const validDeadline = new CommandDeadline(this.clock, LIMITS.hwrmValidBitDelayUs * 1000);
    looks = 0;
    while (Atomics.load(bytes, respLen - 1) !== HWRM_RESP_VALID_KEY) {
      if (validDeadline.expired()) return -2;
      this.pause(looks++);
    }
    return respLen;
  }

  private pause(looks: number): void {
    if (looks < LIMITS.spinsBeforeSleep) this.clock.relax();
    else this.clock.sleep(LIMITS.pollSleepUs);
  }

  /** Writes `bytes` as 32-bit words into the window and zeroes the rest of it (as bnxt_en's __hwrm_send does). */
  private writeWindow(bytes: Uint8Array, windowLen: number): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const words = Math.ceil(bytes.length / 4);
    for (let i = 0; i < words; i++) {
      const at = i * 4;
      const v = at + 4 <= bytes.length ? view.getUint32(at, true) : tailWord(bytes, at);
      this.bar0.write32(CHIMP_COMM + at, v);
    }
    for (let at = words * 4; at < windowLen; at += 4) this.bar0.write32(CHIMP_COMM + at, 0);
  }

  close(): void {
    this.pool.free(this.resp);
    this.pool.free(this.shortReq);
  }
}

function tailWord(bytes: Uint8Array, at: number): number {
  let v = 0;
  for (let i = 0; i < 4 && at + i < bytes.length; i++) v |= bytes[at + i]! << (8 * i);
  return v >>> 0;
}
