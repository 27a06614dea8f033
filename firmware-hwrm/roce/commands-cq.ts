/**
 * Completion-queue commands: CREATE_CQ and DESTROY_CQ with their CREQ responses. Facts §3.6.
 * After CREATE_CQ succeeds the kernel rings CQ_ARMENA (doorbell.ts) for the new CQ id.
 */
import { layout, u16, u32, u64, u64n } from '../layout.ts';
import { CMDQ_BASE_FIELDS } from './cmdq.ts';
import { CREQ_RESP_FIELDS } from './creq.ts';

// roce_hsi.h: CMDQ_CREATE_CQ_FLAGS_*
export const CreateCqFlags = {
  DISABLE_CQ_OVERFLOW_DETECTION: 0x1,
  STEERING_TAG_VALID: 0x2,
  INFINITE_CQ_MODE: 0x4,
  /** Kernel sets it only when QUERY_FUNC reports CQ_COALESCING. */
  COALESCING_VALID: 0x8,
} as const;

// roce_hsi.h: struct cmdq_create_cq (64 bytes; the header's "size:" comment says 56)
export const CmdqCreateCq = layout('cmdq_create_cq', 64, {
  ...CMDQ_BASE_FIELDS,
  /** Opaque; echoed in NQ CQ notifications. */
  cq_handle: u64n(16),
  lvl: u32(24, 0, 2),
  /** Page-size code (PgSize: 0 = 4K … 5 = 1G). */
  pg_size: u32(24, 2, 3),
  /** Firmware ring id of the NQ that gets this CQ's notifications. */
  cnq_id: u32(28, 0, 12),
  cq_fco: u32(28, 12, 20),
  dpi: u32(32),
  /** Number of 32-byte CQEs. */
  cq_size: u32(36),
  pbl: u64(40),
  steering_tag: u16(48),
  buf_maxtime: u32(52, 0, 9),
  normal_maxbuf: u32(52, 9, 5),
  during_maxbuf: u32(52, 14, 5),
  enable_ring_idle_mode: u32(52, 19, 1),
});

// roce_hsi.h: struct creq_create_cq_resp
export const CreqCreateCqResp = layout('creq_create_cq_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** CQ id. */
  xid: u32(4),
});

// roce_hsi.h: struct cmdq_destroy_cq (24 bytes)
export const CmdqDestroyCq = layout('cmdq_destroy_cq', 24, {
  ...CMDQ_BASE_FIELDS,
  cq_cid: u32(16),
});

// roce_hsi.h: struct creq_destroy_cq_resp
export const CreqDestroyCqResp = layout('creq_destroy_cq_resp', 16, {
  ...CREQ_RESP_FIELDS,
  xid: u32(4),
  cq_arm_lvl: u16(10, 0, 2),
  /** NQ notifications produced for this CQ; the kernel consumes that many before freeing it. */
  total_cnq_events: u16(12),
});
