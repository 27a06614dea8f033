/**
 * Function-level commands: INITIALIZE_FW, DEINITIALIZE_FW, QUERY_FUNC (+ its 160-byte side
 * buffer) and QUERY_VERSION, with their CREQ responses. Facts §3.2, §3.3. Only QUERY_FUNC,
 * INITIALIZE_FW and QUERY_VERSION are sent before INITIALIZE_FW (kernel gating).
 */
import { layout, bytes, u8, u16, u32, u64, u64n } from '../layout.ts';
import { CMDQ_BASE_FIELDS, CREQ_RESP_SB_FIELDS } from './cmdq.ts';
import { CREQ_RESP_FIELDS } from './creq.ts';

// roce_hsi.h: CMDQ_INITIALIZE_FW_FLAGS_*
export const InitializeFwFlags = {
  MRAV_RESERVATION_SPLIT: 0x1,
  /** Set when QUERY_FUNC dev_cap_flags has HW_REQUESTER_RETX_ENABLED or HW_RESPONDER_RETX_ENABLED. */
  HW_REQUESTER_RETX_SUPPORTED: 0x2,
  /** Set when dev_cap_ext_flags_2 has OPTIMIZE_MODIFY_QP_SUPPORTED. */
  OPTIMIZE_MODIFY_QP_SUPPORTED: 0x8,
  L2_VF_RESOURCE_MGMT: 0x10,
  MIRROR_ON_ROCE_SUPPORTED: 0x80,
} as const;

// roce_hsi.h: struct cmdq_initialize_fw (112 bytes). On P5/P7 every context field is 0:
// context memory comes from HWRM_FUNC_BACKING_STORE_CFG.
export const CmdqInitializeFw = layout('cmdq_initialize_fw', 112, {
  ...CMDQ_BASE_FIELDS,
  qpc_lvl: u8(16, 0, 4),
  qpc_pg_size: u8(16, 4, 4),
  mrw_lvl: u8(17, 0, 4),
  mrw_pg_size: u8(17, 4, 4),
  srq_lvl: u8(18, 0, 4),
  srq_pg_size: u8(18, 4, 4),
  cq_lvl: u8(19, 0, 4),
  cq_pg_size: u8(19, 4, 4),
  tqm_lvl: u8(20, 0, 4),
  tqm_pg_size: u8(20, 4, 4),
  tim_lvl: u8(21, 0, 4),
  tim_pg_size: u8(21, 4, 4),
  /** log2(host page size) − 12. */
  log2_dbr_pg_size: u16(22, 0, 4),
  qpc_page_dir: u64(24),
  mrw_page_dir: u64(32),
  srq_page_dir: u64(40),
  cq_page_dir: u64(48),
  tqm_page_dir: u64(56),
  tim_page_dir: u64(64),
  number_of_qp: u32(72),
  number_of_mrw: u32(76),
  number_of_srq: u32(80),
  number_of_cq: u32(84),
  max_qp_per_vf: u32(88),
  max_mrw_per_vf: u32(92),
  max_srq_per_vf: u32(96),
  max_cq_per_vf: u32(100),
  max_gid_per_vf: u32(104),
  /** From HWRM_STAT_CTX_ALLOC (RoCE flag). */
  stat_ctx_id: u32(108),
});

// roce_hsi.h: struct creq_initialize_fw_resp
export const CreqInitializeFwResp = layout('creq_initialize_fw_resp', 16, CREQ_RESP_FIELDS);

// roce_hsi.h: struct cmdq_deinitialize_fw (16 bytes: the bare header)
export const CmdqDeinitializeFw = layout('cmdq_deinitialize_fw', 16, CMDQ_BASE_FIELDS);

// roce_hsi.h: struct creq_deinitialize_fw_resp
export const CreqDeinitializeFwResp = layout('creq_deinitialize_fw_resp', 16, CREQ_RESP_FIELDS);

// roce_hsi.h: struct cmdq_query_func (16 bytes; side buffer of 160 bytes, resp_size 10)
export const CmdqQueryFunc = layout('cmdq_query_func', 16, CMDQ_BASE_FIELDS);

// roce_hsi.h: struct creq_query_func_resp
export const CreqQueryFuncResp = layout('creq_query_func_resp', 16, {
  ...CREQ_RESP_FIELDS,
  /** Side-buffer size. */
  size: u32(4),
});

// roce_hsi.h: CREQ_QUERY_FUNC_RESP_SB_* bits of dev_cap_flags
export const DevCapFlags = {
  RESIZE_QP: 0x1,
  EXT_STATS: 0x10,
  /** Unified allocate-and-register (REGISTER_MR with ALLOC_MR). */
  MR_REGISTER_ALLOC: 0x20,
  OPTIMIZED_TRANSMIT_ENABLED: 0x40,
  CQE_V2: 0x80,
  PINGPONG_PUSH_MODE: 0x100,
  HW_REQUESTER_RETX_ENABLED: 0x200,
  HW_RESPONDER_RETX_ENABLED: 0x400,
  /**
   * Internal queue memory (IQM): the device keeps ORRQ/IRRQ itself and MODIFY_QP takes the read
   * depths as they are. Named by Broadcom's bnxt_re (qplib_res.h `_is_internal_queue_memory`,
   * `BNXT_RE_IQM`); the bit is not in mainline roce_hsi.h, so its value is unverified
   * (docs/hardware.md).
   */
  INTERNAL_QUEUE_MEMORY: 0x8000,
} as const;
/** dev_cap_flags bits 1–3: congestion-control generation. */
export const DEV_CAP_CC_GENERATION_SHIFT = 1;
export const DEV_CAP_CC_GENERATION_MASK = 0x7;

// roce_hsi.h: CREQ_QUERY_FUNC_RESP_SB_* bits of dev_cap_ext_flags
export const DevCapExtFlags = {
  ATOMIC_OPS_NOT_SUPPORTED: 0x1,
  DRV_VERSION_RGTR_SUPPORTED: 0x2,
  CREATE_QP_BATCH_SUPPORTED: 0x4,
  DESTROY_QP_BATCH_SUPPORTED: 0x8,
  ROCE_STATS_EXT_CTX_SUPPORTED: 0x10,
  CREATE_SRQ_SGE_SUPPORTED: 0x20,
  FIXED_SIZE_WQE_DISABLED: 0x40,
  DCN_SUPPORTED: 0x80,
} as const;

// roce_hsi.h: CREQ_QUERY_FUNC_RESP_SB_* bits of dev_cap_ext_flags_2
export const DevCapExtFlags2 = {
  OPTIMIZE_MODIFY_QP_SUPPORTED: 0x1,
  CHANGE_UDP_SRC_PORT_WQE_SUPPORTED: 0x2,
  CQ_COALESCING_SUPPORTED: 0x4,
  MEMORY_REGION_RO_SUPPORTED: 0x8,
  MAX_SRQ_EXTENDED: 0x40,
  MODIFY_QP_RATE_LIMIT_SUPPORTED: 0x400,
  MIN_RNR_RTR_RTS_OPT_SUPPORTED: 0x1000,
} as const;
/** dev_cap_ext_flags_2 bits 4–5: where the requester keeps its retransmission table. */
export const REQ_RETRANSMISSION_SUPPORT_SHIFT = 4;
export const REQ_RETRANSMISSION_SUPPORT_MASK = 0x3;
export const ReqRetransmissionSupport = {
  /** PSN-search table in host memory after the SQ (P5). */
  HOST_PSN_TABLE: 0x0,
  HOST_MSN_TABLE: 0x1,
  IQM_MSN_TABLE: 0x2,
} as const;

/**
 * True where dev_cap_ext_flags_2 says the SQ keeps the host MSN table (8-byte sq_msn_search
 * entries) instead of PSN search: the kernel's test (qplib_res.h `_is_host_msn_table`, read by
 * bnxt_qplib_create_qp into qp->is_host_msn_tbl). Hardware retransmission alone does not say it.
 */
export function isHostMsnTable(devCapExtFlags2: number): boolean {
  return ((devCapExtFlags2 >> REQ_RETRANSMISSION_SUPPORT_SHIFT) & REQ_RETRANSMISSION_SUPPORT_MASK)
    === ReqRetransmissionSupport.HOST_MSN_TABLE;
}

// roce_hsi.h: struct creq_query_func_resp_sb (160 bytes, newest HSI)
export const CreqQueryFuncRespSb = layout('creq_query_func_resp_sb', 160, {
  ...CREQ_RESP_SB_FIELDS,
  max_mr_size: u64n(8),
  /** Excludes QP1. */
  max_qp: u32(16),
  max_qp_wr: u16(20),
  dev_cap_flags: u16(22),
  max_cq: u32(24),
  max_cqe: u32(28),
  max_pd: u32(32),
  max_sge: u8(36),
  max_srq_sge: u8(37),
  max_qp_rd_atom: u8(38),
  max_qp_init_rd_atom: u8(39),
  max_mr: u32(40),
  max_mw: u32(44),
  max_raw_eth_qp: u32(48),
  max_ah: u32(52),
  max_fmr: u32(56),
  max_srq_wr: u32(60),
  max_pkeys: u32(64),
  max_inline_data: u32(68),
  max_map_per_fmr: u8(72),
  l2_db_space_size: u8(73),
  max_srq: u16(74),
  max_gid: u32(76),
  /** u32[12], pre-P5 TQM sizing. */
  tqm_alloc_reqs: bytes(80, 48),
  max_dpi: u32(128),
  max_sge_var_wqe: u8(132),
  dev_cap_ext_flags: u8(133),
  max_inline_data_var_wqe: u16(134),
  start_qid: u32(136),
  max_msn_table_size: u8(140),
  dev_cap_ext_flags_2: u16(142),
  max_xp_qp_size: u16(144),
  create_qp_batch_size: u16(146),
  destroy_qp_batch_size: u16(148),
  max_srq_ext: u16(150),
  /** Valid only with dev_cap_ext_flags_2 MODIFY_QP_RATE_LIMIT_SUPPORTED. */
  rate_limit_min: u16(154),
  rate_limit_max: u32(156),
});

// roce_hsi.h: struct cmdq_query_version (16 bytes: the bare header; answer is in the CREQ entry)
export const CmdqQueryVersion = layout('cmdq_query_version', 16, CMDQ_BASE_FIELDS);

// roce_hsi.h: struct creq_query_version_resp
export const CreqQueryVersionResp = layout('creq_query_version_resp', 16, {
  ...CREQ_RESP_FIELDS,
  fw_maj: u8(4),
  fw_minor: u8(5),
  fw_bld: u8(6),
  fw_rsvd: u8(7),
  intf_maj: u8(12),
  intf_minor: u8(13),
  intf_bld: u8(14),
  intf_rsvd: u8(15),
});
