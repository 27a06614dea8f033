/**
 * Send- and receive-queue entries in static WQE mode (P5 default), and the 16-byte PSN-search
 * entries kept after the SQ ring. Facts §5.1, §5.3–§5.5.
 *
 *   SQ/RQ ring = 16-byte slots; static mode: every WQE occupies 8 slots (128 bytes)
 *   ┌──────── slot 0–1: 32-byte header ────────┬── slot 2..7: SGEs (16 B) or ≤ 96 B inline ──┐
 *   │ type flags wqe_size · imm length …       │ va_or_pa(8) l_key(4) size(4) …             │
 *   └──────────────────────────────────────────┴─────────────────────────────────────────────┘
 *   SQ memory = ring (sq_size × 128 B) immediately followed by sq_size × 16-byte psn_search_ext
 *
 * The layouts document and test the formats; the hot path uses the numeric offsets and the
 * word helpers below on a Uint32Array/DataView over the ring (little-endian host).
 */
import { layout, u8, u16, u32, u64, u64n } from '../layout.ts';
import { checkBits } from './bits.ts';
import { namer } from './names.ts';

export const SLOT_BYTES = 16;
export const WQE_HEADER_BYTES = 32;
export const WQE_HEADER_SLOTS = 2;
export const STATIC_WQE_BYTES = 128;
export const STATIC_WQE_SLOTS = 8;
export const STATIC_MAX_SGE = 6;
export const STATIC_MAX_INLINE_BYTES = 96;

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

// Byte offsets inside an SQ WQE header (sq_send_hdr / sq_rdma_hdr).
export const SQ_WQE_TYPE_OFFSET = 0;
export const SQ_WQE_FLAGS_OFFSET = 1;
/** Slots actually used: 2 + SGEs, or 2 + ceil(inline bytes / 16). */
export const SQ_WQE_SIZE_OFFSET = 2;
/** SEND_W_IMMEAD: immediate as a LE number equal to the big-endian wire value; SEND_W_INVALID: rkey. */
export const SQ_SEND_INV_KEY_OR_IMM_DATA_OFFSET = 4;
export const SQ_RDMA_IMM_DATA_OFFSET = 4;
/** Total payload bytes (sum of SGE sizes or inline byte count; READ: bytes to read). */
export const SQ_WQE_LENGTH_OFFSET = 8;
export const SQ_SEND_Q_KEY_OFFSET = 12;
export const SQ_SEND_DST_QP_OFFSET = 16;
export const SQ_SEND_AVID_OFFSET = 20;
export const SQ_RDMA_REMOTE_VA_OFFSET = 16;
export const SQ_RDMA_REMOTE_KEY_OFFSET = 24;
export const SQ_WQE_TIMESTAMP_OFFSET = 28;
/** First SGE (or first inline byte) of a WQE. */
export const WQE_SGE_OFFSET = 32;

// Byte offsets inside an SGE.
export const SGE_BYTES = 16;
export const SGE_VA_OFFSET = 0;
export const SGE_L_KEY_OFFSET = 8;
export const SGE_SIZE_OFFSET = 12;

// Byte offsets inside an RQ WQE header.
export const RQ_WQE_TYPE_OFFSET = 0;
export const RQ_WQE_SIZE_OFFSET = 2;
/** wr_id[0]: bits 0–19 = the driver's tag, echoed in the receive CQE. */
export const RQ_WQE_WR_ID_OFFSET = 8;
export const RQ_WQE_WR_ID_MASK = 0xfffff;

// sq_psn_search_ext (16 bytes per SQ WQE index, P5).
export const PSN_SEARCH_EXT_BYTES = 16;
export const PSN_SEARCH_OPCODE_START_PSN_OFFSET = 0;
export const PSN_SEARCH_FLAGS_NEXT_PSN_OFFSET = 4;
export const PSN_SEARCH_START_SLOT_IDX_OFFSET = 8;
export const PSN_SEARCH_OPCODE_SHIFT = 24;
export const PSN_SEARCH_FLAGS_SHIFT = 24;

/** First 32-bit word of an SQ WQE: wqe_type | flags << 8 | wqe_size << 16. */
export function sqWqeWord0(wqeType: number, flags: number, wqeSizeSlots: number): number {
  checkBits('wqe_type', wqeType, 8);
  checkBits('flags', flags, 8);
  checkBits('wqe_size', wqeSizeSlots, 8);
  return (wqeType | (flags << 8) | (wqeSizeSlots << 16)) >>> 0;
}

/** First 32-bit word of an RQ WQE: RCV | wqe_size << 16 (flags 0). */
export function rqWqeWord0(wqeSizeSlots: number): number {
  checkBits('wqe_size', wqeSizeSlots, 8);
  return (RQ_WQE_TYPE_RCV | (wqeSizeSlots << 16)) >>> 0;
}

/** psn_search_ext word 0: start_psn | opcode << 24. */
export function psnSearchWord0(opcode: number, startPsn: number): number {
  checkBits('opcode', opcode, 8);
  checkBits('start_psn', startPsn, 24);
  return ((opcode << PSN_SEARCH_OPCODE_SHIFT) | startPsn) >>> 0;
}

/** psn_search_ext word 1: next_psn | flags << 24 (both drivers write flags 0). */
export function psnSearchWord1(flags: number, nextPsn: number): number {
  checkBits('flags', flags, 8);
  checkBits('next_psn', nextPsn, 24);
  return ((flags << PSN_SEARCH_FLAGS_SHIFT) | nextPsn) >>> 0;
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

// roce_hsi.h: struct rq_wqe_hdr
export const RqWqeHdr = layout('rq_wqe_hdr', 32, {
  wqe_type: u8(0),
  flags: u8(1),
  wqe_size: u8(2),
  wr_id: u32(8, 0, 20),
});

// roce_hsi.h: struct sq_psn_search_ext
export const SqPsnSearchExt = layout('sq_psn_search_ext', 16, {
  start_psn: u32(0, 0, 24),
  /** Kernel writes the SQ wqe_type here (rdma-core the verbs opcode). */
  opcode: u32(0, 24, 8),
  next_psn: u32(4, 0, 24),
  flags: u32(4, 24, 8),
  /** Kernel writes the WQE's slot index (rdma-core the WQE index). */
  start_slot_idx: u16(8),
});
