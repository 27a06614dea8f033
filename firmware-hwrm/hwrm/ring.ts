/**
 * Rings: HWRM_RING_ALLOC (0x50) and HWRM_RING_FREE (0x51) (hsi.h hwrm_ring_alloc_input; bnxt.c
 * hwrm_ring_alloc_send_msg). On P5/P7 the CREQ and every NQ are rings of type NQ (5); the returned ring_id is the XID
 * written into 64-bit doorbells.
 */
import { layout, u8, u16, u32, u64 } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_ring_alloc_input (96 bytes; older HSI ended at 88, before dpi)
export const RingAllocInput = layout('hwrm_ring_alloc_input', 96, {
  ...REQUEST_HEADER_FIELDS,
  /** RING_ALLOC_REQ_ENABLES bits; 0 for an NQ. */
  enables: u32(16),
  /** RING_ALLOC_REQ_RING_TYPE. */
  ring_type: u8(20),
  /** TX only. */
  cmpl_coal_cnt: u8(21),
  /** RING_ALLOC_REQ_FLAGS bits. */
  flags: u16(22),
  /** Depth 0: IOVA of the first ring element; depth 1: IOVA of a table of LE u64 page addresses. */
  page_tbl_addr: u64(24),
  /** First-byte offset in the first page; 0. */
  fbo: u32(32),
  /** log2 of the page size (RING_ALLOC_REQ_PAGE_SIZE); ignored at depth 0. */
  page_size: u8(36),
  /** 0 or 1. */
  page_tbl_depth: u8(37),
  schq_id: u16(38),
  /** Number of ring entries (16-byte units); at least 16. */
  length: u32(40),
  /** Selects the doorbell (P3/P4) and, for completion rings and NQs, the MSI-X vector. */
  logical_id: u16(44),
  /** TX: its completion ring. */
  cmpl_ring_id: u16(46),
  /** TX: its CoS queue. */
  queue_id: u16(48),
  rx_buf_size: u16(50),
  /** RX_AGG: its RX ring. */
  rx_ring_id: u16(52),
  /** P5/P7 L2_CMPL: the NQ it reports to (enables NQ_RING_ID_VALID). */
  nq_ring_id: u16(54),
  ring_arb_cfg: u16(56),
  steering_tag: u16(58),
  /** TX/RX: its statistics context (enables STAT_CTX_ID_VALID). */
  stat_ctx_id: u32(64),
  max_bw: u32(72),
  /** RING_ALLOC_REQ_INT_MODE. */
  int_mode: u8(76),
  mpc_chnls_type: u8(77),
  rx_rate_profile_sel: u8(78),
  /** L2_CMPL on P5+: opaque value echoed in NQ entries (kept below 2^53 here). */
  cq_handle: u64(80),
  /** Doorbell page index (enables DPI_VALID; FUNC_QCAPS flags_ext3 MULTI_L2_DB_SUPPORTED). */
  dpi: u16(88),
});

// hsi.h: struct hwrm_ring_alloc_output
export const RingAllocOutput = layout('hwrm_ring_alloc_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  /** Firmware ring id; on P5/P7 the XID of the ring's doorbells. */
  ring_id: u16(8),
  logical_ring_id: u16(10),
  push_buffer_index: u8(12),
  valid: u8(15),
});

export const RING_ALLOC_REQ_ENABLES = {
  RING_ARB_CFG: 0x2,
  STAT_CTX_ID_VALID: 0x8,
  MAX_BW_VALID: 0x20,
  RX_RING_ID_VALID: 0x40,
  NQ_RING_ID_VALID: 0x80,
  RX_BUF_SIZE_VALID: 0x100,
  SCHQ_ID: 0x200,
  MPC_CHNLS_TYPE: 0x400,
  STEERING_TAG_VALID: 0x800,
  RX_RATE_PROFILE_VALID: 0x1000,
  DPI_VALID: 0x2000,
} as const;

/** Ring types, shared by RING_ALLOC and RING_FREE. */
export const RING_ALLOC_REQ_RING_TYPE = {
  L2_CMPL: 0x0,
  TX: 0x1,
  RX: 0x2,
  /** RoCE CREQ/NQ on P3/P4. */
  ROCE_CMPL: 0x3,
  RX_AGG: 0x4,
  /** Notification queue (and the RoCE CREQ) on P5/P7. */
  NQ: 0x5,
} as const;

export const RING_ALLOC_REQ_FLAGS = {
  RX_SOP_PAD: 0x1,
  DISABLE_CQ_OVERFLOW_DETECTION: 0x2,
  NQ_DBR_PACING: 0x4,
  TX_PKT_TS_CMPL_ENABLE: 0x8,
} as const;

export const RING_ALLOC_REQ_INT_MODE = {
  /** Deprecated. */
  LEGACY: 0x0,
  RSVD: 0x1,
  /** What every reference driver uses. */
  MSIX: 0x2,
  /** Whether the firmware accepts POLL for an NQ is UNVERIFIED. */
  POLL: 0x3,
} as const;

/** page_size values: log2 of the ring's page size in bytes. */
export const RING_ALLOC_REQ_PAGE_SIZE = {
  '4KB': 12,
  '8KB': 13,
  '64KB': 16,
  '2MB': 21,
  '4MB': 22,
  '1GB': 30,
} as const;

/** page_tbl_depth: 0 = page_tbl_addr is the ring itself (contiguous), 1 = one page table. */
export const RING_ALLOC_REQ_PAGE_TBL_DEPTH = { DEPTH_0: 0, DEPTH_1: 1 } as const;

/** The smallest ring length the HSI allows. */
export const RING_ALLOC_MIN_LENGTH = 16;

// hsi.h: struct hwrm_ring_free_input
export const RingFreeInput = layout('hwrm_ring_free_input', 32, {
  ...REQUEST_HEADER_FIELDS,
  /** RING_ALLOC_REQ_RING_TYPE (same codes). */
  ring_type: u8(16),
  /** RING_FREE_REQ_FLAGS bits. */
  flags: u8(17),
  ring_id: u16(18),
  prod_idx: u32(20),
  opaque: u32(24),
});

// hsi.h: struct hwrm_ring_free_output
export const RingFreeOutput = layout('hwrm_ring_free_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  valid: u8(15),
});

export const RING_FREE_REQ_FLAGS = { VIRTIO_RING_VALID: 0x1 } as const;

/**
 * Bits the kernel sets in each LE u64 entry of a ring or context page table on P5/P7
 * (bnxt.h PTU_PTE_*): VALID on every entry, NEXT_TO_LAST and LAST on a ring's last two pages.
 */
export const PTU_PTE = { VALID: 0x1, LAST: 0x2, NEXT_TO_LAST: 0x4 } as const;
