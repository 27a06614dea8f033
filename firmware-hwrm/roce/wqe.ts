/**
 * Send- and receive-queue entries in static WQE mode (P5 default), and the 16-byte PSN-search
 * entries kept after the SQ ring (roce_hsi.h; the kernel's bnxt_qplib_post_send, rdma-core's
 * bnxt_re_post_send).
 *
 *   SQ/RQ ring = 16-byte slots; static mode: every WQE occupies 8 slots (128 bytes)
 *   ┌──────── slot 0–1: 32-byte header ────────┬── slot 2..7: SGEs (16 B) or ≤ 96 B inline ──┐
 *   │ type flags wqe_size · imm length …       │ va_or_pa(8) l_key(4) size(4) …             │
 *   └──────────────────────────────────────────┴─────────────────────────────────────────────┘
 *   SQ memory = ring (sq_size × 128 B) immediately followed by sq_size × 16-byte psn_search_ext
 *
 * The tables below are the one description of each format: the hot paths of the driver and
 * the software NIC use the word accessors generated from them (wqe.g.ts) on a Uint32Array
 * over the ring (little-endian host).
 */
import { layout, u8, u16, u32, u64, u64n } from '../layout.ts';
import { namer } from './names.ts';

export const SLOT_BYTES = 16;
export const WQE_HEADER_BYTES = 32;
export const WQE_HEADER_SLOTS = 2;
export const STATIC_WQE_BYTES = 128;
export const STATIC_WQE_SLOTS = 8;
export const STATIC_MAX_SGE = 6;
export const STATIC_MAX_INLINE_BYTES = 96;
/**
 * Variable-size WQE mode (Thor2): an SQ's depth in slots is a multiple of this (Linux
 * qplib_fp.h BNXT_VAR_MAX_SLOT_ALIGN, bnxt_qplib_get_depth).
 */
export const VAR_SQ_SLOT_ALIGN = 256;

// roce_hsi.h: SQ_BASE_WQE_TYPE_* (header spelling)
export const WqeType = {
  SEND: 0x00,
  SEND_W_IMMEAD: 0x01,
  SEND_W_INVALID: 0x02,
  WRITE_WQE: 0x04,
  WRITE_W_IMMEAD: 0x05,
  READ_WQE: 0x06,
  ATOMIC_CS: 0x08,
  ATOMIC_FA: 0x0b,
  LOCAL_INVALID: 0x0c,
  FR_PMR: 0x0d,
  BIND: 0x0e,
  FR_PPMR: 0x0f,
} as const;
export type WqeType = (typeof WqeType)[keyof typeof WqeType];
export const wqeTypeName = namer(WqeType);

// roce_hsi.h: SQ_SEND_FLAGS_* (same bits for every SQ WQE kind)
export const WqeFlags = {
  SIGNAL_COMP: 0x01,
  RD_OR_ATOMIC_FENCE: 0x02,
  /** Both drivers map IB "fence" to this bit. */
  UC_FENCE: 0x04,
  SE: 0x08,
  INLINE: 0x10,
  WQE_TS_EN: 0x20,
  DEBUG_TRACE: 0x40,
} as const;

// roce_hsi.h: RQ_WQE_WQE_TYPE_RCV
export const RQ_WQE_TYPE_RCV = 0x80;

/** First 32-bit word of an SQ WQE (sq_send_hdr / sq_rdma_hdr word 0); a value that does not fit throws. */
export function sqWqeWord0(wqeType: number, flags: number, wqeSizeSlots: number): number {
  return firstWord(SqSendHdr.encode({ wqe_type: wqeType, flags, wqe_size: wqeSizeSlots }));
}

/** First 32-bit word of an RQ WQE: RCV, flags 0, `wqeSizeSlots`. */
export function rqWqeWord0(wqeSizeSlots: number): number {
  return firstWord(RqWqeHdr.encode({ wqe_type: RQ_WQE_TYPE_RCV, wqe_size: wqeSizeSlots }));
}

function firstWord(b: Uint8Array): number {
  return new DataView(b.buffer, b.byteOffset).getUint32(0, true);
}

/** Slots an SQ WQE uses (the wqe_size byte): 2 header slots + one per SGE. */
export function sqWqeSizeForSges(sgeCount: number): number {
  return WQE_HEADER_SLOTS + sgeCount;
}

/** Slots an inline SQ WQE uses: 2 + ceil(bytes / 16). */
export function sqWqeSizeForInline(inlineBytes: number): number {
  return WQE_HEADER_SLOTS + Math.ceil(inlineBytes / SLOT_BYTES);
}

// roce_hsi.h: struct sq_send_hdr (RC uses q_key/dst_qp/avid = 0)
export const SqSendHdr = layout('sq_send_hdr', 32, {
  wqe_type: u8(0),
  flags: u8(1),
  wqe_size: u8(2),
  inv_key_or_imm_data: u32(4),
  length: u32(8),
  q_key: u32(12),
  dst_qp: u32(16, 0, 24),
  avid: u32(20, 0, 20),
  timestamp: u32(28, 0, 24),
});

// roce_hsi.h: struct sq_rdma_hdr (RDMA WRITE / WRITE_W_IMM / READ)
export const SqRdmaHdr = layout('sq_rdma_hdr', 32, {
  wqe_type: u8(0),
  flags: u8(1),
  wqe_size: u8(2),
  imm_data: u32(4),
  length: u32(8),
  /** The peer's address space: any 64-bit value. */
  remote_va: u64n(16),
  remote_key: u32(24),
  timestamp: u32(28, 0, 24),
});

// roce_hsi.h: struct sq_sge
export const SqSge = layout('sq_sge', 16, {
  /** Address in the MR's space (IOVA). */
  va_or_pa: u64(0),
  l_key: u32(8),
  size: u32(12),
});
export const SGE_BYTES = SqSge.size;

// roce_hsi.h: struct rq_wqe_hdr
export const RqWqeHdr = layout('rq_wqe_hdr', 32, {
  wqe_type: u8(0),
  flags: u8(1),
  wqe_size: u8(2),
  wr_id: u32(8, 0, 20),
});

// roce_hsi.h: struct sq_psn_search_ext (P5: 16 bytes per SQ WQE after the SQ ring)
export const SqPsnSearchExt = layout('sq_psn_search_ext', 16, {
  start_psn: u32(0, 0, 24),
  /** Kernel writes the SQ wqe_type here (rdma-core the verbs opcode). */
  opcode: u32(0, 24, 8),
  next_psn: u32(4, 0, 24),
  flags: u32(4, 24, 8),
  /** Kernel writes the WQE's slot index (rdma-core the WQE index). */
  start_slot_idx: u16(8),
});

// roce_hsi.h: struct sq_msn_search (P7's MSN table entry, 8 bytes per entry after the SQ; one
// little-endian u64 start_idx_next_psn_start_psn with SQ_MSN_SEARCH_START_PSN (bits 0-23),
// SQ_MSN_SEARCH_NEXT_PSN (24-47) and SQ_MSN_SEARCH_START_IDX (48-63); the kernel fills it in
// bnxt_qplib_fill_msn_search, rdma-core in bnxt_re_update_msn_tbl).
export const SqMsnSearch = layout('sq_msn_search', 8, {
  start_psn: u64(0, 0, 24),
  next_psn: u64(0, 24, 24),
  /** The WQE's first slot (kernel: swq->slot_idx). */
  start_idx: u64(0, 48, 16),
});
