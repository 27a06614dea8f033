/**
 * Completion-queue entries (32 bytes; roce_hsi.h, read as the kernel's bnxt_qplib_poll_cq and
 * rdma-core's bnxt_re_poll_one read them). Every CQE ends with the same trailer:
 *
 *   byte 24  cqe_type_toggle: bit 0 toggle (phase), bits 1–4 cqe_type,
 *            bit 5 PUSH (REQ) / bits 5–6 resize toggle (CUT_OFF)
 *   byte 25  status (per-type numbering: CqReqStatus, CqResRcStatus)
 *   26..27   flags (responder CQEs)
 *   28..31   srq_or_rq_wr_id (responder: bits 0–19 = RQE wr_id[0])
 *
 * The consumer expects toggle = 1 on the first lap and flips it each time its index wraps;
 * it reads byte 24 first, then (after a read barrier) the rest. Hot paths use the word
 * accessors generated from these tables (cqe.g.ts).
 */
import { layout, u8, u16, u32, u64n } from '../layout.ts';
import { namer } from './names.ts';

export const CQE_BYTES = 32;
/** cq_terminal's sq_cons_idx / rq_cons_idx value meaning "no information for that queue". */
export const CQ_TERMINAL_NO_INDEX = 0xffff;

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
  /** Static mode: index of the WQE after the last one this CQE covers (as bnxt_qplib_cq_process_req reads it). */
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
