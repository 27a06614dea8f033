/**
 * Reading send WQEs as the driver posted them (roce_hsi.h: struct sq_send_hdr / sq_rdma_hdr /
 * sq_sge): 128 bytes each in static mode; in variable-size mode wqe_size 16-byte slots from
 * the WQE's first slot, each slot read on its own as the ring may wrap or cross a page between
 * them (Linux qplib_fp.c bnxt_qplib_post_send, bnxt_qplib_get_prod_qe). The model checks again
 * what the driver should have checked before the doorbell: the WQE type, its SGE count, each
 * SGE's key, domain, bounds and access.
 */
import { CqReqStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ReqErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import {
  SLOT_BYTES, STATIC_MAX_INLINE_BYTES, STATIC_WQE_BYTES, STATIC_WQE_SLOTS, WQE_HEADER_BYTES, WQE_HEADER_SLOTS, WqeFlags,
  WqeType,
} from '../../../../firmware-hwrm/roce/wqe.ts';
import * as Wqe from '../../../../firmware-hwrm/roce/wqe.g.ts';
import { MAX_MESSAGE_BYTES } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import { SglError, loadSglSlots, loadSglWords } from './sgl.ts';
import { rqWqeEvent, sqWqeEvent } from '../../../../firmware-hwrm/trace.ts';
import { MAX_SGE, WqeKind, type QpTransport, type SgList } from './transport.ts';
import type { EngineCore } from './core.ts';
import { ringSlot } from '../../../../firmware-hwrm/ring.ts';


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

/**
 * The words of WQE `slot`'s header slot `k` (0: type, flags, size, length; 1: the RDMA
 * fields), with iommu.wordOffset set so the header accessors' word indices hold: undefined if
 * the memory is not mapped.
 */
function headerWords(core: EngineCore, t: QpTransport, slot: number, k: number): Uint32Array | undefined {
  const iommu = core.iommu;
  const sq = t.qp.sq;
  if (!t.variable) return iommu.wordsIn(sq.memory, sq.entryOffset(slot), STATIC_WQE_BYTES);
  const u = iommu.wordsIn(sq.memory, sq.entryOffset(ringSlot(t.wqeSlot[slot]! + k, sq.entries)), SLOT_BYTES);
  iommu.wordOffset -= k * (SLOT_BYTES / 4); // slot k's words sit k x 4 words into the header
  return u;
}

/**
 * Reads the fixed header fields of WQE `slot` into the transport's per-slot arrays. Returns the
 * header's words, iommu.wordOffset at its first (for loadFetchedWqe), or undefined if unmapped.
 */
export function readWqeHeader(core: EngineCore, t: QpTransport, slot: number): Uint32Array | undefined {
  t.wqeStatus[slot] = 0;
  const u = headerWords(core, t, slot, 0);
  if (u === undefined) return undefined;
  const w = core.iommu.wordOffset;
  const type = Wqe.sqSendHdrWqeType(u, w);
  t.wqeType[slot] = type;
  t.wqeFlags[slot] = Wqe.sqSendHdrFlags(u, w);
  t.wqeKind[slot] = wqeKindOf(type);
  t.wqeLength[slot] = Wqe.sqSendHdrLength(u, w);
  if (core.bus.wqeTrace !== undefined) traceSqWqe(core, t, slot, u, w);
  return u;
}

/**
 * The "wqe" trace record of WQE `slot` (tracing on only). Its own function, so the hook in
 * readWqeHeader stays one check and one call, and the hot function keeps its inlining budget.
 */
function traceSqWqe(core: EngineCore, t: QpTransport, slot: number, u: Uint32Array, w: number): void {
  core.bus.wqeTrace?.write(sqWqeEvent(t.qp.qpn, tracedWqe(core, t, slot, u, w)));
  core.iommu.wordOffset = w; // readWqeHeader's answer (tracedWqe's lookups moved it)
}

/**
 * A copy of WQE `slot` for its trace record (tracing on only): the static 128 bytes, or a
 * variable-size WQE's wqe_size slots (at most 8) gathered from the ring, zero past its end.
 */
function tracedWqe(core: EngineCore, t: QpTransport, slot: number, u: Uint32Array, w: number): Uint8Array {
  if (!t.variable) return wqeBytes(u, w);
  const out = new Uint8Array(STATIC_WQE_BYTES);
  const slots = Math.min(Wqe.sqSendHdrWqeSize(u, w), STATIC_WQE_SLOTS);
  const sq = t.qp.sq;
  for (let k = 0; k < slots; k++) {
    const words = core.iommu.wordsOf(sq.entryIova(ringSlot(t.wqeSlot[slot]! + k, sq.entries)), SLOT_BYTES);
    if (words === undefined) break;
    const at = words.byteOffset + core.iommu.wordOffset * 4;
    out.set(new Uint8Array(words.buffer, at, SLOT_BYTES), k * SLOT_BYTES);
  }
  return out;
}

/** A copy of the static-mode WQE at word `w` of `u`, for its trace record (tracing on only). */
export function wqeBytes(u: Uint32Array, w: number, bytes: number = STATIC_WQE_BYTES): Uint8Array {
  // Within the mapping the words came from (a variable-mode receive WQE may end a mapping).
  const n = Math.min(bytes, u.byteLength - w * 4);
  return new Uint8Array(u.buffer, u.byteOffset + w * 4, n).slice();
}

/** The "wqe" trace record of a receive WQE (tracing on only; the responder's hook is one check and one call). */
export function traceRqWqe(core: EngineCore, t: QpTransport, u: Uint32Array, w: number, bytes: number): void {
  core.bus.wqeTrace?.write(rqWqeEvent(t.qp.qpn, wqeBytes(u, w, bytes)));
}

/**
 * LOAD for the requester: WQE `slot`'s local data description into `sgl` (as loadWqeSgl), and,
 * if that is accepted, its remote address, key (sq_rdma_hdr) and immediate into t.txRemoteVaLo,
 * txRemoteVaHi, txRkey and txImm. Returns 0 or the CqReqStatus the WQE fails with.
 */
export function loadWqe(core: EngineCore, t: QpTransport, slot: number, sgl: SgList): number {
  return loadWqeParts(core, t, slot, sgl, true, undefined, 0);
}

/**
 * loadWqe for the WQE whose header readWqeHeader has just read as words `u` from word `w`, with
 * no IOMMU access since (the requester's GET_WQE, then its LOAD): the header is not looked up again.
 */
export function loadFetchedWqe(
  core: EngineCore, t: QpTransport, slot: number, sgl: SgList, u: Uint32Array, w: number,
): number {
  return loadWqeParts(core, t, slot, sgl, true, u, w);
}

/**
 * Loads WQE `slot`'s local data description into `sgl`: inline bytes, or SGEs resolved and
 * checked through their regions (READ: the regions must grant local write). Returns 0, or
 * the CqReqStatus the WQE fails with (its QP error reason left in t.localFailReason).
 */
export function loadWqeSgl(core: EngineCore, t: QpTransport, slot: number, sgl: SgList): number {
  return loadWqeParts(core, t, slot, sgl, false, undefined, 0);
}

/**
 * loadWqeSgl, and with `remote` the sq_rdma_hdr fields too. The WQE's words come from one
 * IOMMU lookup when they lie in one piece: a static-mode WQE always (128 bytes, inside a page),
 * a variable-size one when its wqe_size slots neither wrap the ring nor leave the page and the
 * mapping its header slot is in (wholeWqe). Otherwise each slot is looked up on its own, as the
 * driver may have written them in different pages. Both read the same words and refuse the same
 * WQEs: a lookup skipped is one that would have found the same mapping. `given` (word `givenW`):
 * the header's words as readWqeHeader found them just before, or undefined to look them up.
 */
function loadWqeParts(
  core: EngineCore, t: QpTransport, slot: number, sgl: SgList, remote: boolean, given: Uint32Array | undefined,
  givenW: number,
): number {
  const iommu = core.iommu;
  const variable = t.variable;
  // A variable-mode WQE whose wqe_size did not fit the slots its doorbell posted (doorbells.ts).
  if (variable && t.wqeMalformed[slot] !== 0) {
    return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, ReqErrStateReason.REQ_WQE_FORMAT_ERROR);
  }
  const u = given ?? headerWords(core, t, slot, 0);
  if (u === undefined) return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, ReqErrStateReason.REQ_TX_PCI_ERROR);
  const w = given !== undefined ? givenW : iommu.wordOffset;
  const sizeSlots = Wqe.sqSendHdrWqeSize(u, w);
  const whole = !variable || wholeWqe(t, slot, u, w, sizeSlots);
  const kind = t.wqeKind[slot]!;
  const flags = t.wqeFlags[slot]!;
  const length = t.wqeLength[slot]!;
  const F = ReqErrStateReason.REQ_WQE_FORMAT_ERROR;
  const OP = CqReqStatus.LOCAL_QP_OPERATION_ERR;
  if (kind === WqeKind.INVALID) return fail(t, OP, ReqErrStateReason.REQ_INVALID_OP_ERROR);
  if (length > MAX_MESSAGE_BYTES) return fail(t, CqReqStatus.LOCAL_LENGTH_ERR, F);
  const first = variable ? t.wqeSlot[slot]! + WQE_HEADER_SLOTS : 0;
  const sq = t.qp.sq;
  if ((flags & WqeFlags.INLINE) !== 0 && kind !== WqeKind.READ) {
    if (length > STATIC_MAX_INLINE_BYTES) return fail(t, CqReqStatus.LOCAL_LENGTH_ERR, F);
    sgl.clear();
    sgl.inlineMemory = sq.memory;
    sgl.inlineOffset = variable ? inlineOffset(t, first, length) : sq.entryOffset(slot) + WQE_HEADER_BYTES;
    // Inline bytes that wrap the ring or cross a page are not modelled: refused, not misread.
    if (sgl.inlineOffset < 0) return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, F);
    sgl.total = length;
    if (remote) loadRemote(core, t, slot, u, w, whole);
    return 0;
  }
  const sges = sizeSlots - WQE_HEADER_SLOTS;
  const limit = t.qp.sqSge > 0 && t.qp.sqSge < MAX_SGE ? t.qp.sqSge : MAX_SGE;
  if (sges < 0 || sges > limit) return fail(t, CqReqStatus.LOCAL_QP_OPERATION_ERR, F);
  const read = kind === WqeKind.READ;
  const status = whole
    ? loadSglWords(core.tables, t.qp.pd, sgl, u, w + WQE_HEADER_WORDS, sges, read)
    : loadSglSlots(iommu, core.tables, t.qp.pd, sgl, t.qp.sq, first, sges, read);
  if (status === SglError.FAULT) return fail(t, CqReqStatus.LOCAL_PROTECTION_ERR, ReqErrStateReason.REQ_TX_PCI_ERROR);
  if (status !== SglError.OK) {
    const reason = read ? ReqErrStateReason.REQ_RX_MEMORY_ERROR : ReqErrStateReason.REQ_TX_MEMORY_ERROR;
    return fail(t, CqReqStatus.LOCAL_PROTECTION_ERR, reason);
  }
  if (sgl.total < length) return fail(t, CqReqStatus.LOCAL_LENGTH_ERR, F);
  if (remote) loadRemote(core, t, slot, u, w, whole);
  return 0;
}

/** The header's words: the SGEs (or inline bytes) start this many words past the header's first. */
const WQE_HEADER_WORDS = WQE_HEADER_BYTES / 4;

/**
 * True if variable-size WQE `slot`'s `sizeSlots` slots are all in `u` from word `w` (its header
 * slot's words): they do not wrap the ring, stay in the header's page and inside the mapping.
 */
function wholeWqe(t: QpTransport, slot: number, u: Uint32Array, w: number, sizeSlots: number): boolean {
  if (sizeSlots < WQE_HEADER_SLOTS) return false;
  const sq = t.qp.sq;
  const at = ringSlot(t.wqeSlot[slot]!, sq.entries);
  if (at + sizeSlots > sq.entries) return false;
  const bytes = sizeSlots * SLOT_BYTES;
  return sq.memory.contiguous(sq.entryOffset(at)) >= bytes && w + bytes / 4 <= u.length;
}

/**
 * WQE `slot`'s remote address, key (sq_rdma_hdr) and immediate, from its header words `u` at
 * `w` (the RDMA fields there too when `whole`; else its second slot is looked up on its own).
 */
function loadRemote(core: EngineCore, t: QpTransport, slot: number, u: Uint32Array, w: number, whole: boolean): void {
  t.txImm = Wqe.sqSendHdrInvKeyOrImmData(u, w); // the same word as sq_rdma_hdr's imm_data
  let r: Uint32Array | undefined = u;
  let rw = w;
  if (!whole) {
    r = headerWords(core, t, slot, 1);
    if (r === undefined) return;
    rw = core.iommu.wordOffset;
  }
  t.txRemoteVaLo = Wqe.sqRdmaHdrRemoteVaLo(r, rw);
  t.txRemoteVaHi = Wqe.sqRdmaHdrRemoteVaHi(r, rw);
  t.txRkey = Wqe.sqRdmaHdrRemoteKey(r, rw);
}

/**
 * Offset in the send ring's memory of a variable-mode WQE's inline bytes from free-running slot
 * `first`, or -1 if they are not contiguous in bus addresses.
 */
function inlineOffset(t: QpTransport, first: number, length: number): number {
  const sq = t.qp.sq;
  const slots = Math.ceil(length / SLOT_BYTES);
  const at = ringSlot(first, sq.entries);
  if (slots === 0) return sq.entryOffset(at);
  if (at + slots > sq.entries) return -1;
  const start = sq.entryIova(at);
  return sq.entryIova(at + slots - 1) === start + (slots - 1) * SLOT_BYTES ? sq.entryOffset(at) : -1;
}

function fail(t: QpTransport, status: number, reason: number): number {
  t.localFailReason = reason;
  return status;
}
