/**
 * HWRM_FUNC_CFG (0x17): configures the function; with the firmware's "new resource manager"
 * (FUNC_RESOURCE_QCAPS answered) it reserves rings, contexts and MSI-X vectors, which the
 * driver reads back from FUNC_QCFG's alloc_* fields (Linux bnxt.c
 * __bnxt_hwrm_reserve_pf_rings, bnxt_hwrm_get_rings). 160 bytes: longer than the 128-byte
 * window, so it travels in short-command mode.
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_func_cfg_input (size:1280b/160B)
export const FuncCfgInput = layout('hwrm_func_cfg_input', 160, {
  ...REQUEST_HEADER_FIELDS,
  fid: u16(16),
  num_msix: u16(18),
  flags: u32(20),
  /** FUNC_CFG_REQ_ENABLES bits: which of the fields below are meant. */
  enables: u32(24),
  admin_mtu: u16(28),
  mru: u16(30),
  num_rsscos_ctxs: u16(32),
  num_cmpl_rings: u16(34),
  num_tx_rings: u16(36),
  num_rx_rings: u16(38),
  num_l2_ctxs: u16(40),
  num_vnics: u16(42),
  num_stat_ctxs: u16(44),
  num_hw_ring_grps: u16(46),
  dflt_mac_addr: bytes(48, 6),
  dflt_vlan: u16(54),
  dflt_ip_addr: bytes(56, 16),
  min_bw: u32(72),
  max_bw: u32(76),
  /** The completion ring (NQ on P5) that receives the function's async events. */
  async_event_cr: u16(80),
  vlan_antispoof_mode: u8(82),
  allowed_vlan_pris: u8(83),
  evb_mode: u8(84),
  /** Bits 1:0 cache line size (FUNC_CFG_REQ_OPTIONS_CACHE_LINESIZE), 7:4 link admin state. */
  options: u8(85),
  num_mcast_filters: u16(86),
  schq_id: u16(88),
  mpc_chnls: u16(90),
  partition_min_bw: u32(92),
  partition_max_bw: u32(96),
  tpid: u16(100),
  host_mtu: u16(102),
  flags2: u32(104),
  enables2: u32(108),
  port_kdnet_mode: u8(112),
  db_page_size: u8(113),
  physical_slot_number: u16(114),
});

export const FUNC_CFG_REQ_ENABLES = {
  ADMIN_MTU: 0x1, MRU: 0x2, NUM_RSSCOS_CTXS: 0x4, NUM_CMPL_RINGS: 0x8, NUM_TX_RINGS: 0x10, NUM_RX_RINGS: 0x20,
  NUM_L2_CTXS: 0x40, NUM_VNICS: 0x80, NUM_STAT_CTXS: 0x100, DFLT_MAC_ADDR: 0x200, ASYNC_EVENT_CR: 0x4000,
  NUM_HW_RING_GRPS: 0x80000, CACHE_LINESIZE: 0x100000, NUM_MSIX: 0x200000, HOST_MTU: 0x20000000,
} as const;

// hsi.h: struct hwrm_func_cfg_output (size:128b/16B)
export const FuncCfgOutput = layout('hwrm_func_cfg_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  valid: u8(15),
});
