/**
 * Queue-pair commands: CREATE_QP, DESTROY_QP, MODIFY_QP, QUERY_QP (+ its side buffer) and
 * their CREQ responses, with the flag, state, access, MTU and mask values they carry.
 * Facts §3.8–§3.10, §9. Every command starts with the 16-byte cmdq_base.
 */
import { layout, bytes, u8, u16, u32, u64, u64n } from '../layout.ts';
import { CMDQ_BASE_FIELDS, CREQ_RESP_SB_FIELDS } from './cmdq.ts';
import { CREQ_RESP_FIELDS } from './creq.ts';
import { namer } from './names.ts';

// roce_hsi.h: CMDQ_CREATE_QP_QP_FLAGS_*
export const CreateQpFlags = {
  SRQ_USED: 0x1,
  /** Set when every SQ WR is signalled (sq_sig_all). */
  FORCE_COMPLETION: 0x2,
  /** Kernel always sets it: lkey 0xFFFFFFFF means "va is a bus address". */
  RESERVED_LKEY_ENABLE: 0x4,
  /** Kernel always sets it. */
  FR_PMR_ENABLED: 0x8,
  VARIABLE_SIZED_WQE_ENABLED: 0x10,
  OPTIMIZED_TRANSMIT_ENABLED: 0x20,
  RESPONDER_UD_CQE_WITH_CFA: 0x40,
  EXT_STATS_ENABLED: 0x80,
  EXPRESS_MODE_ENABLED: 0x100,
  STEERING_TAG_VALID: 0x200,
  RDMA_READ_OR_ATOMICS_USED: 0x400,
} as const;

// roce_hsi.h: CMDQ_CREATE_QP_TYPE_* (same values as MODIFY_QP qp_type)
export const QpType = {
  RC: 0x2,
  UD: 0x4,
  RAW_ETHERTYPE: 0x6,
  GSI: 0x7,
} as const;

// roce_hsi.h: struct cmdq_create_qp (104 bytes)
export const CmdqCreateQp = layout('cmdq_create_qp', 104, {
  ...CMDQ_BASE_FIELDS,
  /** Opaque; returned in every CQE of this QP. */
  qp_handle: u64n(16),
  qp_flags: u32(24),
  type: u8(28),
  /** PBL level of the SQ (0/1/2). */
  sq_lvl: u8(29, 0, 4),
  /** Page-size code (PgSize: 0 = 4K … 5 = 1G). */
  sq_pg_size: u8(29, 4, 4),
  rq_lvl: u8(30, 0, 4),
  rq_pg_size: u8(30, 4, 4),
  dpi: u32(32),
  /** Static WQE mode: number of SQ WQEs (variable mode: 16-byte slots). */
  sq_size: u32(36),
  rq_size: u32(40),
  /** Max SGEs per SQ WQE (static mode: 6). */
  sq_sge: u16(44, 0, 4),
  sq_fwo: u16(44, 4, 12),
  rq_sge: u16(46, 0, 4),
  rq_fwo: u16(46, 4, 12),
  scq_cid: u32(48),
  rcq_cid: u32(52),
  srq_cid: u32(56),
  pd_id: u32(60),
  /** SQ ring + PSN-search area, or first PBL page. */
  sq_pbl: u64(64),
  rq_pbl: u64(72),
  irrq_addr: u64(80),
  orrq_addr: u64(88),
  request_xid: u32(96),
  steering_tag: u16(100),
});

// roce_hsi.h: struct creq_create_qp_resp
export const CreqCreateQpResp = layout('creq_create_qp_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** QP number. */
  xid: u32(4),
  optimized_transmit_enabled: u8(10),
});

// roce_hsi.h: struct cmdq_destroy_qp (24 bytes)
export const CmdqDestroyQp = layout('cmdq_destroy_qp', 24, {
  ...CMDQ_BASE_FIELDS,
  qp_cid: u32(16),
});

// roce_hsi.h: struct creq_destroy_qp_resp
export const CreqDestroyQpResp = layout('creq_destroy_qp_resp', 16, {
  ...CREQ_RESP_FIELDS,
  xid: u32(4),
});

// roce_hsi.h: CMDQ_MODIFY_QP_MODIFY_MASK_*
export const ModifyQpMask = {
  STATE: 0x1,
  EN_SQD_ASYNC_NOTIFY: 0x2,
  ACCESS: 0x4,
  PKEY: 0x8,
  QKEY: 0x10,
  DGID: 0x20,
  FLOW_LABEL: 0x40,
  SGID_INDEX: 0x80,
  HOP_LIMIT: 0x100,
  TRAFFIC_CLASS: 0x200,
  DEST_MAC: 0x400,
  PINGPONG_PUSH_MODE: 0x800,
  PATH_MTU: 0x1000,
  TIMEOUT: 0x2000,
  RETRY_CNT: 0x4000,
  RNR_RETRY: 0x8000,
  RQ_PSN: 0x10000,
  MAX_RD_ATOMIC: 0x20000,
  MIN_RNR_TIMER: 0x40000,
  SQ_PSN: 0x80000,
  MAX_DEST_RD_ATOMIC: 0x100000,
  SQ_SIZE: 0x200000,
  RQ_SIZE: 0x400000,
  SQ_SGE: 0x800000,
  RQ_SGE: 0x1000000,
  MAX_INLINE_DATA: 0x2000000,
  DEST_QP_ID: 0x4000000,
  SRC_MAC: 0x8000000,
  VLAN_ID: 0x10000000,
  ENABLE_CC: 0x20000000,
  TOS_ECN: 0x40000000,
  TOS_DSCP: 0x80000000,
} as const;

/** The masks the kernel sends for an RC connection (qplib_fp.c bnxt_qplib_modify_qp, ib_verbs.c bnxt_re_modify_qp). */
export const RcTransitionMask = {
  /** STATE | ACCESS | PKEY */
  RESET_TO_INIT: 0x0000000d,
  /**
   * STATE | DGID | FLOW_LABEL | SGID_INDEX | HOP_LIMIT | TRAFFIC_CLASS | DEST_MAC | PATH_MTU | RQ_PSN | MIN_RNR_TIMER |
   * MAX_DEST_RD_ATOMIC | DEST_QP_ID | VLAN_ID
   */
  INIT_TO_RTR: 0x141517e1,
  /** STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_RD_ATOMIC | SQ_PSN */
  RTR_TO_RTS: 0x000ae001,
  /** STATE */
  TO_ERR: 0x00000001,
} as const;

// roce_hsi.h: CMDQ_MODIFY_QP_EXT_MODIFY_MASK_*
export const ModifyQpExtMask = {
  EXT_STATS_CTX: 0x1,
  SCHQ_ID_VALID: 0x2,
  RATE_LIMIT_VALID: 0x8,
} as const;

// roce_hsi.h: CMDQ_MODIFY_QP_FLAGS_*
export const ModifyQpFlags = {
  /** Only with the optimized-modify flow. */
  SRQ_USED: 0x1,
} as const;

// roce_hsi.h: CMDQ_MODIFY_QP_NEW_STATE_* / CREQ_QUERY_QP_RESP_SB_STATE_*
export const QpState = {
  RESET: 0x0,
  INIT: 0x1,
  RTR: 0x2,
  RTS: 0x3,
  SQD: 0x4,
  SQE: 0x5,
  ERR: 0x6,
} as const;
export type QpState = (typeof QpState)[keyof typeof QpState];
export const qpStateName = namer(QpState);

/** QP access bits (MODIFY_QP/QUERY_QP). Note REMOTE_WRITE/READ are swapped relative to MrAccess. */
export const QpAccess = {
  LOCAL_WRITE: 0x1,
  REMOTE_WRITE: 0x2,
  REMOTE_READ: 0x4,
  REMOTE_ATOMIC: 0x8,
} as const;

/** Value of the 2-bit network_type field (bits 6–7 of MODIFY_QP byte 24). */
export const NetworkType = {
  ROCEV1: 0x0,
  ROCEV2_IPV4: 0x2,
  ROCEV2_IPV6: 0x3,
} as const;

/** Value of the 4-bit path_mtu field: bytes = 256 << code. */
export const PathMtu = {
  MTU_256: 0x0,
  MTU_512: 0x1,
  MTU_1024: 0x2,
  MTU_2048: 0x3,
  MTU_4096: 0x4,
  MTU_8192: 0x5,
} as const;

export function pathMtuCode(mtuBytes: number): number {
  const code = [256, 512, 1024, 2048, 4096, 8192].indexOf(mtuBytes);
  if (code < 0) throw new RangeError(`path MTU ${mtuBytes} is not one of 256, 512, 1024, 2048, 4096, 8192`);
  return code;
}

export function pathMtuBytes(code: number): number {
  if (!Number.isInteger(code) || code < 0 || code > PathMtu.MTU_8192)
    throw new RangeError(`path MTU code ${code} is not 0..5`);
  return 256 << code;
}

/** ORRQ entries the device needs for an initiator depth (ORD): ORD + 1 (MODIFY_QP max_rd_atomic). */
export function orrqSlots(ord: number): number {
  return ord + 1;
}

/** IRRQ entries the device needs for a responder depth (IRD): 2 × IRD + 2 (MODIFY_QP max_dest_rd_atomic). */
export function irrqSlots(ird: number): number {
  return 2 * ird + 2;
}

/** ORRQ/IRRQ entry size; the driver only allocates (zeroed, contiguous) and never reads them. */
export const XRRQ_ENTRY_BYTES = 32;

// roce_hsi.h: struct cmdq_modify_qp (144 bytes; the header's "size:" comment says 128)
export const CmdqModifyQp = layout('cmdq_modify_qp', 144, {
  ...CMDQ_BASE_FIELDS,
  /** cmdq_base.reserved8 re-used (optimized-modify flow only). */
  qp_type: u8(7),
  modify_mask: u32(16),
  qp_cid: u32(20),
  new_state: u8(24, 0, 4),
  en_sqd_async_notify: u8(24, 4, 1),
  network_type: u8(24, 6, 2),
  access: u8(25),
  pkey: u16(26),
  qkey: u32(28),
  /** Destination GID in natural (wire) byte order. */
  dgid: bytes(32, 16),
  flow_label: u32(48),
  /** Hardware GID index (ADD_GID response xid). */
  sgid_index: u16(52),
  hop_limit: u8(54),
  traffic_class: u8(55),
  /** Natural (wire) byte order. */
  dest_mac: bytes(56, 6),
  tos_ecn: u8(62, 0, 2),
  tos_dscp: u8(62, 2, 6),
  pingpong_push_enable: u8(63, 0, 1),
  path_mtu: u8(63, 4, 4),
  timeout: u8(64),
  retry_cnt: u8(65),
  rnr_retry: u8(66),
  min_rnr_timer: u8(67),
  rq_psn: u32(68),
  sq_psn: u32(72),
  /** ORRQ slots = ORD + 1. */
  max_rd_atomic: u8(76),
  /** IRRQ slots = 2 × IRD + 2. */
  max_dest_rd_atomic: u8(77),
  enable_cc: u16(78, 0, 1),
  sq_size: u32(80),
  rq_size: u32(84),
  sq_sge: u16(88),
  rq_sge: u16(90),
  max_inline_data: u32(92),
  dest_qp_id: u32(96),
  pingpong_push_dpi: u32(100),
  src_mac: bytes(104, 6),
  vlan_id: u16(110, 0, 12),
  vlan_dei: u16(110, 12, 1),
  vlan_pcp: u16(110, 13, 3),
  irrq_addr: u64(112),
  orrq_addr: u64(120),
  ext_modify_mask: u32(128),
  ext_stats_ctx_id: u32(132),
  schq_id: u16(136),
  /** Used only with ext_modify_mask RATE_LIMIT_VALID (newest HSI). */
  rate_limit: u32(140),
});

// roce_hsi.h: struct creq_modify_qp_resp
export const CreqModifyQpResp = layout('creq_modify_qp_resp', 16, {
  ...CREQ_RESP_FIELDS,
  xid: u32(4),
  pingpong_push_enabled: u8(10, 0, 1),
  pingpong_push_index: u8(10, 1, 3),
  pingpong_push_state: u8(10, 4, 1),
  /** Bit 0 SHAPER_ALLOCATED (newest HSI). */
  shaper_allocation_status: u8(11),
  lag_src_mac: u32(12),
});

// roce_hsi.h: struct cmdq_query_qp (24 bytes)
export const CmdqQueryQp = layout('cmdq_query_qp', 24, {
  ...CMDQ_BASE_FIELDS,
  qp_cid: u32(16),
});

// roce_hsi.h: struct creq_query_qp_resp
export const CreqQueryQpResp = layout('creq_query_qp_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** Side-buffer size. */
  size: u32(4),
});

// roce_hsi.h: struct creq_query_qp_resp_sb (104 bytes; resp_size 7)
export const CreqQueryQpRespSb = layout('creq_query_qp_resp_sb', 104, {
  ...CREQ_RESP_SB_FIELDS,
  xid: u32(8),
  state: u8(12, 0, 4),
  en_sqd_async_notify: u8(12, 4, 1),
  access: u8(13),
  pkey: u16(14),
  qkey: u32(16),
  /** Newest HSI (bytes 20–23 used to be one reserved u32). */
  udp_src_port: u16(20),
  dgid: bytes(24, 16),
  flow_label: u32(40),
  sgid_index: u16(44),
  hop_limit: u8(46),
  traffic_class: u8(47),
  dest_mac: bytes(48, 6),
  dest_vlan_id: u16(54, 0, 12),
  path_mtu: u16(54, 12, 4),
  timeout: u8(56),
  retry_cnt: u8(57),
  rnr_retry: u8(58),
  min_rnr_timer: u8(59),
  rq_psn: u32(60),
  sq_psn: u32(64),
  max_rd_atomic: u8(68),
  max_dest_rd_atomic: u8(69),
  tos_ecn: u8(70, 0, 2),
  tos_dscp: u8(70, 2, 6),
  enable_cc: u8(71, 0, 1),
  sq_size: u32(72),
  rq_size: u32(76),
  sq_sge: u16(80),
  rq_sge: u16(82),
  max_inline_data: u32(84),
  dest_qp_id: u32(88),
  /** IB port = port_id + 1. */
  port_id: u16(92),
  stat_collection_id: u8(95),
  src_mac: bytes(96, 6),
  vlan_id: u16(102, 0, 12),
  vlan_dei: u16(102, 12, 1),
  vlan_pcp: u16(102, 13, 3),
});
