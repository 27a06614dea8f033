/**
 * HWRM_PORT_PHY_QCFG (0x27): link state and speed of the function's port
 * (hsi.h hwrm_port_phy_qcfg_output; bnxt.c bnxt_update_link). Both drivers send port_id 0.
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_port_phy_qcfg_input
export const PortPhyQcfgInput = layout('hwrm_port_phy_qcfg_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  port_id: u16(16),
});

// hsi.h: struct hwrm_port_phy_qcfg_output
export const PortPhyQcfgOutput = layout('hwrm_port_phy_qcfg_output', 104, {
  ...RESPONSE_HEADER_FIELDS,
  /** PORT_PHY_QCFG_RESP_LINK. */
  link: u8(8),
  /** Bits 3:0 signal mode (PORT_PHY_QCFG_RESP_SIGNAL_MODE), bits 7:4 active FEC (PORT_PHY_QCFG_RESP_ACTIVE_FEC). */
  active_fec_signal_mode: u8(9),
  /** PORT_PHY_QCFG_RESP_LINK_SPEED, in units of 100 Mb/s (0xffff = 10 Mb/s). */
  link_speed: u16(10),
  duplex_cfg: u8(12),
  /** PORT_PHY_QCFG_RESP_PAUSE bits. */
  pause: u8(13),
  support_speeds: u16(14),
  force_link_speed: u16(16),
  /** PORT_PHY_QCFG_RESP_AUTO_MODE. */
  auto_mode: u8(18),
  auto_pause: u8(19),
  auto_link_speed: u16(20),
  auto_link_speed_mask: u16(22),
  wirespeed: u8(24),
  lpbk: u8(25),
  force_pause: u8(26),
  module_status: u8(27),
  preemphasis: u32(28),
  phy_maj: u8(32),
  phy_min: u8(33),
  phy_bld: u8(34),
  phy_type: u8(35),
  /** PORT_PHY_QCFG_RESP_MEDIA_TYPE. */
  media_type: u8(36),
  xcvr_pkg_type: u8(37),
  eee_config_phy_addr: u8(38),
  parallel_detect: u8(39),
  link_partner_adv_speeds: u16(40),
  link_partner_adv_auto_mode: u8(42),
  link_partner_adv_pause: u8(43),
  adv_eee_link_speed_mask: u16(44),
  link_partner_adv_eee_link_speed_mask: u16(46),
  xcvr_identifier_type_tx_lpi_timer: u32(48),
  fec_cfg: u16(52),
  /** Used instead of duplex_cfg by the kernel when the spec code is >= 0x10800. */
  duplex_state: u8(54),
  option_flags: u8(55),
  /** ASCII, NUL-padded. */
  phy_vendor_name: bytes(56, 16),
  phy_vendor_partnumber: bytes(72, 16),
  support_pam4_speeds: u16(88),
  force_pam4_link_speed: u16(90),
  auto_pam4_link_speed_mask: u16(92),
  link_partner_pam4_adv_speeds: u8(94),
  link_down_reason: u8(95),
  support_speeds2: u16(96),
  force_link_speeds2: u16(98),
  auto_link_speeds2: u16(100),
  active_lanes: u8(102),
  valid: u8(103),
});

export const PORT_PHY_QCFG_RESP_LINK = { NO_LINK: 0x0, SIGNAL: 0x1, LINK: 0x2 } as const;

/** link_speed codes; the value is the speed in units of 100 Mb/s except 10MB. */
export const PORT_PHY_QCFG_RESP_LINK_SPEED = {
  '100MB': 0x1,
  '1GB': 0xa,
  '2GB': 0x14,
  '2_5GB': 0x19,
  '10GB': 0x64,
  '20GB': 0xc8,
  '25GB': 0xfa,
  '40GB': 0x190,
  '50GB': 0x1f4,
  '100GB': 0x3e8,
  '200GB': 0x7d0,
  '400GB': 0xfa0,
  '800GB': 0x1f40,
  '10MB': 0xffff,
} as const;

/** Unit of link_speed in Mb/s. */
export const PORT_PHY_QCFG_LINK_SPEED_UNIT_MBPS = 100;

/** link_speed as Mb/s (0 stays 0: no speed reported). */
export function linkSpeedMbps(linkSpeed: number): number {
  if (linkSpeed === PORT_PHY_QCFG_RESP_LINK_SPEED['10MB']) return 10;
  return linkSpeed * PORT_PHY_QCFG_LINK_SPEED_UNIT_MBPS;
}

export const PORT_PHY_QCFG_RESP_DUPLEX = { HALF: 0x0, FULL: 0x1 } as const;
export const PORT_PHY_QCFG_RESP_PAUSE = { TX: 0x1, RX: 0x2 } as const;

export const PORT_PHY_QCFG_RESP_AUTO_MODE = {
  NONE: 0x0,
  ALL_SPEEDS: 0x1,
  ONE_SPEED: 0x2,
  ONE_OR_BELOW: 0x3,
  SPEED_MASK: 0x4,
} as const;

export const PORT_PHY_QCFG_RESP_MEDIA_TYPE = { UNKNOWN: 0x0, TP: 0x1, DAC: 0x2, FIBRE: 0x3, BACKPLANE: 0x4 } as const;

/** Signal mode: bits 3:0 of active_fec_signal_mode. */
export const PORT_PHY_QCFG_RESP_SIGNAL_MODE_MASK = 0x0f;
export const PORT_PHY_QCFG_RESP_SIGNAL_MODE = { NRZ: 0x0, PAM4: 0x1, PAM4_112: 0x2 } as const;

/** Active FEC: bits 7:4 of active_fec_signal_mode; the codes below are before the shift. */
export const PORT_PHY_QCFG_RESP_ACTIVE_FEC_SHIFT = 4;
export const PORT_PHY_QCFG_RESP_ACTIVE_FEC = {
  FEC_NONE_ACTIVE: 0x0,
  FEC_CLAUSE74_ACTIVE: 0x1,
  FEC_CLAUSE91_ACTIVE: 0x2,
  FEC_RS544_1XN_ACTIVE: 0x3,
  FEC_RS544_IEEE_ACTIVE: 0x4,
  FEC_RS272_1XN_ACTIVE: 0x5,
  FEC_RS272_IEEE_ACTIVE: 0x6,
} as const;
