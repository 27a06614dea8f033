/**
 * CREQ entries (16 bytes each): command responses, QP/CQ error notifications and function
 * events (roce_hsi.h; the kernel's bnxt_qplib_service_creq). The consumer polls these through
 * the word accessors generated from the tables (creq.g.ts).
 *
 *   byte 0  type (bits 0–5)     byte 8  v (bit 0: valid, phase starts at 1)
 *   byte 1  status              byte 9  event (= opcode for responses)
 *   2..3    cookie              10..15  command specific
 *   4..7    xid / size
 */
import { layout, u8, u16, u32 } from '../layout.ts';
import { namer } from './names.ts';

export const CREQ_ENTRY_BYTES = 16;

/** Fields shared by every creq_*_resp (the creq_qp_event shape without bytes 4–7 and 10–15). */
export const CREQ_RESP_FIELDS = {
  /** 0x38 (QP_EVENT) in bits 0–5. */
  type: u8(0, 0, 6),
  status: u8(1),
  cookie: u16(2),
  v: u8(8, 0, 1),
  event: u8(9),
};

// roce_hsi.h: struct creq_base
export const CreqBase = layout('creq_base', 16, {
  type: u8(0, 0, 6),
  v: u8(8, 0, 1),
  event: u8(9),
});

// roce_hsi.h: struct creq_qp_event (the generic command response)
export const CreqQpEvent = layout('creq_qp_event', 16, {
  ...CREQ_RESP_FIELDS,
  /** Object created/affected (QPN, CQ id, key, GID index) or the side-buffer size. */
  xid: u32(4),
});

// roce_hsi.h: struct creq_qp_error_notification (event 0xC0)
export const CreqQpErrorNotification = layout('creq_qp_error_notification', 16, {
  type: u8(0, 0, 6),
  status: u8(1),
  req_slow_path_state: u8(2),
  req_err_state_reason: u8(3),
  /** QP number. */
  xid: u32(4),
  v: u8(8, 0, 1),
  event: u8(9),
  res_slow_path_state: u8(10),
  res_err_state_reason: u8(11),
  sq_cons_idx: u16(12),
  rq_cons_idx: u16(14),
});

// roce_hsi.h: CREQ_QP_ERROR_NOTIFICATION_REQ_ERR_STATE_REASON_*
export const ReqErrStateReason = {
  NO_ERROR: 0x00,
  REQ_OPCODE_ERROR: 0x01,
  REQ_TIMEOUT_RETRY_LIMIT: 0x02,
  REQ_RNR_TIMEOUT_RETRY_LIMIT: 0x03,
  REQ_NAK_ARRIVAL_1: 0x04,
  REQ_NAK_ARRIVAL_2: 0x05,
  REQ_NAK_ARRIVAL_3: 0x06,
  REQ_NAK_ARRIVAL_4: 0x07,
  REQ_RX_MEMORY_ERROR: 0x08,
  REQ_TX_MEMORY_ERROR: 0x09,
  REQ_READ_RESP_LENGTH: 0x0a,
  REQ_INVALID_READ_RESP: 0x0b,
  REQ_ILLEGAL_BIND: 0x0c,
  REQ_ILLEGAL_FAST_REG: 0x0d,
  REQ_ILLEGAL_INVALIDATE: 0x0e,
  REQ_CMP_ERROR: 0x0f,
  REQ_RETRAN_LOCAL_ERROR: 0x10,
  REQ_WQE_FORMAT_ERROR: 0x11,
  REQ_ORRQ_FORMAT_ERROR: 0x12,
  REQ_INVALID_AVID_ERROR: 0x13,
  REQ_AV_DOMAIN_ERROR: 0x14,
  REQ_CQ_LOAD_ERROR: 0x15,
  REQ_SERV_TYPE_ERROR: 0x16,
  REQ_INVALID_OP_ERROR: 0x17,
  REQ_TX_PCI_ERROR: 0x18,
  REQ_RX_PCI_ERROR: 0x19,
  REQ_PROD_WQE_MSMTCH_ERROR: 0x1a,
  REQ_PSN_RANGE_CHECK_ERROR: 0x1b,
  REQ_RETX_SETUP_ERROR: 0x1c,
} as const;
export const reqErrStateReasonName = namer(ReqErrStateReason);

// roce_hsi.h: CREQ_QP_ERROR_NOTIFICATION_RES_ERR_STATE_REASON_* (0x1A is not defined)
export const ResErrStateReason = {
  NO_ERROR: 0x00,
  RES_EXCEED_MAX: 0x01,
  RES_PAYLOAD_LENGTH_MISMATCH: 0x02,
  RES_EXCEEDS_WQE: 0x03,
  RES_OPCODE_ERROR: 0x04,
  RES_PSN_SEQ_ERROR_RETRY_LIMIT: 0x05,
  RES_RX_INVALID_R_KEY: 0x06,
  RES_RX_DOMAIN_ERROR: 0x07,
  RES_RX_NO_PERMISSION: 0x08,
  RES_RX_RANGE_ERROR: 0x09,
  RES_TX_INVALID_R_KEY: 0x0a,
  RES_TX_DOMAIN_ERROR: 0x0b,
  RES_TX_NO_PERMISSION: 0x0c,
  RES_TX_RANGE_ERROR: 0x0d,
  RES_IRRQ_OFLOW: 0x0e,
  RES_UNSUPPORTED_OPCODE: 0x0f,
  RES_UNALIGN_ATOMIC: 0x10,
  RES_REM_INVALIDATE: 0x11,
  RES_MEMORY_ERROR: 0x12,
  RES_SRQ_ERROR: 0x13,
  RES_CMP_ERROR: 0x14,
  RES_INVALID_DUP_RKEY: 0x15,
  RES_WQE_FORMAT_ERROR: 0x16,
  RES_IRRQ_FORMAT_ERROR: 0x17,
  RES_CQ_LOAD_ERROR: 0x18,
  RES_SRQ_LOAD_ERROR: 0x19,
  RES_TX_PCI_ERROR: 0x1b,
  RES_RX_PCI_ERROR: 0x1c,
  RES_PSN_NOT_FOUND: 0x1d,
} as const;
export const resErrStateReasonName = namer(ResErrStateReason);

// roce_hsi.h: struct creq_cq_error_notification (event 0xC1)
export const CreqCqErrorNotification = layout('creq_cq_error_notification', 16, {
  type: u8(0, 0, 6),
  status: u8(1),
  cq_err_reason: u8(2),
  /** CQ id. */
  xid: u32(4),
  v: u8(8, 0, 1),
  event: u8(9),
});

// roce_hsi.h: CREQ_CQ_ERROR_NOTIFICATION_CQ_ERR_REASON_* (header spells them *_ERROR)
export const CqErrReason = {
  REQ_CQ_INVALID_ERROR: 0x1,
  REQ_CQ_OVERFLOW_ERROR: 0x2,
  REQ_CQ_LOAD_ERROR: 0x3,
  RES_CQ_INVALID_ERROR: 0x4,
  RES_CQ_OVERFLOW_ERROR: 0x5,
  RES_CQ_LOAD_ERROR: 0x6,
} as const;
export const cqErrReasonName = namer(CqErrReason);

// roce_hsi.h: struct creq_func_event (type 0x3A; no object id)
export const CreqFuncEvent = layout('creq_func_event', 16, {
  type: u8(0, 0, 6),
  v: u8(8, 0, 1),
  event: u8(9),
});

// roce_hsi.h: CREQ_FUNC_EVENT_EVENT_*
export const FuncEvent = {
  TX_WQE_ERROR: 0x01,
  TX_DATA_ERROR: 0x02,
  RX_WQE_ERROR: 0x03,
  RX_DATA_ERROR: 0x04,
  CQ_ERROR: 0x05,
  TQM_ERROR: 0x06,
  CFCQ_ERROR: 0x07,
  CFCS_ERROR: 0x08,
  CFCC_ERROR: 0x09,
  CFCM_ERROR: 0x0a,
  TIM_ERROR: 0x0b,
  VF_COMM_REQUEST: 0x80,
  RESOURCE_EXHAUSTED: 0x81,
} as const;
export const funcEventName = namer(FuncEvent);
