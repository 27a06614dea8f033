/**
 * The software NIC's management firmware (ChiMP) as seen through HWRM: it takes a request
 * from the BAR0 window (or, in short-command mode, from host memory through the IOMMU),
 * answers it by DMA at resp_addr with the valid byte written last, and keeps the
 * function's state with the preconditions a driver must respect.
 *
 * Rules this model enforces (beyond layouts): requests larger than the window need short
 * mode; rings and statistics contexts need a registered driver (context memory does not: the
 * kernel configures it before it registers) and a FUNC_CFG reservation with room (the new
 * resource manager: hwrm-kernel.ts beyondReservation); rings and
 * contexts are freed by id and FUNC_RESET drops everything a previous owner left.
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import { hwrmEvent } from '../../../../firmware-hwrm/trace.ts';
import {
  HWRM_SHORT_INPUT_WORDS, OUTPUT_WORDS, hwrmShortInputSignature, setOutputReqType, setOutputRespLen, setOutputSeqId,
} from '../../../../firmware-hwrm/hwrm/header.g.ts';
import type { ModelBus } from '../bus.ts';
import { HwrmFaults, type HwrmRandomFaults, type MalformedKind } from './hwrm-faults.ts';
import {
  answerBackingStoreQcaps, checkBackingStoreCfg, DEFAULT_TQM_OFFER, type TqmOffer,
} from './hwrm-backing-store.ts';
import { BackingStoreV2 } from './hwrm-backing-store-v2.ts';
import type { FunctionResources, RoceOfFunction } from './function-resources.ts';
import {
  answerKernelCommand, beyondReservation, kernelRingAlloc, kernelRingFree, reservedQcfgFields, resetKernelState,
  roceReceivePath,
} from './hwrm-kernel.ts';

/** The commands that open or close the function's L2 receive path for RoCE frames (hwrm-kernel.ts roceReceivePath). */
const L2_RECEIVE_COMMANDS = new Set<number>([
  H.HWRM.VNIC_CFG, H.HWRM.VNIC_FREE, H.HWRM.CFA_L2_FILTER_ALLOC, H.HWRM.CFA_L2_FILTER_FREE,
]);

type Req = Record<string, number | bigint | Uint8Array>;
type Answer = { error: number } | { values: Record<string, unknown> };

const WINDOW_BYTES = 128;
const MAX_EXT_REQ_LEN = 336;
const MAX_NQ_LENGTH = 1 << 20;
const CONTEXT_MEMORY_V2 = new Set<number>([H.HWRM.FUNC_BACKING_STORE_QCAPS_V2, H.HWRM.FUNC_BACKING_STORE_CFG_V2]);
const CONTEXT_MEMORY_V1 = new Set<number>([H.HWRM.FUNC_BACKING_STORE_QCAPS, H.HWRM.FUNC_BACKING_STORE_CFG]);

/** The firmware status register's value on healthy firmware (Linux bnxt.h BNXT_FW_STATUS_HEALTHY). */
const FW_STATUS_HEALTHY = 0x8000;

export class HwrmFirmware {
  readonly faults = new HwrmFaults();
  /** Context memory V2 (QCAPS_V2 / CFG_V2) between FUNC_RESETs. */
  private readonly backingStoreV2 = new BackingStoreV2();
  /** The fast-path TQM rings BACKING_STORE_QCAPS offers (controls.offerTqmRings). */
  private tqmOffer: TqmOffer = DEFAULT_TQM_OFFER;
  private nextRingId = 1;
  private nextStatId = 1;
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
      this.lastInternalError = e instanceof Error ? (e.stack ?? e.message) : String(e);
    }
  }

  /**
   * What a function reset drops, as HWRM_FUNC_RESET asks and as a PCI function reset (FLR,
   * vfio-user DEVICE_RESET) does: rings, contexts, registration, reservations, context memory
   * and every RoCE object a previous owner left.
   */
  resetFunction(): void {
    this.fn.clear();
    this.backingStoreV2.reset();
    resetKernelState(this.fn);
    this.roce.reset();
    this.onReceivePath(false);
  }

  private handle(request: Uint8Array, viaShort: boolean): void {
    const hdr = H.HwrmInput.decode(request);
    this.bus.trace?.write(hwrmEvent('req', hdr.req_type, request));
    const fate = this.faults.next(hdr.req_type);
    if (fate.silent) return;
    const spec = H.hwrmCommand(hdr.req_type);
    let answer: Answer;
    if (fate.refuse) answer = { error: fate.refuse };
    else if (!spec) answer = { error: H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED };
    else if (!viaShort && spec.request.size > WINDOW_BYTES) answer = { error: H.HWRM_ERR_CODE.INVALID_PARAMS };
    else answer = this.execute(hdr.req_type, spec.request.decode(request) as Req);
    this.respond(hdr, spec, answer, fate.malformed);
  }

  private execute(reqType: number, req: Req): Answer {
    const E = H.HWRM_ERR_CODE;
    if (CONTEXT_MEMORY_V1.has(reqType) || CONTEXT_MEMORY_V2.has(reqType)) return this.contextMemory(reqType, req);
    switch (reqType) {
      case H.HWRM.VER_GET:
        return { values: this.verGet() };
      case H.HWRM.FUNC_RESET:
        this.resetFunction();
        return { values: {} };
      case H.HWRM.FUNC_QCAPS:
        if (req.fid !== H.HWRM_FID_SELF) return { error: E.INVALID_PARAMS };
        return { values: this.funcQcaps() };
      case H.HWRM.FUNC_QCFG:
        if (req.fid !== H.HWRM_FID_SELF) return { error: E.INVALID_PARAMS };
        return { values: this.funcQcfg() };
      case H.HWRM.FUNC_DRV_RGTR:
        this.fn.registered = true;
        // Current Thor firmware takes FUNC_DRV_IF_CHANGE (bnxt.c bnxt_hwrm_func_drv_rgtr sets
        // BNXT_FW_CAP_IF_CHANGE from this flag, and bnxt_open then sends it).
        return { values: { flags: H.FUNC_DRV_RGTR_RESP_FLAGS.IF_CHANGE_SUPPORTED } };
      case H.HWRM.FUNC_DRV_UNRGTR:
        if (!this.fn.registered) return { error: E.INVALID_PARAMS };
        this.fn.registered = false;
        return { values: {} };
      case H.HWRM.FUNC_DRV_IF_CHANGE:
        // Kept, not enforced: bnxt_re allocates its rings at probe, before any bnxt_open.
        // No resource change or hot reset to report (RESC_CHANGE, HOT_FW_RESET_DONE stay 0).
        this.fn.interfaceUp = ((req.flags as number) & H.FUNC_DRV_IF_CHANGE_REQ_FLAGS.UP) !== 0;
        return { values: { flags: 0 } };
      case H.HWRM.PORT_PHY_QCFG:
        return { values: this.portPhyQcfg() };
      case H.HWRM.STAT_CTX_ALLOC:
        return this.statCtxAlloc(req);
      case H.HWRM.STAT_CTX_FREE: {
        const id = req.stat_ctx_id as number;
        if (!this.fn.statCtxs.delete(id)) return { error: E.INVALID_PARAMS };
        return { values: { stat_ctx_id: id } };
      }
      case H.HWRM.RING_ALLOC:
        return this.ringAlloc(req);
      case H.HWRM.RING_FREE: {
        const id = req.ring_id as number;
        const ring = this.fn.rings.get(id);
        if (req.ring_type !== H.RING_ALLOC_REQ_RING_TYPE.NQ) return kernelRingFree(this.fn, req);
        if (!ring) return { error: E.INVALID_PARAMS };
        if (this.roce.usesRing(id)) return { error: E.RESOURCE_ACCESS_DENIED };
        this.fn.rings.delete(id);
        return { values: {} };
      }
      default:
        return this.kernelCommand(reqType, req);
    }
  }

  /**
   * The context memory commands, in the chip's own form only: the other one is a command this
   * firmware does not have (the stricter reading: a V2 chip requires V2, BS_V2_REQUIRED; what
   * a P5 firmware without BS_V2_SUPPORTED answers to QCAPS_V2 is not public).
   */
  private contextMemory(reqType: number, req: Req): Answer {
    const v2 = this.bus.chip.backingStore === 'v2';
    if (CONTEXT_MEMORY_V2.has(reqType) !== v2) return { error: H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED };
    if (v2) return this.contextMemoryV2(reqType, req);
    if (reqType === H.HWRM.FUNC_BACKING_STORE_QCAPS) return { values: answerBackingStoreQcaps(this.tqmOffer) };
    // CFG: no registration needed: Linux's bnxt_en configures context memory before it registers
    // (bnxt.c bnxt_fw_init_one_p2: bnxt_hwrm_func_qcaps -> bnxt_alloc_ctx_mem, then
    // bnxt_hwrm_func_drv_rgtr), and was seen doing so over vfio-user (docs/bnxt-en-bringup.md).
    const state = checkBackingStoreCfg(req, this.bus.iommu, this.tqmOffer);
    if (typeof state === 'number') return { error: state };
    this.fn.backingStore = state;
    return { values: {} };
  }

  /** QCAPS_V2 and CFG_V2: the function has context memory only once BS_CFG_ALL_DONE completed the set. */
  private contextMemoryV2(reqType: number, req: Req): Answer {
    if (reqType === H.HWRM.FUNC_BACKING_STORE_QCAPS_V2) return this.backingStoreV2.qcaps(req);
    const a = this.backingStoreV2.cfg(req, this.bus.iommu);
    if ('state' in a && a.state) this.fn.backingStore = a.state;
    return 'error' in a ? a : { values: {} };
  }

  /**
   * The statistics blocks the firmware writes: sizeof(ctx_hw_stats), 160 bytes, and where
   * VNIC_QCAPS offers TPA v2 also the chip's extended block (168 on P5, 176 on P7), the sizes
   * bnxt_en asks for (bnxt.c bnxt_hwrm_vnic_qcaps sets hw_ring_stats_size; kernels before the
   * extended block sent 160 to TPA v2 firmware). Any other length would have the firmware write
   * past the driver's buffer or leave part of it stale: refused (the strict reading).
   */
  private statsLengths(): readonly number[] {
    return this.fn.tpaV2MaxAggs > 0 ? [H.CTX_HW_STATS_BYTES, this.bus.chip.ringStatsBytes] : [H.CTX_HW_STATS_BYTES];
  }

  private statCtxAlloc(req: Req): Answer {
    const E = H.HWRM_ERR_CODE;
    if (!this.fn.registered) return { error: E.RESOURCE_ACCESS_DENIED };
    const addr = req.stats_dma_addr as number;
    const len = req.stats_dma_length as number;
    if (!this.statsLengths().includes(len) || !this.bus.iommu.check(addr, len)) return { error: E.INVALID_PARAMS };
    if (beyondReservation(this.fn, 'stat') !== undefined) return { error: E.RESOURCE_ALLOC_ERROR };
    const id = this.nextStatId++;
    this.fn.statCtxs.set(id, { dmaAddr: addr, roce: ((req.stat_ctx_flags as number) & 1) !== 0 });
    return { values: { stat_ctx_id: id } };
  }

  /** bnxt_en's commands (hwrm-kernel.ts); the L2 ones may open or close the RoCE receive path. */
  private kernelCommand(reqType: number, req: Req): Answer {
    const answer = answerKernelCommand(this.bus, this.fn, reqType, req) ?? { error: H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED };
    if (L2_RECEIVE_COMMANDS.has(reqType)) this.onReceivePath(roceReceivePath(this.fn, this.bus.config.mac));
    return answer;
  }

  private ringAlloc(req: Req): Answer {
    const E = H.HWRM_ERR_CODE;
    if (!this.fn.registered) return { error: E.RESOURCE_ACCESS_DENIED };
    if (!this.fn.backingStore) return { error: E.RESOURCE_ACCESS_DENIED }; // P5 keeps ring contexts in context memory
    // The CREQ and the RoCE NQs are rings of type NQ on P5; L2 rings (bnxt_en's) live in hwrm-kernel.ts.
    if (req.ring_type !== H.RING_ALLOC_REQ_RING_TYPE.NQ) {
      return kernelRingAlloc(this.bus, this.fn, req, () => this.nextRingId++);
    }
    const length = req.length as number;
    const depth = req.page_tbl_depth as number;
    const pageSizeLog2 = req.page_size as number;
    const addr = req.page_tbl_addr as number;
    if (length < H.RING_ALLOC_MIN_LENGTH || length > MAX_NQ_LENGTH || depth > 1) return { error: E.INVALID_PARAMS };
    if (depth === 0 && !this.bus.iommu.check(addr, length * 16)) return { error: E.INVALID_PARAMS };
    if (depth === 1) {
      const pages = Math.ceil((length * 16) / 2 ** pageSizeLog2);
      if (pageSizeLog2 < 12 || pageSizeLog2 > 30 || !this.bus.iommu.check(addr, pages * 8)) {
        return { error: E.INVALID_PARAMS };
      }
    }
    if (beyondReservation(this.fn, 'nq') !== undefined) return { error: E.RESOURCE_ALLOC_ERROR };
    const id = this.nextRingId++;
    this.fn.rings.set(id, {
      id, pageTblAddr: addr, pageTblDepth: depth, pageSizeLog2, length, logicalId: req.logical_id as number,
      intMode: req.int_mode as number,
    });
    return { values: { ring_id: id, logical_ring_id: req.logical_id } };
  }

  private verGet(): Record<string, unknown> {
    const name = (s: string) => Uint8Array.from({ length: 16 }, (_, i) => s.charCodeAt(i) || 0);
    // The chip's identity and the interface version it reports come from its profile.
    const chip = this.bus.chip;
    const intf = chip.model.hwrmInterface;
    return {
      hwrm_intf_maj_8b: intf.maj, hwrm_intf_min_8b: intf.min, hwrm_intf_upd_8b: intf.upd, hwrm_intf_rsvd_8b: intf.rsvd,
      hwrm_fw_maj_8b: 230, hwrm_fw_min_8b: 2, hwrm_fw_bld_8b: 52, hwrm_fw_rsvd_8b: 0,
      mgmt_fw_maj_8b: 230, mgmt_fw_min_8b: 2, mgmt_fw_bld_8b: 52,
      netctrl_fw_maj_8b: 230, netctrl_fw_min_8b: 2, netctrl_fw_bld_8b: 52,
      roce_fw_maj_8b: 230, roce_fw_min_8b: 2, roce_fw_bld_8b: 52,
      dev_caps_cfg: H.VER_GET_RESP_DEV_CAPS_CFG.SHORT_CMD_SUPPORTED,
      hwrm_fw_name: name('rig-bnxt-emu'), mgmt_fw_name: name('ChiMP'), netctrl_fw_name: name('netctrl'),
      active_pkg_name: name('230.2.52.0'), roce_fw_name: name('roce'),
      chip_num: chip.chipNum, chip_rev: chip.model.chipRev, chip_metal: chip.model.chipMetal, chip_platform_type: 0,
      max_req_win_len: WINDOW_BYTES, max_resp_len: H.HWRM_MAX_RESP_LEN, def_req_timeout: 500, flags: 0, always_1: 1,
      hwrm_intf_major: intf.maj, hwrm_intf_minor: intf.min, hwrm_intf_build: intf.upd, hwrm_intf_patch: intf.rsvd,
      hwrm_fw_major: 230, hwrm_fw_minor: 2, hwrm_fw_build: 52, hwrm_fw_patch: 0,
      roce_fw_major: 230, roce_fw_minor: 2, roce_fw_build: 52, roce_fw_patch: 0,
      max_ext_req_len: MAX_EXT_REQ_LEN, max_req_timeout: 40,
    };
  }

  private funcQcaps(): Record<string, unknown> {
    const F = H.FUNC_QCAPS_RESP_FLAGS;
    return {
      fid: 0, port_id: 0, flags: F.ROCE_V1_SUPPORTED | F.ROCE_V2_SUPPORTED | F.EXT_STATS_SUPPORTED,
      mac_address: this.bus.config.mac, max_rsscos_ctx: 64, max_cmpl_rings: 128, max_tx_rings: 128, max_rx_rings: 128,
      max_l2_ctxs: 128, max_vnics: 64, max_stat_ctx: 128, max_hw_ring_grps: 0, flags_ext: this.contextMemoryFlags(),
    };
  }

  /**
   * FUNC_QCAPS flags_ext for the chip's context memory commands: a V2 chip (Thor2) offers and
   * requires the V2 ones (hsi.h FUNC_QCAPS_RESP_FLAGS_EXT_BS_V2_SUPPORTED / _REQUIRED; bnxt.c
   * __bnxt_hwrm_func_qcaps), a V1 chip neither.
   */
  private contextMemoryFlags(): number {
    const X = H.FUNC_QCAPS_RESP_FLAGS_EXT;
    return this.bus.chip.backingStore === 'v2' ? X.BS_V2_SUPPORTED | X.BS_V2_REQUIRED : 0;
  }

  private funcQcfg(): Record<string, unknown> {
    const chip = this.bus.chip.model;
    return {
      fid: 0, port_id: 0, mac_address: this.bus.config.mac, admin_mtu: this.bus.config.mtu, mru: this.bus.config.mtu,
      alloc_msix: 64, l2_doorbell_bar_size_kb: chip.l2DoorbellBarSizeKb, always_1: 1,
      legacy_l2_db_size_kb: chip.legacyL2DbSizeKb, db_page_size: 0, host_mtu: this.bus.config.mtu,
      ...reservedQcfgFields(this.fn),
    };
  }

  private portPhyQcfg(): Record<string, unknown> {
    return {
      link: H.PORT_PHY_QCFG_RESP_LINK.LINK, link_speed: H.PORT_PHY_QCFG_RESP_LINK_SPEED['200GB'], duplex_cfg: 1,
      duplex_state: 1,
      media_type: H.PORT_PHY_QCFG_RESP_MEDIA_TYPE.DAC, active_lanes: 4,
    };
  }

  /** Writes the answer at resp_addr: everything but the last byte, then the valid byte. */
  private respond(
    hdr: { req_type: number; cmpl_ring: number; seq_id: number; resp_addr: number },
    spec: H.HwrmCommandSpec | undefined, answer: Answer, malformed: MalformedKind | undefined,
  ): void {
    let bytes: Uint8Array;
    if ('error' in answer) {
      bytes = H.HwrmErrOutput.encode({
        error_code: answer.error, req_type: hdr.req_type, seq_id: hdr.seq_id, resp_len: 16, valid: 1,
      });
    } else {
      const layout = spec!.response;
      bytes = layout.encode({
        ...answer.values, error_code: 0, req_type: hdr.req_type, seq_id: hdr.seq_id, resp_len: layout.size, valid: 1,
      } as never);
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
    offerTpaV2: (maxAggs: number) => { this.fn.tpaV2MaxAggs = maxAggs; },
    /** BACKING_STORE_QCAPS offers `count` fast-path TQM rings and `ext` beyond 8 (before the CFG). */
    offerTqmRings: (count: number, ext: number) => { this.tqmOffer = { count, ext }; },
    seen: () => this.faults.seen,
    internalErrors: () => this.internalErrors,
    lastInternalError: () => this.lastInternalError,
    backingStoreV2: () => ({
      allDone: this.backingStoreV2.allDone, configured: this.backingStoreV2.configuredCount,
      lastRefusal: this.backingStoreV2.lastRefusal,
    }),
    resources: () => ({
      registered: this.fn.registered, interfaceUp: this.fn.interfaceUp,
      backingStore: this.fn.backingStore !== undefined, rings: this.fn.rings.size, statCtxs: this.fn.statCtxs.size,
    }),
  };
}
