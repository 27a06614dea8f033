/**
 * Port capability queries Linux's bnxt_en sends at probe: HWRM_PORT_PHY_QCAPS (0x2a,
 * `bnxt_hwrm_phy_qcaps`: a failure fails the probe) and HWRM_PORT_LED_QCAPS (0x2f,
 * `bnxt_hwrm_port_led_qcaps`).
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_port_phy_qcaps_input (size:192b/24B)
export const PortPhyQcapsInput = layout('hwrm_port_phy_qcaps_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  port_id: u16(16),
});

/** PORT_PHY_QCAPS_RESP_SUPPORTED_SPEEDS_*_MODE bits (NRZ speeds). */
export const PHY_QCAPS_SPEEDS = { '10GB': 0x40, '25GB': 0x100, '40GB': 0x200, '50GB': 0x400, '100GB': 0x800 } as const;
/** PORT_PHY_QCAPS_RESP_SUPPORTED_PAM4_SPEEDS_*_MODE bits. */
export const PHY_QCAPS_PAM4_SPEEDS = { '50G': 0x1, '100G': 0x2, '200G': 0x4 } as const;

// hsi.h: struct hwrm_port_phy_qcaps_output (size:320b/40B)
export const PortPhyQcapsOutput = layout('hwrm_port_phy_qcaps_output', 40, {
  ...RESPONSE_HEADER_FIELDS,
  /** PORT_PHY_QCAPS_RESP_FLAGS bits (EEE, loopbacks, shared PHY config, ...). */
  flags: u8(8),
  /** PORT_PHY_QCAPS_RESP_PORT_CNT (1 = one port). */
  port_cnt: u8(9),
  supported_speeds_force_mode: u16(10),
  supported_speeds_auto_mode: u16(12),
  supported_speeds_eee_mode: u16(14),
  /** Bits 23:0 tx_lpi_timer_low; bits 31:24 rsvd2. */
  tx_lpi_timer_low: u32(16),
  /** Bits 23:0 tx_lpi_timer_high; bits 31:24 valid. */
  valid_tx_lpi_timer_high: u32(20),
  supported_pam4_speeds_auto_mode: u16(24),
  supported_pam4_speeds_force_mode: u16(26),
  /** PORT_PHY_QCAPS_RESP_FLAGS2 bits (SPEEDS2_SUPPORTED moves speeds to the *2 fields). */
  flags2: u16(28),
  internal_port_cnt: u8(30),
  supported_speeds2_force_mode: u16(32),
  supported_speeds2_auto_mode: u16(34),
  valid: u8(39),
});

// hsi.h: struct hwrm_port_led_qcaps_input (size:192b/24B)
export const PortLedQcapsInput = layout('hwrm_port_led_qcaps_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  port_id: u16(16),
});

// hsi.h: struct hwrm_port_led_qcaps_output (size:384b/48B)
export const PortLedQcapsOutput = layout('hwrm_port_led_qcaps_output', 48, {
  ...RESPONSE_HEADER_FIELDS,
  /** LEDs the driver may control (ethtool -p); 0: none. */
  num_leds: u8(8),
  /** led0..led3: id, type, group_id, unused, u16 state_caps, u16 color_caps (8 bytes each). */
  leds: bytes(12, 32),
  valid: u8(47),
});
