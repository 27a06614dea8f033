/**
 * Context memory ("backing store"): host memory a P5/P7 PF hands the chip for its QP, SRQ,
 * CQ, VNIC, statistics, TQM ring, MR/AV and timer contexts (hsi.h hwrm_func_backing_store_qcaps_output,
 * hwrm_func_backing_store_cfg_input; bnxt.c bnxt_alloc_ctx_mem).
 * V1 (HWRM_FUNC_BACKING_STORE_QCAPS 0x192 / CFG 0x193) is what a P5 uses; the V2 pair
 * (QCAPS_V2 0x1a8 / CFG_V2 0x1a3, one call per context type) is required on P7.
 */
import { layout, u8, u16, u32, u64 } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// ---- V1: HWRM_FUNC_BACKING_STORE_QCAPS ------------------------------------------------

// hsi.h: struct hwrm_func_backing_store_qcaps_input (header only)
export const FuncBackingStoreQcapsInput = layout('hwrm_func_backing_store_qcaps_input', 16, {
  ...REQUEST_HEADER_FIELDS,
});

// hsi.h: struct hwrm_func_backing_store_qcaps_output
export const FuncBackingStoreQcapsOutput = layout('hwrm_func_backing_store_qcaps_output', 104, {
  ...RESPONSE_HEADER_FIELDS,
  qp_max_entries: u32(8),
  /** A PF allocates at least this many QP1 entries even without RoCE. */
  qp_min_qp1_entries: u16(12),
  qp_max_l2_entries: u16(14),
  /** Bytes per entry, as are the other *_entry_size fields. */
  qp_entry_size: u16(16),
  srq_max_l2_entries: u16(18),
  srq_max_entries: u32(20),
  srq_entry_size: u16(24),
  cq_max_l2_entries: u16(26),
  cq_max_entries: u32(28),
  cq_entry_size: u16(32),
  vnic_max_vnic_entries: u16(34),
  vnic_max_ring_table_entries: u16(36),
  vnic_entry_size: u16(38),
  stat_max_entries: u32(40),
  stat_entry_size: u16(44),
  /** Shared by every TQM ring. */
  tqm_entry_size: u16(46),
  tqm_min_entries_per_ring: u32(48),
  tqm_max_entries_per_ring: u32(52),
  mrav_max_entries: u32(56),
  mrav_entry_size: u16(60),
  tim_entry_size: u16(62),
  tim_max_entries: u32(64),
  /** Non-zero: CFG's mrav_num_entries is split (MR in 31:16, AV in 15:0) with flag MRAV_RESERVATION_SPLIT. */
  mrav_num_entries_units: u16(68),
  /** Round TQM counts up to a multiple of this; 0 means 1. */
  tqm_entries_multiple: u8(70),
  /** Byte value pre-filled at each kind's init offset when its ctx_init_mask bit is set. */
  ctx_kind_initializer: u8(71),
  /** FUNC_BACKING_STORE_QCAPS_RESP_CTX_INIT_MASK bits. */
  ctx_init_mask: u16(72),
  /** Offsets inside an entry, in 4-byte units. */
  qp_init_offset: u8(74),
  srq_init_offset: u8(75),
  cq_init_offset: u8(76),
  vnic_init_offset: u8(77),
  /** 0: use the number of TX CoS queues from QUEUE_QPORTCFG (at most 8 in the 256-byte CFG). */
  tqm_fp_rings_count: u8(78),
  stat_init_offset: u8(79),
  mrav_init_offset: u8(80),
  /** Fast-path rings beyond 8; used only with the 336-byte CFG. */
  tqm_fp_rings_count_ext: u8(81),
  tkc_init_offset: u8(82),
  rkc_init_offset: u8(83),
  tkc_entry_size: u16(84),
  rkc_entry_size: u16(86),
  tkc_max_entries: u32(88),
  rkc_max_entries: u32(92),
  fast_qpmd_qp_num_entries: u16(96),
  valid: u8(103),
});

export const FUNC_BACKING_STORE_QCAPS_RESP_CTX_INIT_MASK = {
  QP: 0x1,
  SRQ: 0x2,
  CQ: 0x4,
  VNIC: 0x8,
  STAT: 0x10,
  MRAV: 0x20,
  TKC: 0x40,
  RKC: 0x80,
} as const;

// ---- V1: HWRM_FUNC_BACKING_STORE_CFG --------------------------------------------------

/**
 * The "legacy" request length: everything before tqm_ring8_*. Drivers send only these bytes
 * when 336 does not fit max_ext_req_len. Both lengths exceed 128: always short-command mode.
 */
export const FUNC_BACKING_STORE_CFG_LEGACY_LEN = 256;

// hsi.h: struct hwrm_func_backing_store_cfg_input (336 bytes)
export const FuncBackingStoreCfgInput = layout('hwrm_func_backing_store_cfg_input', 336, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_BACKING_STORE_CFG_REQ_FLAGS bits. */
  flags: u32(16),
  /** FUNC_BACKING_STORE_CFG_REQ_ENABLES bits. */
  enables: u32(20),
  // Each *_pg_size_*_lvl byte: bits 3:0 level, bits 7:4 page size (backingStorePgSizeLvl).
  qpc_pg_size_qpc_lvl: u8(24),
  srq_pg_size_srq_lvl: u8(25),
  cq_pg_size_cq_lvl: u8(26),
  vnic_pg_size_vnic_lvl: u8(27),
  stat_pg_size_stat_lvl: u8(28),
  tqm_sp_pg_size_tqm_sp_lvl: u8(29),
  tqm_ring0_pg_size_tqm_ring0_lvl: u8(30),
  tqm_ring1_pg_size_tqm_ring1_lvl: u8(31),
  tqm_ring2_pg_size_tqm_ring2_lvl: u8(32),
  tqm_ring3_pg_size_tqm_ring3_lvl: u8(33),
  tqm_ring4_pg_size_tqm_ring4_lvl: u8(34),
  tqm_ring5_pg_size_tqm_ring5_lvl: u8(35),
  tqm_ring6_pg_size_tqm_ring6_lvl: u8(36),
  tqm_ring7_pg_size_tqm_ring7_lvl: u8(37),
  mrav_pg_size_mrav_lvl: u8(38),
  tim_pg_size_tim_lvl: u8(39),
  // Each *_page_dir: level 0 the data page's IOVA, level 1/2 the IOVA of a page table.
  qpc_page_dir: u64(40),
  srq_page_dir: u64(48),
  cq_page_dir: u64(56),
  vnic_page_dir: u64(64),
  stat_page_dir: u64(72),
  tqm_sp_page_dir: u64(80),
  tqm_ring0_page_dir: u64(88),
  tqm_ring1_page_dir: u64(96),
  tqm_ring2_page_dir: u64(104),
  tqm_ring3_page_dir: u64(112),
  tqm_ring4_page_dir: u64(120),
  tqm_ring5_page_dir: u64(128),
  tqm_ring6_page_dir: u64(136),
  tqm_ring7_page_dir: u64(144),
  mrav_page_dir: u64(152),
  tim_page_dir: u64(160),
  qp_num_entries: u32(168),
  srq_num_entries: u32(172),
  cq_num_entries: u32(176),
  stat_num_entries: u32(180),
  tqm_sp_num_entries: u32(184),
  tqm_ring0_num_entries: u32(188),
  tqm_ring1_num_entries: u32(192),
  tqm_ring2_num_entries: u32(196),
  tqm_ring3_num_entries: u32(200),
  tqm_ring4_num_entries: u32(204),
  tqm_ring5_num_entries: u32(208),
  tqm_ring6_num_entries: u32(212),
  tqm_ring7_num_entries: u32(216),
  mrav_num_entries: u32(220),
  tim_num_entries: u32(224),
  qp_num_qp1_entries: u16(228),
  qp_num_l2_entries: u16(230),
  qp_entry_size: u16(232),
  srq_num_l2_entries: u16(234),
  srq_entry_size: u16(236),
  cq_num_l2_entries: u16(238),
  cq_entry_size: u16(240),
  vnic_num_vnic_entries: u16(242),
  vnic_num_ring_table_entries: u16(244),
  vnic_entry_size: u16(246),
  stat_entry_size: u16(248),
  tqm_entry_size: u16(250),
  mrav_entry_size: u16(252),
  tim_entry_size: u16(254),
  // The 336-byte form only from here.
  tqm_ring8_pg_size_tqm_ring_lvl: u8(256),
  tqm_ring8_num_entries: u32(260),
  tqm_ring8_page_dir: u64(264),
  tqm_ring9_pg_size_tqm_ring_lvl: u8(272),
  tqm_ring9_num_entries: u32(276),
  tqm_ring9_page_dir: u64(280),
  tqm_ring10_pg_size_tqm_ring_lvl: u8(288),
  tqm_ring10_num_entries: u32(292),
  tqm_ring10_page_dir: u64(296),
  tkc_num_entries: u32(304),
  rkc_num_entries: u32(308),
  tkc_page_dir: u64(312),
  rkc_page_dir: u64(320),
  tkc_entry_size: u16(328),
  rkc_entry_size: u16(330),
  tkc_pg_size_tkc_lvl: u8(332),
  rkc_pg_size_rkc_lvl: u8(333),
  qp_num_fast_qpmd_entries: u16(334),
});

// hsi.h: struct hwrm_func_backing_store_cfg_output
export const FuncBackingStoreCfgOutput = layout('hwrm_func_backing_store_cfg_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  valid: u8(15),
});

export const FUNC_BACKING_STORE_CFG_REQ_FLAGS = {
  /** Use only on-chip resources: minimal L2, no RoCE. */
  PREBOOT_MODE: 0x1,
  MRAV_RESERVATION_SPLIT: 0x2,
} as const;

export const FUNC_BACKING_STORE_CFG_REQ_ENABLES = {
  QP: 0x1,
  SRQ: 0x2,
  CQ: 0x4,
  VNIC: 0x8,
  STAT: 0x10,
  TQM_SP: 0x20,
  TQM_RING0: 0x40,
  TQM_RING1: 0x80,
  TQM_RING2: 0x100,
  TQM_RING3: 0x200,
  TQM_RING4: 0x400,
  TQM_RING5: 0x800,
  TQM_RING6: 0x1000,
  TQM_RING7: 0x2000,
  MRAV: 0x4000,
  TIM: 0x8000,
  TQM_RING8: 0x10000,
  TQM_RING9: 0x20000,
  TQM_RING10: 0x40000,
  TKC: 0x80000,
  RKC: 0x100000,
  QP_FAST_QPMD: 0x200000,
} as const;

/** Page size codes of the high nibble of a *_pg_size_*_lvl byte (V1) or page_size_pbl_level (V2). */
export const FUNC_BACKING_STORE_PG_SIZE = {
  PG_4K: 0x0,
  PG_8K: 0x1,
  PG_64K: 0x2,
  PG_2M: 0x3,
  PG_8M: 0x4,
  PG_1G: 0x5,
} as const;

/** Page-table levels of the low nibble: 0 = page_dir is the data page, 1/2 = one/two table levels. */
export const FUNC_BACKING_STORE_LVL = { LVL_0: 0x0, LVL_1: 0x1, LVL_2: 0x2 } as const;

/** The combined byte: page size code in bits 7:4, level in bits 3:0. */
export function backingStorePgSizeLvl(pgSize: number, lvl: number): number {
  if (!Number.isInteger(pgSize) || pgSize < 0 || pgSize > FUNC_BACKING_STORE_PG_SIZE.PG_1G)
    throw new RangeError(`backing store page size code ${pgSize} is not 0..5`);
  if (!Number.isInteger(lvl) || lvl < 0 || lvl > FUNC_BACKING_STORE_LVL.LVL_2)
    throw new RangeError(`backing store level ${lvl} is not 0..2`);
  return (pgSize << 4) | lvl;
}

// ---- V2: HWRM_FUNC_BACKING_STORE_QCAPS_V2 ---------------------------------------------

/** Context types for QCAPS_V2, CFG_V2 and QCFG_V2 (hsi.h FUNC_BACKING_STORE_*_V2_REQ_TYPE_*). */
export const FUNC_BACKING_STORE_V2_TYPE = {
  QP: 0x0,
  SRQ: 0x1,
  CQ: 0x2,
  VNIC: 0x3,
  STAT: 0x4,
  SP_TQM_RING: 0x5,
  FP_TQM_RING: 0x6,
  MRAV: 0xe,
  TIM: 0xf,
  TX_CK: 0x13,
  RX_CK: 0x14,
  MP_TQM_RING: 0x15,
  SQ_DB_SHADOW: 0x16,
  RQ_DB_SHADOW: 0x17,
  SRQ_DB_SHADOW: 0x18,
  CQ_DB_SHADOW: 0x19,
  TBL_SCOPE: 0x1c,
  XID_PARTITION: 0x1d,
  SRT_TRACE: 0x1e,
  SRT2_TRACE: 0x1f,
  CRT_TRACE: 0x20,
  CRT2_TRACE: 0x21,
  RIGP0_TRACE: 0x22,
  L2_HWRM_TRACE: 0x23,
  ROCE_HWRM_TRACE: 0x24,
  TTX_PACING_TQM_RING: 0x25,
  CA0_TRACE: 0x26,
  CA1_TRACE: 0x27,
  CA2_TRACE: 0x28,
  RIGP1_TRACE: 0x29,
  AFM_KONG_HWRM_TRACE: 0x2a,
  ERR_QPC_TRACE: 0x2b,
  /** next_valid_type value ending the discovery loop. */
  INVALID: 0xffff,
} as const;

// hsi.h: struct hwrm_func_backing_store_qcaps_v2_input
export const FuncBackingStoreQcapsV2Input = layout('hwrm_func_backing_store_qcaps_v2_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_BACKING_STORE_V2_TYPE. */
  type: u16(16),
});

// hsi.h: struct hwrm_func_backing_store_qcaps_v2_output (kernel header, with max_instance_count)
export const FuncBackingStoreQcapsV2Output = layout('hwrm_func_backing_store_qcaps_v2_output', 56, {
  ...RESPONSE_HEADER_FIELDS,
  type: u16(8),
  entry_size: u16(10),
  /** FUNC_BACKING_STORE_QCAPS_V2_RESP_FLAGS bits. */
  flags: u32(12),
  /** One CFG_V2 call per set bit; 0 means one instance. */
  instance_bit_map: u32(16),
  ctx_init_value: u8(20),
  /** In 4-byte units. */
  ctx_init_offset: u8(21),
  entry_multiple: u8(22),
  max_num_entries: u32(24),
  min_num_entries: u32(28),
  /** FUNC_BACKING_STORE_V2_TYPE.INVALID (0xffff) when there are no more. */
  next_valid_type: u16(32),
  /** Number of valid split_entry_* words. */
  subtype_valid_cnt: u8(34),
  exact_cnt_bit_map: u8(35),
  /** QP: 0 L2, 1 QP1, 2 fast-QPMD entries; SRQ/CQ: 0 L2; VNIC: 0 VNICs; MRAV: 0 AV entries. */
  split_entry_0: u32(36),
  split_entry_1: u32(40),
  split_entry_2: u32(44),
  split_entry_3: u32(48),
  /** Kernel header; DPDK has reserved bytes here. */
  max_instance_count: u16(52),
  valid: u8(55),
});

export const FUNC_BACKING_STORE_QCAPS_V2_RESP_FLAGS = {
  ENABLE_CTX_KIND_INIT: 0x1,
  TYPE_VALID: 0x2,
  /** Doorbell-shadow style types: skipped unless that feature is used. */
  DRIVER_MANAGED_MEMORY: 0x4,
  ROCE_QP_PSEUDO_STATIC_ALLOC: 0x8,
  FW_DBG_TRACE: 0x10,
  FW_BIN_DBG_TRACE: 0x20,
  NEXT_BS_OFFSET: 0x40,
} as const;

// ---- V2: HWRM_FUNC_BACKING_STORE_CFG_V2 -----------------------------------------------

// hsi.h: struct hwrm_func_backing_store_cfg_v2_input
export const FuncBackingStoreCfgV2Input = layout('hwrm_func_backing_store_cfg_v2_input', 64, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_BACKING_STORE_V2_TYPE. */
  type: u16(16),
  /** Bit index within QCAPS_V2's instance_bit_map. */
  instance: u16(18),
  /** FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS bits. */
  flags: u32(20),
  page_dir: u64(24),
  num_entries: u32(32),
  entry_size: u16(36),
  /** Bits 3:0 level, bits 7:4 page size (backingStorePgSizeLvl). */
  page_size_pbl_level: u8(38),
  subtype_valid_cnt: u8(39),
  split_entry_0: u32(40),
  split_entry_1: u32(44),
  split_entry_2: u32(48),
  split_entry_3: u32(52),
  /** FUNC_BACKING_STORE_CFG_V2_REQ_ENABLES bits. */
  enables: u32(56),
  next_bs_offset: u32(60),
});

// hsi.h: struct hwrm_func_backing_store_cfg_v2_output
export const FuncBackingStoreCfgV2Output = layout('hwrm_func_backing_store_cfg_v2_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  valid: u8(15),
});

export const FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS = {
  PREBOOT_MODE: 0x1,
  /** Set on the last CFG_V2 call of the whole configuration. */
  BS_CFG_ALL_DONE: 0x2,
  BS_EXTEND: 0x4,
} as const;

export const FUNC_BACKING_STORE_CFG_V2_REQ_ENABLES = { NEXT_BS_OFFSET: 0x1 } as const;
