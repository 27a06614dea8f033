/**
 * Reading send WQEs as the driver posted them (static mode, 128 bytes; roce_hsi.h: struct
 * sq_send_hdr / sq_rdma_hdr / sq_sge). The model checks again
 * what the driver should have checked before the doorbell: the WQE type, its SGE count, each
 * SGE's key, domain, bounds and access.
 */
import { CqReqStatus } from '../../../firmware-hwrm/roce/cqe.ts';
import { ReqErrStateReason } from '../../../firmware-hwrm/roce/creq.ts';
import {
  STATIC_MAX_INLINE_BYTES, STATIC_WQE_BYTES, WQE_HEADER_BYTES, WQE_HEADER_SLOTS, WqeFlags, WqeType,
} from '../../../firmware-hwrm/roce/wqe.ts';
import * as Wqe from '../../../firmware-hwrm/roce/wqe.g.ts';
import { MAX_MESSAGE_BYTES } from '../../../firmware-hwrm/roce/ib-transport.ts';
import { SglError, loadSgl } from './sgl.ts';
import { sqWqeEvent } from '../../../firmware-hwrm/trace.ts';
import { MAX_SGE, WqeKind, type QpTransport, type SgList } from './transport.ts';
import type { EngineCore } from './core.ts';


export function wqeKindOf(wqeType: number): number {
  switch (wqeType) {
    case WqeType.SEND:
    case WqeType.SEND_W_IMMEAD:
      return WqeKind.SEND;
    case WqeType.WRITE_WQE:
    case WqeType.WRITE_W_IMMEAD:
      return WqeKind.WRITE;
    case WqeType.READ_WQE:
      return WqeKind.READ;
    default:
      // SEND_W_INVALID, atomics, local invalidate, fast register, bind: not modelled.
      return WqeKind.INVALID;
  }
}

/** Reads the fixed header fields of WQE `slot` into the transport's per-slot arrays. */
export function readWqeHeader(core: EngineCore, t: QpTransport, slot: number): boolean {
  const iommu = core.iommu;
  const u = iommu.wordsOf(t.qp.sq.entryIova(slot), STATIC_WQE_BYTES);
  if (u === undefined) return false;
  const w = iommu.wordOffset;
  const type = Wqe.sqSendHdrWqeType(u, w);
  t.wqeType[slot] = type;
  t.wqeFlags[slot] = Wqe.sqSendHdrFlags(u, w);
  t.wqeKind[slot] = wqeKindOf(type);
  t.wqeLength[slot] = Wqe.sqSendHdrLength(u, w);
  t.wqeStatus[slot] = 0;
  if (core.bus.wqeTrace !== undefined) core.bus.wqeTrace.write(sqWqeEvent(t.qp.qpn, wqeBytes(u, w)));
  return true;
}

/** A copy of the static-mode WQE at word `w` of `u`, for its trace record (tracing on only). */
export function wqeBytes(u: Uint32Array, w: number): Uint8Array {
  return new Uint8Array(u.buffer, u.byteOffset + w * 4, STATIC_WQE_BYTES).slice();
}

/** Loads WQE `slot`'s remote address, key (sq_rdma_hdr) and immediate for the requester. */
export function loadTxHeader(core: EngineCore, t: QpTransport, slot: number): void {
  const iommu = core.iommu;
  const u = iommu.wordsOf(t.qp.sq.entryIova(slot), STATIC_WQE_BYTES);
  if (u === undefined) return;
  const w = iommu.wordOffset;
  t.txImm = Wqe.sqSendHdrInvKeyOrImmData(u, w); // the same word as sq_rdma_hdr's imm_data
  t.txRemoteVaLo = Wqe.sqRdmaHdrRemoteVaLo(u, w);
  t.txRemoteVaHi = Wqe.sqRdmaHdrRemoteVaHi(u, w);
  t.txRkey = Wqe.sqRdmaHdrRemoteKey(u, w);
}

/**
 * Loads WQE `slot`'s local data description into `sgl`: inline bytes, or SGEs resolved and
 * checked through their regions (READ: the regions must grant local write). Returns 0, or
 * the CqReqStatus the WQE fails with (its QP error reason left in t.localFailReason).
 */
export function loadWqeSgl(core: EngineCore, t: QpTransport, slot: number, sgl: SgList): number {
  const base = t.qp.sq.entryIova(slot);
  const iommu = core.iommu;
  const u = iommu.wordsOf(base, STATIC_WQE_BYTES);
  if (u === undefined) return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, ReqErrStateReason.REQ_TX_PCI_ERROR);
  const sizeSlots = Wqe.sqSendHdrWqeSize(u, iommu.wordOffset);
  const kind = t.wqeKind[slot]!;
  const flags = t.wqeFlags[slot]!;
  const length = t.wqeLength[slot]!;
  if (kind === WqeKind.INVALID) return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, ReqErrStateReason.REQ_INVALID_OP_ERROR);
  if (length > MAX_MESSAGE_BYTES) return fail(t, CqReqStatus.LOCAL_LENGTH_ERR, ReqErrStateReason.REQ_WQE_FORMAT_ERROR);
  if ((flags & WqeFlags.INLINE) !== 0 && kind !== WqeKind.READ) {
    if (length > STATIC_MAX_INLINE_BYTES) return fail(t, CqReqStatus.LOCAL_LENGTH_ERR, ReqErrStateReason.REQ_WQE_FORMAT_ERROR);
    sgl.clear();
    sgl.inlineIova = base + WQE_HEADER_BYTES;
    sgl.total = length;
    return 0;
  }
  const sges = sizeSlots - WQE_HEADER_SLOTS;
  const limit = t.qp.sqSge > 0 && t.qp.sqSge < MAX_SGE ? t.qp.sqSge : MAX_SGE;
  if (sges < 0 || sges > limit) return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, ReqErrStateReason.REQ_WQE_FORMAT_ERROR);
  const status = loadSgl(iommu, core.tables, t.qp.pd, sgl, base + WQE_HEADER_BYTES, sges, kind === WqeKind.READ);
  if (status === SglError.FAULT) return fail(t, CqReqStatus.LOCAL_PROTECTION_ERR, ReqErrStateReason.REQ_TX_PCI_ERROR);
  if (status !== SglError.OK) {
    return fail(t, CqReqStatus.LOCAL_PROTECTION_ERR, kind === WqeKind.READ ? ReqErrStateReason.REQ_RX_MEMORY_ERROR : ReqErrStateReason.REQ_TX_MEMORY_ERROR);
  }
  if (sgl.total < length) return fail(t, CqReqStatus.LOCAL_LENGTH_ERR, ReqErrStateReason.REQ_WQE_FORMAT_ERROR);
  return 0;
}

function fail(t: QpTransport, status: number, reason: number): number {
  t.localFailReason = reason;
  return status;
}
