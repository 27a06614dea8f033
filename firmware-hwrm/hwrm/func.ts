/**
 * Function-level queries and reset: HWRM_FUNC_RESET (0x11), HWRM_FUNC_QCAPS (0x15),
 * HWRM_FUNC_QCFG (0x16), HWRM_FUNC_RESOURCE_QCAPS (0x190) (hsi.h hwrm_func_reset_input,
 * hwrm_func_qcaps_output, hwrm_func_qcfg_output, hwrm_func_resource_qcaps_output; bnxt.c bnxt_hwrm_func_qcaps). The
 * `fid` of the queries is HWRM_FID_SELF (0xffff) for the calling function.
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// ---- HWRM_FUNC_RESET ------------------------------------------------------------------

// hsi.h: struct hwrm_func_reset_input
export const FuncResetInput = layout('hwrm_func_reset_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_RESET_REQ_ENABLES; 0 for a function resetting itself. */
  enables: u32(16),
  vf_id: u16(20),
  /** FUNC_RESET_REQ_FUNC_RESET_LEVEL. */
  func_reset_level: u8(22),
});

// hsi.h: struct hwrm_func_reset_output
export const FuncResetOutput = layout('hwrm_func_reset_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  valid: u8(15),
});

export const FUNC_RESET_REQ_ENABLES = { VF_ID_VALID: 0x1 } as const;

export const FUNC_RESET_REQ_FUNC_RESET_LEVEL = {
  /** The caller and its VFs (the caller only if it has none); what both drivers send. */
  RESETALL: 0x0,
  RESETME: 0x1,
  RESETCHILDREN: 0x2,
  RESETVF: 0x3,
} as const;

// ---- HWRM_FUNC_QCAPS ------------------------------------------------------------------

// hsi.h: struct hwrm_func_qcaps_input
export const FuncQcapsInput = layout('hwrm_func_qcaps_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  fid: u16(16),
});

// hsi.h: struct hwrm_func_qcaps_output (kernel header, 144 bytes)
export const FuncQcapsOutput = layout('hwrm_func_qcaps_output', 144, {
  ...RESPONSE_HEADER_FIELDS,
  fid: u16(8),
  /** Physical port; the port_id of PORT_MAC_QCFG. */
  port_id: u16(10),
  /** FUNC_QCAPS_RESP_FLAGS bits. */
  flags: u32(12),
  /** Permanent MAC in wire order. */
  mac_address: bytes(16, 6),
  max_rsscos_ctx: u16(22),
  max_cmpl_rings: u16(24),
  max_tx_rings: u16(26),
  max_rx_rings: u16(28),
  max_l2_ctxs: u16(30),
  max_vnics: u16(32),
  first_vf_id: u16(34),
  max_vfs: u16(36),
  max_stat_ctx: u16(38),
  max_encap_records: u32(40),
  max_decap_records: u32(44),
  max_tx_em_flows: u32(48),
  max_tx_wm_flows: u32(52),
  max_rx_em_flows: u32(56),
  max_rx_wm_flows: u32(60),
  max_mcast_filters: u32(64),
  max_flow_id: u32(68),
  max_hw_ring_grps: u32(72),
  max_sp_tx_rings: u16(76),
  max_msix_vfs: u16(78),
  /** FUNC_QCAPS_RESP_FLAGS_EXT bits. */
  flags_ext: u32(80),
  max_schqs: u8(84),
  mpc_chnls_cap: u8(85),
  max_key_ctxs_alloc: u16(86),
  /** FUNC_QCAPS_RESP_FLAGS_EXT2 bits. */
  flags_ext2: u32(88),
  tunnel_disable_flag: u16(92),
  xid_partition_cap: u16(94),
  device_serial_number: bytes(96, 8),
  ctxs_per_partition: u16(104),
  /** Kernel header; DPDK's copy still has these bytes unused. */
  max_tso_segs: u16(106),
  roce_vf_max_av: u32(108),
  roce_vf_max_cq: u32(112),
  roce_vf_max_mrw: u32(116),
  roce_vf_max_qp: u32(120),
  roce_vf_max_srq: u32(124),
  roce_vf_max_gid: u32(128),
  /** FUNC_QCAPS_RESP_FLAGS_EXT3 bits. */
  flags_ext3: u32(132),
  max_roce_vfs: u16(136),
  max_crypto_rx_flow_filters: u16(138),
  valid: u8(143),
});

/** FUNC_QCAPS response flags (offset 12). RoCE is possible when ROCE_V1 or ROCE_V2 is set. */
export const FUNC_QCAPS_RESP_FLAGS = {
  PUSH_MODE_SUPPORTED: 0x1,
  GLOBAL_MSIX_AUTOMASKING: 0x2,
  PTP_SUPPORTED: 0x4,
  ROCE_V1_SUPPORTED: 0x8,
  ROCE_V2_SUPPORTED: 0x10,
  WOL_MAGICPKT_SUPPORTED: 0x20,
  WOL_BMP_SUPPORTED: 0x40,
  TX_RING_RL_SUPPORTED: 0x80,
  TX_BW_CFG_SUPPORTED: 0x100,
  VF_TX_RING_RL_SUPPORTED: 0x200,
  VF_BW_CFG_SUPPORTED: 0x400,
  STD_TX_RING_MODE_SUPPORTED: 0x800,
  GENEVE_TUN_FLAGS_SUPPORTED: 0x1000,
  NVGRE_TUN_FLAGS_SUPPORTED: 0x2000,
  GRE_TUN_FLAGS_SUPPORTED: 0x4000,
  MPLS_TUN_FLAGS_SUPPORTED: 0x8000,
  PCIE_STATS_SUPPORTED: 0x10000,
  ADOPTED_PF_SUPPORTED: 0x20000,
  ADMIN_PF_SUPPORTED: 0x40000,
  LINK_ADMIN_STATUS_SUPPORTED: 0x80000,
  /** bnxt_re: doorbell push. */
  WCB_PUSH_MODE: 0x100000,
  DYNAMIC_TX_RING_ALLOC: 0x200000,
  HOT_RESET_CAPABLE: 0x400000,
  ERROR_RECOVERY_CAPABLE: 0x800000,
  EXT_STATS_SUPPORTED: 0x1000000,
  ERR_RECOVER_RELOAD: 0x2000000,
  NOTIFY_VF_DEF_VNIC_CHNG_SUPPORTED: 0x4000000,
  VLAN_ACCELERATION_TX_DISABLED: 0x8000000,
  COREDUMP_CMD_SUPPORTED: 0x10000000,
  CRASHDUMP_CMD_SUPPORTED: 0x20000000,
  PFC_WD_STATS_SUPPORTED: 0x40000000,
  DBG_QCAPS_CMD_SUPPORTED: 0x80000000,
} as const;

/** Selected FUNC_QCAPS flags_ext bits (offset 80). */
export const FUNC_QCAPS_RESP_FLAGS_EXT = {
  EXT_HW_STATS_SUPPORTED: 0x4,
  HOT_RESET_IF_SUPPORT: 0x8,
  PPP_PUSH_MODE_SUPPORTED: 0x80,
  NPAR_1_2_SUPPORTED: 0x10000,
  TX_COAL_CMPL_CAP: 0x2000000,
  /** Use the V2 backing-store commands. */
  BS_V2_SUPPORTED: 0x4000000,
  /** The firmware only accepts the V2 backing-store commands (P7). */
  BS_V2_REQUIRED: 0x8000000,
  PTP_64BIT_RTC_SUPPORTED: 0x10000000,
  DBR_PACING_SUPPORTED: 0x20000000,
  HW_DBR_DROP_RECOV_SUPPORTED: 0x40000000,
  DISABLE_CQ_OVERFLOW_DETECTION_SUPPORTED: 0x80000000,
} as const;

/** Selected FUNC_QCAPS flags_ext2 bits (offset 88). */
export const FUNC_QCAPS_RESP_FLAGS_EXT2 = {
  /** bnxt_re doorbell pacing. */
  DBR_PACING_EXT_SUPPORTED: 0x8,
  SW_DBR_DROP_RECOVERY_SUPPORTED: 0x10,
  UDP_GSO_SUPPORTED: 0x40,
  TX_PKT_TS_CMPL_SUPPORTED: 0x200,
  ROCE_VF_RESOURCE_MGMT_SUPPORTED: 0x100000,
  SW_MAX_RESOURCE_LIMITS_SUPPORTED: 0x800000,
} as const;

/** Selected FUNC_QCAPS flags_ext3 bits (offset 132). */
export const FUNC_QCAPS_RESP_FLAGS_EXT3 = {
  RM_RSV_WHILE_ALLOC_CAP: 0x1,
  /** The PF must allocate an L2 filter (CFA_L2_FILTER_ALLOC) before traffic is sent. */
  REQUIRE_L2_FILTER: 0x2,
  MAX_ROCE_VFS_SUPPORTED: 0x4,
  RX_RATE_PROFILE_SEL_SUPPORTED: 0x8,
  BIDI_OPT_SUPPORTED: 0x10,
  MIRROR_ON_ROCE_SUPPORTED: 0x20,
  /** RING_ALLOC accepts `dpi` (enables DPI_VALID). */
  MULTI_L2_DB_SUPPORTED: 0x200,
} as const;

// ---- HWRM_FUNC_QCFG -------------------------------------------------------------------

// hsi.h: struct hwrm_func_qcfg_input
export const FuncQcfgInput = layout('hwrm_func_qcfg_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  fid: u16(16),
});

// hsi.h: struct hwrm_func_qcfg_output (kernel header, 176 bytes; DPDK's ends at 160 with
// valid at 169, so a driver locates valid by resp_len - 1)
export const FuncQcfgOutput = layout('hwrm_func_qcfg_output', 176, {
  ...RESPONSE_HEADER_FIELDS,
  fid: u16(8),
  port_id: u16(10),
  vlan: u16(12),
  /** FUNC_QCFG_RESP_FLAGS bits. */
  flags: u16(14),
  /** Currently configured MAC in wire order. */
  mac_address: bytes(16, 6),
  pci_id: u16(22),
  alloc_rsscos_ctx: u16(24),
  alloc_cmpl_rings: u16(26),
  alloc_tx_rings: u16(28),
  alloc_rx_rings: u16(30),
  alloc_l2_ctx: u16(32),
  alloc_vnics: u16(34),
  admin_mtu: u16(36),
  mru: u16(38),
  stat_ctx_id: u16(40),
  /** FUNC_QCFG_RESP_PORT_PARTITION_TYPE. */
  port_partition_type: u8(42),
  port_pf_cnt: u8(43),
  dflt_vnic_id: u16(44),
  max_mtu_configured: u16(46),
  min_bw: u32(48),
  max_bw: u32(52),
  evb_mode: u8(56),
  options: u8(57),
  alloc_vfs: u16(58),
  alloc_mcast_filters: u32(60),
  alloc_hw_ring_grps: u32(64),
  alloc_sp_tx_rings: u16(68),
  alloc_stat_ctx: u16(70),
  alloc_msix: u16(72),
  registered_vfs: u16(74),
  /** Size of the L2 doorbell area in BAR2, in KiB (0: map the whole BAR). */
  l2_doorbell_bar_size_kb: u16(76),
  active_endpoints: u8(78),
  always_1: u8(79),
  reset_addr_poll: u32(80),
  /** L2 doorbell offset in BAR2 in KiB on P7 (P5 uses 0x10000 PF / 0x4000 VF instead). */
  legacy_l2_db_size_kb: u16(84),
  svif_info: u16(86),
  mpc_chnls: u8(88),
  /** FUNC_QCFG_RESP_DB_PAGE_SIZE. */
  db_page_size: u8(89),
  /** Valid when flags has ROCE_VNIC_ID_VALID. */
  roce_vnic_id: u16(90),
  partition_min_bw: u32(92),
  partition_max_bw: u32(96),
  host_mtu: u16(100),
  flags2: u16(102),
  stag_vid: u16(104),
  port_kdnet_mode: u8(106),
  kdnet_pcie_function: u8(107),
  port_kdnet_fid: u16(108),
  roce_bidi_opt_mode: u8(111),
  num_ktls_tx_key_ctxs: u32(112),
  num_ktls_rx_key_ctxs: u32(116),
  lag_id: u8(120),
  parif: u8(121),
  fw_lag_id: u8(122),
  num_quic_tx_key_ctxs: u32(124),
  num_quic_rx_key_ctxs: u32(128),
  roce_max_av_per_vf: u32(132),
  roce_max_cq_per_vf: u32(136),
  roce_max_mrw_per_vf: u32(140),
  roce_max_qp_per_vf: u32(144),
  roce_max_srq_per_vf: u32(148),
  roce_max_gid_per_vf: u32(152),
  xid_partition_cfg: u16(156),
  mirror_vnic_id: u16(158),
  max_link_width: u8(160),
  max_link_speed: u8(161),
  negotiated_link_width: u8(162),
  negotiated_link_speed: u8(163),
  pcie_compliance: u8(166),
  l2_db_multi_page_size_kb: u16(168),
  valid: u8(175),
});

/** FUNC_QCFG response flags (offset 14). */
export const FUNC_QCFG_RESP_FLAGS = {
  OOB_WOL_MAGICPKT_ENABLED: 0x1,
  OOB_WOL_BMP_ENABLED: 0x2,
  FW_DCBX_AGENT_ENABLED: 0x4,
  STD_TX_RING_MODE_ENABLED: 0x8,
  FW_LLDP_AGENT_ENABLED: 0x10,
  MULTI_HOST: 0x20,
  TRUSTED_VF: 0x40,
  SECURE_MODE_ENABLED: 0x80,
  PREBOOT_LEGACY_L2_RINGS: 0x100,
  HOT_RESET_ALLOWED: 0x200,
  PPP_PUSH_MODE_ENABLED: 0x400,
  RING_MONITOR_ENABLED: 0x800,
  FAST_RESET_ALLOWED: 0x1000,
  MULTI_ROOT: 0x2000,
  ENABLE_RDMA_SRIOV: 0x4000,
  ROCE_VNIC_ID_VALID: 0x8000,
} as const;

export const FUNC_QCFG_RESP_PORT_PARTITION_TYPE = {
  SPF: 0x0,
  MPFS: 0x1,
  NPAR1_0: 0x2,
  NPAR1_5: 0x3,
  NPAR2_0: 0x4,
  NPAR1_2: 0x5,
  UNKNOWN: 0xff,
} as const;

/** db_page_size codes: 4 KiB << code. */
export const FUNC_QCFG_RESP_DB_PAGE_SIZE = {
  '4KB': 0x0,
  '8KB': 0x1,
  '16KB': 0x2,
  '32KB': 0x3,
  '64KB': 0x4,
  '128KB': 0x5,
  '256KB': 0x6,
  '512KB': 0x7,
  '1MB': 0x8,
  '2MB': 0x9,
  '4MB': 0xa,
} as const;

// ---- HWRM_FUNC_RESOURCE_QCAPS ---------------------------------------------------------

// hsi.h: struct hwrm_func_resource_qcaps_input
export const FuncResourceQcapsInput = layout('hwrm_func_resource_qcaps_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  fid: u16(16),
});

// hsi.h: struct hwrm_func_resource_qcaps_output (success means the firmware runs the "new
// resource manager": rings must be reserved with FUNC_CFG before they are allocated)
export const FuncResourceQcapsOutput = layout('hwrm_func_resource_qcaps_output', 88, {
  ...RESPONSE_HEADER_FIELDS,
  max_vfs: u16(8),
  max_msix: u16(10),
  vf_reservation_strategy: u16(12),
  min_rsscos_ctx: u16(14),
  max_rsscos_ctx: u16(16),
  min_cmpl_rings: u16(18),
  max_cmpl_rings: u16(20),
  min_tx_rings: u16(22),
  max_tx_rings: u16(24),
  min_rx_rings: u16(26),
  max_rx_rings: u16(28),
  min_l2_ctxs: u16(30),
  max_l2_ctxs: u16(32),
  min_vnics: u16(34),
  max_vnics: u16(36),
  min_stat_ctx: u16(38),
  max_stat_ctx: u16(40),
  min_hw_ring_grps: u16(42),
  max_hw_ring_grps: u16(44),
  max_tx_scheduler_inputs: u16(46),
  flags: u16(48),
  min_msix: u16(50),
  min_ktls_tx_key_ctxs: u32(52),
  max_ktls_tx_key_ctxs: u32(56),
  min_ktls_rx_key_ctxs: u32(60),
  max_ktls_rx_key_ctxs: u32(64),
  min_quic_tx_key_ctxs: u32(68),
  max_quic_tx_key_ctxs: u32(72),
  min_quic_rx_key_ctxs: u32(76),
  max_quic_rx_key_ctxs: u32(80),
  valid: u8(87),
});

export const FUNC_RESOURCE_QCAPS_RESP_VF_RESERVATION_STRATEGY =
  { MAXIMAL: 0x0, MINIMAL: 0x1, MINIMAL_STATIC: 0x2 } as const;
export const FUNC_RESOURCE_QCAPS_RESP_FLAGS = { MIN_GUARANTEED: 0x1 } as const;
