/**
 * The L2 commands Linux's bnxt_en sends when the interface opens (`__bnxt_open_nic` ->
 * `bnxt_init_chip`): VNICs and their RSS and placement settings, the MAC filter and receive
 * mask, completion-ring interrupt coalescing, port MAC and PHY settings. Offsets from
 * bnxt_hsi.h; only the fields the driver or the model use are named, sizes are whole.
 */
import { layout, u8, u16, u32, u64, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

const empty = (name: string) => layout(name, 16, { ...RESPONSE_HEADER_FIELDS, valid: u8(15) });

// hsi.h: struct hwrm_vnic_alloc_input (24B) / _output (16B)
export const VnicAllocInput = layout('hwrm_vnic_alloc_input', 24, {
  ...REQUEST_HEADER_FIELDS, flags: u32(16), virtio_net_fid: u16(20),
});
export const VnicAllocOutput = layout('hwrm_vnic_alloc_output', 16, {
  ...RESPONSE_HEADER_FIELDS, vnic_id: u32(8), valid: u8(15),
});
// hsi.h: struct hwrm_vnic_free_input (24B) / _output (16B)
export const VnicFreeInput = layout('hwrm_vnic_free_input', 24, { ...REQUEST_HEADER_FIELDS, vnic_id: u32(16) });
export const VnicFreeOutput = empty('hwrm_vnic_free_output');

// hsi.h: struct hwrm_vnic_cfg_input (48B) / _output (16B)
export const VnicCfgInput = layout('hwrm_vnic_cfg_input', 48, {
  ...REQUEST_HEADER_FIELDS,
  flags: u32(16), enables: u32(20), vnic_id: u16(24), dflt_ring_grp: u16(26), rss_rule: u16(28), cos_rule: u16(30),
  lb_rule: u16(32), mru: u16(34), default_rx_ring_id: u16(36), default_cmpl_ring_id: u16(38), queue_id: u16(40),
  rx_csum_v2_mode: u8(42), l2_cqe_mode: u8(43),
});
export const VnicCfgOutput = empty('hwrm_vnic_cfg_output');
/** VNIC_CFG_REQ_FLAGS bits (bnxt_hsi.h); the RoCE modes say the VNIC's function runs RoCE beside L2. */
export const VNIC_CFG_REQ_FLAGS = {
  DEFAULT: 0x1, VLAN_STRIP_MODE: 0x2, BD_STALL_MODE: 0x4, ROCE_DUAL_VNIC_MODE: 0x8, ROCE_ONLY_VNIC_MODE: 0x10,
  RSS_DFLT_CR_MODE: 0x20, ROCE_MIRRORING_CAPABLE_VNIC_MODE: 0x40,
} as const;
export const VNIC_CFG_REQ_ENABLES = {
  DFLT_RING_GRP: 0x1, RSS_RULE: 0x2, COS_RULE: 0x4, LB_RULE: 0x8, MRU: 0x10, DEFAULT_RX_RING_ID: 0x20,
  DEFAULT_CMPL_RING_ID: 0x40, QUEUE_ID: 0x80,
} as const;

// hsi.h: struct hwrm_vnic_rss_cfg_input (48B) / _output (16B)
export const VnicRssCfgInput = layout('hwrm_vnic_rss_cfg_input', 48, {
  ...REQUEST_HEADER_FIELDS,
  hash_type: u32(16), vnic_id: u16(20), ring_table_pair_index: u8(22), hash_mode_flags: u8(23),
  ring_grp_tbl_addr: u64(24), hash_key_tbl_addr: u64(32), rss_ctx_idx: u16(40), flags: u8(42), ring_select_mode: u8(43),
});
export const VnicRssCfgOutput = empty('hwrm_vnic_rss_cfg_output');

// hsi.h: struct hwrm_vnic_rss_cos_lb_ctx_alloc_input (16B) / _output (16B); _free_input (24B)
export const VnicRssCosLbCtxAllocInput = layout(
  'hwrm_vnic_rss_cos_lb_ctx_alloc_input', 16, { ...REQUEST_HEADER_FIELDS },
);
export const VnicRssCosLbCtxAllocOutput = layout('hwrm_vnic_rss_cos_lb_ctx_alloc_output', 16, {
  ...RESPONSE_HEADER_FIELDS, rss_cos_lb_ctx_id: u16(8), valid: u8(15),
});
export const VnicRssCosLbCtxFreeInput = layout('hwrm_vnic_rss_cos_lb_ctx_free_input', 24, {
  ...REQUEST_HEADER_FIELDS, rss_cos_lb_ctx_id: u16(16),
});
export const VnicRssCosLbCtxFreeOutput = empty('hwrm_vnic_rss_cos_lb_ctx_free_output');

// hsi.h: struct hwrm_vnic_plcmodes_cfg_input (40B) / _output (16B)
export const VnicPlcmodesCfgInput = layout('hwrm_vnic_plcmodes_cfg_input', 40, {
  ...REQUEST_HEADER_FIELDS,
  flags: u32(16), enables: u32(20), vnic_id: u32(24), jumbo_thresh: u16(28), hds_offset: u16(30),
  hds_threshold: u16(32), max_bds: u16(34),
});
export const VnicPlcmodesCfgOutput = empty('hwrm_vnic_plcmodes_cfg_output');

// hsi.h: struct hwrm_cfa_l2_filter_alloc_input (96B) / _output (24B)
export const CfaL2FilterAllocInput = layout('hwrm_cfa_l2_filter_alloc_input', 96, {
  ...REQUEST_HEADER_FIELDS,
  flags: u32(16), enables: u32(20), l2_addr: bytes(24, 6), num_vlans: u8(30), t_num_vlans: u8(31),
  l2_addr_mask: bytes(32, 6), l2_ovlan: u16(38), l2_ovlan_mask: u16(40), l2_ivlan: u16(42), l2_ivlan_mask: u16(44),
  src_type: u8(70), src_id: u32(72), tunnel_type: u8(76), dst_id: u16(78), mirror_vnic_id: u16(80), pri_hint: u8(82),
  l2_filter_id_hint: u64(88),
});
export const CfaL2FilterAllocOutput = layout('hwrm_cfa_l2_filter_alloc_output', 24, {
  ...RESPONSE_HEADER_FIELDS, l2_filter_id: u64(8), flow_id: u32(16), valid: u8(23),
});
// hsi.h: struct hwrm_cfa_l2_filter_free_input (24B)
export const CfaL2FilterFreeInput = layout('hwrm_cfa_l2_filter_free_input', 24, {
  ...REQUEST_HEADER_FIELDS, l2_filter_id: u64(16),
});
export const CfaL2FilterFreeOutput = empty('hwrm_cfa_l2_filter_free_output');
/**
 * CFA_L2_FILTER_ALLOC_REQ_FLAGS_PATH (bit 0: 1 RX), _OUTERMOST (match the outermost L2 header),
 * and the enables for the address and its mask.
 */
export const CFA_L2_FILTER_ALLOC = {
  FLAGS_PATH_RX: 0x1, FLAGS_OUTERMOST: 0x8, ENABLES_L2_ADDR: 0x1, ENABLES_L2_ADDR_MASK: 0x2, ENABLES_DST_ID: 0x8000,
} as const;

// hsi.h: struct hwrm_cfa_l2_set_rx_mask_input (56B) / _output (16B)
export const CfaL2SetRxMaskInput = layout('hwrm_cfa_l2_set_rx_mask_input', 56, {
  ...REQUEST_HEADER_FIELDS,
  vnic_id: u32(16), mask: u32(20), mc_tbl_addr: u64(24), num_mc_entries: u32(32), vlan_tag_tbl_addr: u64(40),
  num_vlan_tags: u32(48),
});
export const CfaL2SetRxMaskOutput = empty('hwrm_cfa_l2_set_rx_mask_output');
/** CFA_L2_SET_RX_MASK_REQ_MASK bits. */
export const CFA_L2_SET_RX_MASK = {
  MCAST: 0x2, ALL_MCAST: 0x4, BCAST: 0x8, PROMISCUOUS: 0x10, OUTERMOST: 0x20, VLANONLY: 0x40, VLAN_NONVLAN: 0x80,
  ANYVLAN_NONVLAN: 0x100,
} as const;

// hsi.h: struct hwrm_ring_cmpl_ring_cfg_aggint_params_input (40B) / _output (16B)
export const RingCmplRingCfgAggintParamsInput = layout('hwrm_ring_cmpl_ring_cfg_aggint_params_input', 40, {
  ...REQUEST_HEADER_FIELDS,
  ring_id: u16(16), flags: u16(18), num_cmpl_dma_aggr: u16(20), num_cmpl_dma_aggr_during_int: u16(22),
  cmpl_aggr_dma_tmr: u16(24), cmpl_aggr_dma_tmr_during_int: u16(26), int_lat_tmr_min: u16(28), int_lat_tmr_max: u16(30),
  num_cmpl_aggr_int: u16(32), enables: u16(34),
});
export const RingCmplRingCfgAggintParamsOutput = empty('hwrm_ring_cmpl_ring_cfg_aggint_params_output');

// hsi.h: struct hwrm_ring_aggint_qcaps_input (16B) / _output (48B)
export const RingAggintQcapsInput = layout('hwrm_ring_aggint_qcaps_input', 16, { ...REQUEST_HEADER_FIELDS });
export const RingAggintQcapsOutput = layout('hwrm_ring_aggint_qcaps_output', 48, {
  ...RESPONSE_HEADER_FIELDS,
  cmpl_params: u32(8), nq_params: u32(12), num_cmpl_dma_aggr_min: u16(16), num_cmpl_dma_aggr_max: u16(18),
  num_cmpl_dma_aggr_during_int_min: u16(20), num_cmpl_dma_aggr_during_int_max: u16(22), cmpl_aggr_dma_tmr_min: u16(24),
  cmpl_aggr_dma_tmr_max: u16(26), cmpl_aggr_dma_tmr_during_int_min: u16(28), cmpl_aggr_dma_tmr_during_int_max: u16(30),
  int_lat_tmr_min_min: u16(32), int_lat_tmr_min_max: u16(34), int_lat_tmr_max_min: u16(36),
  int_lat_tmr_max_max: u16(38), num_cmpl_aggr_int_min: u16(40), num_cmpl_aggr_int_max: u16(42), timer_units: u16(44),
  valid: u8(47),
});

// hsi.h: struct hwrm_port_mac_cfg_input (56B) / _output (16B)
export const PortMacCfgInput = layout('hwrm_port_mac_cfg_input', 56, {
  ...REQUEST_HEADER_FIELDS, flags: u32(16), enables: u32(20), port_id: u16(24), ipg: u8(26), lpbk: u8(27),
});
export const PortMacCfgOutput = layout('hwrm_port_mac_cfg_output', 16, {
  ...RESPONSE_HEADER_FIELDS, mru: u16(8), mtu: u16(10), ipg: u8(12), lpbk: u8(13), valid: u8(15),
});

// hsi.h: struct hwrm_port_phy_cfg_input (64B) / _output (16B)
export const PortPhyCfgInput = layout('hwrm_port_phy_cfg_input', 64, {
  ...REQUEST_HEADER_FIELDS, flags: u32(16), enables: u32(20), port_id: u16(24), force_link_speed: u16(26),
  auto_mode: u8(28),
});
export const PortPhyCfgOutput = empty('hwrm_port_phy_cfg_output');

// hsi.h: struct hwrm_port_qstats_input (40B) / _output (16B): the firmware writes tx_port_stats
// (408 bytes) and rx_port_stats (528 bytes) at the two host addresses.
export const PortQstatsInput = layout('hwrm_port_qstats_input', 40, {
  ...REQUEST_HEADER_FIELDS, port_id: u16(16), flags: u8(18), tx_stat_host_addr: u64(24), rx_stat_host_addr: u64(32),
});
export const PortQstatsOutput = layout('hwrm_port_qstats_output', 16, {
  ...RESPONSE_HEADER_FIELDS, tx_stat_size: u16(8), rx_stat_size: u16(10), flags: u8(12), valid: u8(15),
});
// hsi.h: struct hwrm_port_qstats_ext_input (40B) / _output (16B): tx_port_stats_ext (256 B),
// rx_port_stats_ext (488 B), each cut to the size the driver gave.
export const PortQstatsExtInput = layout('hwrm_port_qstats_ext_input', 40, {
  ...REQUEST_HEADER_FIELDS, port_id: u16(16), tx_stat_size: u16(18), rx_stat_size: u16(20), flags: u8(22),
  tx_stat_host_addr: u64(24), rx_stat_host_addr: u64(32),
});
export const PortQstatsExtOutput = layout('hwrm_port_qstats_ext_output', 16, {
  ...RESPONSE_HEADER_FIELDS, tx_stat_size: u16(8), rx_stat_size: u16(10), total_active_cos_queues: u16(12),
  flags: u8(14), valid: u8(15),
});
export const PORT_STATS_BYTES = { tx: 408, rx: 528, txExt: 256, rxExt: 488 } as const;
