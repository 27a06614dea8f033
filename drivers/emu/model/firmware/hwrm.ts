/**
 * The software NIC's management firmware (ChiMP) as seen through HWRM: it takes a request
 * from the BAR0 window (or, in short-command mode, from host memory through the IOMMU),
 * answers it by DMA at resp_addr with the valid byte written last, and keeps the
 * function's state with the preconditions a driver must respect.
 *
 * Each command is answered by its handler, looked up by req_type (hwrm-dispatch.ts; one per
 * row with layouts of firmware-hwrm/hwrm/commands.ts); a req_type without one is answered
 * CMD_NOT_SUPPORTED. Rules this file enforces beyond the handlers': requests larger than the
 * window need short mode, and FUNC_RESET (or a PCI function reset) drops everything a previous
 * owner left. The handlers' own rules are in their family files.
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import { hwrmEvent } from '../../../../firmware-hwrm/trace.ts';
import {
  HWRM_SHORT_INPUT_WORDS, OUTPUT_WORDS, hwrmShortInputSignature, setOutputReqType, setOutputRespLen, setOutputSeqId,
} from '../../../../firmware-hwrm/hwrm/header.g.ts';
import { internalErrorText, type ModelBus } from '../bus.ts';
import { HwrmFaults, type HwrmRandomFaults, type MalformedKind } from './hwrm-faults.ts';
import { DEFAULT_TQM_OFFER } from './hwrm-backing-store.ts';
import { BackingStoreV2 } from './hwrm-backing-store-v2.ts';
import type { FunctionResources, RoceOfFunction } from './function-resources.ts';
import type { HwrmContext } from './hwrm-handler.ts';
import { HWRM_HANDLERS, type AnyHwrmAnswer, type HwrmEntry } from './hwrm-dispatch.ts';
import { MAX_EXT_REQ_LEN, WINDOW_BYTES } from './hwrm-function.ts';
import { roceReceivePath, resetL2 } from './hwrm-l2.ts';
import { resetReservation } from './hwrm-reservation.ts';

/** The firmware status register's value on healthy firmware (Linux bnxt.h BNXT_FW_STATUS_HEALTHY). */
const FW_STATUS_HEALTHY = 0x8000;

export class HwrmFirmware {
  readonly faults = new HwrmFaults();
  /** What the handlers are given (hwrm-handler.ts). */
  private readonly ctx: HwrmContext;
  /** Requests answered (for tests and benchmarks). */
  answered = 0;
  /** The last answer written whole (header fields and error_code), as the device's own observers see it. */
  readonly lastAnswer = { reqType: 0, seqId: 0, cmplRing: 0, errorCode: 0 };
  /** Exceptions caught while handling a request (a broken invariant) in a counting model: no answer. */
  internalErrors = 0;
  lastInternalError: string | undefined;

  constructor(
    private readonly bus: ModelBus,
    /** The function's state this firmware keeps (the RoCE firmware reads it). */
    private readonly fn: FunctionResources,
    /** The function's RoCE side: reset with the function, and asked before a ring is freed. */
    private readonly roce: RoceOfFunction,
    /** Told whether RoCE frames for the port's MAC reach the RoCE engine, each time that may change. */
    private readonly onReceivePath: (open: boolean) => void = () => {},
  ) {
    // Read by Linux bnxt.c bnxt_try_map_fw_health_reg when the firmware offers no health
    // registers, at the chip's offset (BNXT_GRC_REG_STATUS_P5 on P5 and P7: firmware-hwrm/chips.ts).
    bus.publishBar0(bus.chip.grcStatusOffset, FW_STATUS_HEALTHY);
    this.ctx = {
      bus, fn, roce, backingStoreV2: new BackingStoreV2(), tqmOffer: DEFAULT_TQM_OFFER, nextRingId: 1, nextStatId: 1,
      resetFunction: () => this.resetFunction(),
      receivePathMayChange: () => this.onReceivePath(roceReceivePath(fn, bus.config.mac)),
    };
  }

  run(): boolean {
    return false;
  }

  nextDeadlineNs(): number {
    return Infinity;
  }

  /** A write of the ChiMP trigger register: take the request in the window. */
  trigger(value: number): void {
    if (value !== 1) return;
    const window = this.bus.bar0Bytes(0, WINDOW_BYTES);
    let request: Uint8Array = window;
    const windowWords = new Uint32Array(window.buffer, window.byteOffset, HWRM_SHORT_INPUT_WORDS);
    if (hwrmShortInputSignature(windowWords, 0) === H.SHORT_REQ_SIGNATURE_SHORT_CMD) {
      const short = H.HwrmShortInput.decode(window);
      // Nothing sane to answer to.
      if (short.req_addr % 16 !== 0 || short.size < 16 || short.size > MAX_EXT_REQ_LEN) return;
      const body = new Uint8Array(short.size);
      if (!this.bus.iommu.readInto(short.req_addr, short.size, body, 0)) return; // IOMMU fault: no answer
      request = body;
    }
    try {
      this.handle(request, request !== window);
    } catch (e) {
      // A broken invariant: a strict model throws (bus); a counting one counts it and answers nothing.
      this.bus.internalError('hwrm firmware', e);
      this.internalErrors++;
      this.lastInternalError = internalErrorText(e);
    }
  }

  /**
   * What a function reset drops, as HWRM_FUNC_RESET asks and as a PCI function reset (FLR,
   * vfio-user DEVICE_RESET) does: rings, contexts, registration, reservations, context memory
   * and every RoCE object a previous owner left.
   */
  resetFunction(): void {
    this.fn.clear();
    this.ctx.backingStoreV2.reset();
    resetReservation(this.fn);
    resetL2(this.fn);
    this.roce.reset();
    this.onReceivePath(false);
  }

  /** The one gate: a req_type without a handler is not supported; a long request must come by short command. */
  private handle(request: Uint8Array, viaShort: boolean): void {
    const hdr = H.HwrmInput.decode(request);
    this.bus.trace?.write(hwrmEvent('req', hdr.req_type, request));
    const fate = this.faults.next(hdr.req_type);
    if (fate.silent) return;
    const entry = HWRM_HANDLERS.get(hdr.req_type);
    let answer: AnyHwrmAnswer;
    if (fate.refuse) answer = { error: fate.refuse };
    else if (!entry) answer = { error: H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED };
    else if (!viaShort && entry.command.request.size > WINDOW_BYTES) answer = { error: H.HWRM_ERR_CODE.INVALID_PARAMS };
    else answer = entry.handle(this.ctx, entry.command.request.decode(request));
    this.respond(hdr, entry, answer, fate.malformed);
  }

  /** Writes the answer at resp_addr: everything but the last byte, then the valid byte. */
  private respond(
    hdr: { req_type: number; cmpl_ring: number; seq_id: number; resp_addr: number },
    entry: HwrmEntry | undefined, answer: AnyHwrmAnswer, malformed: MalformedKind | undefined,
  ): void {
    let bytes: Uint8Array;
    if ('error' in answer) {
      bytes = H.HwrmErrOutput.encode({
        error_code: answer.error, req_type: hdr.req_type, seq_id: hdr.seq_id, resp_len: 16, valid: 1,
      });
    } else {
      // A handler's values: it has a row, so `entry` is there.
      const layout = entry!.command.response;
      bytes = layout.encode({
        ...answer.values, error_code: 0, req_type: hdr.req_type, seq_id: hdr.seq_id, resp_len: layout.size, valid: 1,
      });
    }
    const head = new Uint32Array(bytes.buffer, bytes.byteOffset, OUTPUT_WORDS);
    if (malformed === 'seq') setOutputSeqId(head, 0, (hdr.seq_id + 1) & 0xffff);
    if (malformed === 'wrong_type') setOutputReqType(head, 0, (hdr.req_type + 1) & 0xffff);
    if (malformed === 'resp_len') setOutputRespLen(head, 0, 5000);
    const iommu = this.bus.iommu;
    if (!iommu.writeFrom(hdr.resp_addr, bytes, 0, bytes.length - 1)) return;
    if (malformed !== 'no_valid') iommu.write8Release(hdr.resp_addr + bytes.length - 1, 1);
    this.bus.trace?.write(hwrmEvent('resp', hdr.req_type, bytes));
    const last = this.lastAnswer;
    last.reqType = hdr.req_type; last.seqId = hdr.seq_id; last.cmplRing = hdr.cmpl_ring;
    last.errorCode = 'error' in answer ? answer.error : 0;
    this.answered++;
    this.bus.notifyDriver();
  }

  readonly controls = {
    refuseNth: (n: number, code: number) => this.faults.refuseNth(n, code),
    refuseType: (reqType: number, code: number) => this.faults.refuseType(reqType, code),
    malformNth: (n: number, kind: MalformedKind) => this.faults.malformNth(n, kind),
    /**
     * Per-request probabilities of a refusal, of going silent, of a malformed answer, drawn from
     * the model's seeded PRNG.
     */
    setRandomFaults: (spec: HwrmRandomFaults) => this.faults.setRandom(this.bus.random, spec),
    silence: () => { this.faults.silent = true; },
    silenceAfter: (n: number) => this.faults.silenceAfter(n),
    clearFaults: () => this.faults.clear(),
    /** VNIC_QCAPS offers TPA v2 with `maxAggs` aggregations (0: none, the default). */
    offerTpaV2: (maxAggs: number) => { this.ctx.fn.tpaV2MaxAggs = maxAggs; },
    /** BACKING_STORE_QCAPS offers `count` fast-path TQM rings and `ext` beyond 8 (before the CFG). */
    offerTqmRings: (count: number, ext: number) => { this.ctx.tqmOffer = { count, ext }; },
    seen: () => this.faults.seen,
    internalErrors: () => this.internalErrors,
    lastInternalError: () => this.lastInternalError,
    backingStoreV2: () => ({
      allDone: this.ctx.backingStoreV2.allDone, configured: this.ctx.backingStoreV2.configuredCount,
      lastRefusal: this.ctx.backingStoreV2.lastRefusal,
    }),
    resources: () => ({
      registered: this.fn.registered, interfaceUp: this.fn.interfaceUp,
      backingStore: this.fn.backingStore !== undefined, rings: this.fn.rings.size, statCtxs: this.fn.statCtxs.size,
    }),
  };
}
