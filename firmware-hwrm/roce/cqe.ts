/**
 * Completion-queue entries (32 bytes). Facts §6. Every CQE ends with the same trailer:
 *
 *   byte 24  cqe_type_toggle: bit 0 toggle (phase), bits 1–4 cqe_type,
 *            bit 5 PUSH (REQ) / bits 5–6 resize toggle (CUT_OFF)
 *   byte 25  status (per-type numbering: CqReqStatus, CqResRcStatus)
 *   26..27   flags (responder CQEs)
 *   28..31   srq_or_rq_wr_id (responder: bits 0–19 = RQE wr_id[0])
 *
 * The consumer expects toggle = 1 on the first lap and flips it each time its index wraps;
 * it reads byte 24 first, then (after a read barrier) the rest. Hot-path readers use the
 * numeric constants; every *_MASK applies after its *_SHIFT.
 */
import { layout, u8, u16, u32, u64n } from '../layout.ts';
import { namer } from './names.ts';

export const CQE_BYTES = 32;
export const CQE_TYPE_TOGGLE_OFFSET = 24;
export const CQE_TOGGLE_MASK = 0x1;
export const CQE_TYPE_SHIFT = 1;
export const CQE_TYPE_MASK = 0xf;
export const CQE_STATUS_OFFSET = 25;
export const CQE_FLAGS_OFFSET = 26;
export const CQE_WR_ID_OFFSET = 28;
export const CQE_WR_ID_MASK = 0xfffff;
/** The trailer as one u32 (index 6 of the CQE's Uint32Array words): toggle | type << 1 | status << 8 | flags << 16. */
export const CQE_TRAILER_WORD = 6;
export const CQE_TRAILER_STATUS_SHIFT = 8;
export const CQE_TRAILER_STATUS_MASK = 0xff;
export const CQE_TRAILER_FLAGS_SHIFT = 16;
export const CQE_TRAILER_FLAGS_MASK = 0xffff;

// cq_req
export const CQ_REQ_QP_HANDLE_OFFSET = 0;
export const CQ_REQ_SQ_CONS_IDX_OFFSET = 8;
/** Bit 5 of byte 24 in a requester CQE. */
export const CQ_REQ_PUSH = 0x20;
// cq_res_rc
export const CQ_RES_RC_LENGTH_OFFSET = 0;
export const CQ_RES_RC_IMM_DATA_OR_INV_R_KEY_OFFSET = 4;
export const CQ_RES_RC_QP_HANDLE_OFFSET = 8;
export const CQ_RES_RC_MR_HANDLE_OFFSET = 16;
// cq_terminal
export const CQ_TERMINAL_QP_HANDLE_OFFSET = 0;
export const CQ_TERMINAL_SQ_CONS_IDX_OFFSET = 8;
export const CQ_TERMINAL_RQ_CONS_IDX_OFFSET = 10;
/** sq_cons_idx / rq_cons_idx value meaning "no information for that queue". */
export const CQ_TERMINAL_NO_INDEX = 0xffff;
// cq_cutoff
export const CQ_CUTOFF_RESIZE_TOGGLE_SHIFT = 5;
export const CQ_CUTOFF_RESIZE_TOGGLE_MASK = 0x3;

// roce_hsi.h: CQ_BASE_CQE_TYPE_* (values before the << 1)
export const CqeType = {
  REQ: 0x0,
  RES_RC: 0x1,
  RES_UD: 0x2,
  RES_RAWETH_QP1: 0x3,
  RES_UD_CFA: 0x4,
  REQ_V3: 0x8,
  RES_RC_V3: 0x9,
  RES_UD_V3: 0xa,
  RES_RAWETH_QP1_V3: 0xb,
  RES_UD_CFA_V3: 0xc,
  NO_OP: 0xd,
  TERMINAL: 0xe,
  CUT_OFF: 0xf,
} as const;
export type CqeType = (typeof CqeType)[keyof typeof CqeType];
export const cqeTypeName = namer(CqeType);

// roce_hsi.h: CQ_REQ_STATUS_*
export const CqReqStatus = {
  OK: 0x0,
  BAD_RESPONSE_ERR: 0x1,
  LOCAL_LENGTH_ERR: 0x2,
  LOCAL_QP_OPERATION_ERR: 0x3,
  LOCAL_PROTECTION_ERR: 0x4,
  MEMORY_MGT_OPERATION_ERR: 0x5,
  REMOTE_INVALID_REQUEST_ERR: 0x6,
  REMOTE_ACCESS_ERR: 0x7,
  REMOTE_OPERATION_ERR: 0x8,
  /** RNR retries exhausted. */
  RNR_NAK_RETRY_CNT_ERR: 0x9,
  /** ACK-timeout retries exhausted. */
  TRANSPORT_RETRY_CNT_ERR: 0xa,
  WORK_REQUEST_FLUSHED_ERR: 0xb,
} as const;
export const cqReqStatusName = namer(CqReqStatus);

// roce_hsi.h: CQ_RES_RC_STATUS_*
export const CqResRcStatus = {
  OK: 0x0,
  LOCAL_ACCESS_ERROR: 0x1,
  LOCAL_LENGTH_ERR: 0x2,
  LOCAL_PROTECTION_ERR: 0x3,
  LOCAL_QP_OPERATION_ERR: 0x4,
  MEMORY_MGT_OPERATION_ERR: 0x5,
  REMOTE_INVALID_REQUEST_ERR: 0x6,
  WORK_REQUEST_FLUSHED_ERR: 0x7,
  /** rdma-core drops these without reporting; the kernel reports WR_FLUSH_ERR. */
  HW_FLUSH_ERR: 0x8,
} as const;
export const cqResRcStatusName = namer(CqResRcStatus);

// roce_hsi.h: CQ_RES_RC_FLAGS_*
export const CqResRcFlags = {
  /** 0 = from RQ, 1 = from SRQ. */
  SRQ: 0x1,
  IMM: 0x2,
  INV: 0x4,
  /** 0 = SEND, 1 = RDMA WRITE (with IMM: write-with-immediate). */
  RDMA: 0x8,
} as const;

/** The CQE trailer fields shared by every layout below. */
const CQE_TRAILER = {
  toggle: u8(24, 0, 1),
  cqe_type: u8(24, 1, 4),
  status: u8(25),
};

// roce_hsi.h: struct cq_base
export const CqBase = layout('cq_base', 32, CQE_TRAILER);

// roce_hsi.h: struct cq_req
export const CqReq = layout('cq_req', 32, {
  qp_handle: u64n(0),
  /** Static mode: index of the WQE after the last one this CQE covers (inferred; facts §6.7). */
  sq_cons_idx: u16(8),
  ...CQE_TRAILER,
  push: u8(24, 5, 1),
});

// roce_hsi.h: struct cq_res_rc
export const CqResRc = layout('cq_res_rc', 32, {
  length: u32(0),
  imm_data_or_inv_r_key: u32(4),
  qp_handle: u64n(8),
  mr_handle: u64n(16),
  ...CQE_TRAILER,
  flags: u16(26),
  srq_or_rq_wr_id: u32(28, 0, 20),
});

// roce_hsi.h: struct cq_terminal
export const CqTerminal = layout('cq_terminal', 32, {
  qp_handle: u64n(0),
  sq_cons_idx: u16(8),
  rq_cons_idx: u16(10),
  ...CQE_TRAILER,
});

// roce_hsi.h: struct cq_cutoff
export const CqCutoff = layout('cq_cutoff', 32, {
  ...CQE_TRAILER,
  resize_toggle: u8(24, 5, 2),
});
