/**
 * Statistics contexts: HWRM_STAT_CTX_ALLOC (0xb0) and HWRM_STAT_CTX_FREE (0xb1)
 * (hsi.h hwrm_stat_ctx_alloc_input; bnxt_re main.c bnxt_re_net_stats_ctx_alloc). RoCE needs one (flag ROCE) for CMDQ
 * INITIALIZE_FW.
 */
import { layout, u8, u16, u32, u64 } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

/**
 * sizeof(struct ctx_hw_stats) (hsi.h): the ring statistics block without TPA v2's counters, what
 * bnxt_en's hw_ring_stats_size is unless VNIC_QCAPS reports TPA v2 (then BNXT_RING_STATS_SIZE_P5
 * or _P7, the chip profile's ringStatsBytes).
 */
export const CTX_HW_STATS_BYTES = 160;

// hsi.h: struct hwrm_stat_ctx_alloc_input
export const StatCtxAllocInput = layout('hwrm_stat_ctx_alloc_input', 40, {
  ...REQUEST_HEADER_FIELDS,
  /** IOVA of the counters block the firmware DMA-updates (128-byte aligned on newer chips). */
  stats_dma_addr: u64(16),
  /** DMA refresh period; 0 = never DMA. */
  update_period_ms: u32(24),
  /** STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS bits. */
  stat_ctx_flags: u8(28),
  /** Size of the counters block the driver allocated (160, 168 on P5, 176 on P7). */
  stats_dma_length: u16(30),
  /** STAT_CTX_ALLOC_REQ_FLAGS bits. */
  flags: u16(32),
  steering_tag: u16(34),
});

// hsi.h: struct hwrm_stat_ctx_alloc_output
export const StatCtxAllocOutput = layout('hwrm_stat_ctx_alloc_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  stat_ctx_id: u32(8),
  valid: u8(15),
});

export const STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS = {
  /** The context counts only offloaded RoCE traffic. */
  ROCE: 0x1,
} as const;

export const STAT_CTX_ALLOC_REQ_FLAGS = { STEERING_TAG_VALID: 0x1 } as const;

// hsi.h: struct hwrm_stat_ctx_free_input
export const StatCtxFreeInput = layout('hwrm_stat_ctx_free_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  stat_ctx_id: u32(16),
});

// hsi.h: struct hwrm_stat_ctx_free_output (echoes stat_ctx_id)
export const StatCtxFreeOutput = layout('hwrm_stat_ctx_free_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  stat_ctx_id: u32(8),
  valid: u8(15),
});
