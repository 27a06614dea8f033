/**
 * HWRM_VER_GET (0x0000): the first request, always sent in direct mode. Its response tells
 * the driver the firmware's interface version, chip, window sizes, timeouts and whether
 * short-command mode is required (hsi.h hwrm_ver_get_output dev_caps_cfg; bnxt.c bnxt_hwrm_ver_get).
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_ver_get_input
export const VerGetInput = layout('hwrm_ver_get_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** The driver's HWRM interface version (HWRM_VERSION_MAJOR/MINOR/UPDATE). */
  hwrm_intf_maj: u8(16),
  hwrm_intf_min: u8(17),
  hwrm_intf_upd: u8(18),
});

// hsi.h: struct hwrm_ver_get_output
export const VerGetOutput = layout('hwrm_ver_get_output', 176, {
  ...RESPONSE_HEADER_FIELDS,
  /** Firmware's interface version; spec code = maj << 16 | min << 8 | upd. */
  hwrm_intf_maj_8b: u8(8),
  hwrm_intf_min_8b: u8(9),
  hwrm_intf_upd_8b: u8(10),
  hwrm_intf_rsvd_8b: u8(11),
  hwrm_fw_maj_8b: u8(12),
  hwrm_fw_min_8b: u8(13),
  hwrm_fw_bld_8b: u8(14),
  hwrm_fw_rsvd_8b: u8(15),
  mgmt_fw_maj_8b: u8(16),
  mgmt_fw_min_8b: u8(17),
  mgmt_fw_bld_8b: u8(18),
  mgmt_fw_rsvd_8b: u8(19),
  netctrl_fw_maj_8b: u8(20),
  netctrl_fw_min_8b: u8(21),
  netctrl_fw_bld_8b: u8(22),
  netctrl_fw_rsvd_8b: u8(23),
  /** VER_GET_RESP_DEV_CAPS_CFG bits. */
  dev_caps_cfg: u32(24),
  roce_fw_maj_8b: u8(28),
  roce_fw_min_8b: u8(29),
  roce_fw_bld_8b: u8(30),
  roce_fw_rsvd_8b: u8(31),
  /** ASCII, NUL-padded. */
  hwrm_fw_name: bytes(32, 16),
  mgmt_fw_name: bytes(48, 16),
  netctrl_fw_name: bytes(64, 16),
  active_pkg_name: bytes(80, 16),
  roce_fw_name: bytes(96, 16),
  /** 0x1750/0x1751/0x1752 = P5 (Thor), 0x1760 = P7 (Thor2). */
  chip_num: u16(112),
  chip_rev: u8(114),
  chip_metal: u8(115),
  chip_bond_id: u8(116),
  /** VER_GET_RESP_CHIP_PLATFORM_TYPE. */
  chip_platform_type: u8(117),
  /** Length of the BAR0 request window (direct mode). */
  max_req_win_len: u16(118),
  max_resp_len: u16(120),
  /** Default command timeout in milliseconds. */
  def_req_timeout: u16(122),
  /** VER_GET_RESP_FLAGS bits. */
  flags: u8(124),
  /** The valid byte of older, 128-byte layouts; reads 1. */
  always_1: u8(127),
  hwrm_intf_major: u16(128),
  hwrm_intf_minor: u16(130),
  hwrm_intf_build: u16(132),
  hwrm_intf_patch: u16(134),
  hwrm_fw_major: u16(136),
  hwrm_fw_minor: u16(138),
  hwrm_fw_build: u16(140),
  hwrm_fw_patch: u16(142),
  mgmt_fw_major: u16(144),
  mgmt_fw_minor: u16(146),
  mgmt_fw_build: u16(148),
  mgmt_fw_patch: u16(150),
  netctrl_fw_major: u16(152),
  netctrl_fw_minor: u16(154),
  netctrl_fw_build: u16(156),
  netctrl_fw_patch: u16(158),
  roce_fw_major: u16(160),
  roce_fw_minor: u16(162),
  roce_fw_build: u16(164),
  roce_fw_patch: u16(166),
  /** Largest request accepted through short-command mode (drivers treat < 128 as 128). */
  max_ext_req_len: u16(168),
  /** Upper bound on any command, in seconds; 0 means 40 s. */
  max_req_timeout: u16(170),
  valid: u8(175),
});

/** VER_GET response dev_caps_cfg bits. Short mode is used only when both SHORT_CMD bits are set. */
export const VER_GET_RESP_DEV_CAPS_CFG = {
  SECURE_FW_UPD_SUPPORTED: 0x1,
  FW_DCBX_AGENT_SUPPORTED: 0x2,
  SHORT_CMD_SUPPORTED: 0x4,
  SHORT_CMD_REQUIRED: 0x8,
  KONG_MB_CHNL_SUPPORTED: 0x10,
  FLOW_HANDLE_64BIT_SUPPORTED: 0x20,
  L2_FILTER_TYPES_ROCE_OR_L2_SUPPORTED: 0x40,
  VIRTIO_VSWITCH_OFFLOAD_SUPPORTED: 0x80,
  TRUSTED_VF_SUPPORTED: 0x100,
  FLOW_AGING_SUPPORTED: 0x200,
  ADV_FLOW_COUNTERS_SUPPORTED: 0x400,
  CFA_EEM_SUPPORTED: 0x800,
  CFA_ADV_FLOW_MGNT_SUPPORTED: 0x1000,
  CFA_TFLIB_SUPPORTED: 0x2000,
  CFA_TRUFLOW_SUPPORTED: 0x4000,
  SECURE_BOOT_CAPABLE: 0x8000,
  SECURE_SOC_CAPABLE: 0x10000,
  DEBUG_TOKEN_SUPPORTED: 0x20000,
} as const;

/** VER_GET response flags. */
export const VER_GET_RESP_FLAGS = {
  /** Retry VER_GET: the device is not ready (up to 5 s). */
  DEV_NOT_RDY: 0x1,
  EXT_VER_AVAIL: 0x2,
  /** With DEV_NOT_RDY: data-path commands fail with BUSY until backing store is configured. */
  DEV_NOT_RDY_BACKING_STORE: 0x4,
} as const;

export const VER_GET_RESP_CHIP_PLATFORM_TYPE = { ASIC: 0x0, FPGA: 0x1, PALLADIUM: 0x2 } as const;

/** The spec code drivers gate features on: maj << 16 | min << 8 | upd (e.g. 0x10a03). */
export function hwrmSpecCode(maj: number, min: number, upd: number): number {
  return ((maj & 0xff) << 16) | ((min & 0xff) << 8) | (upd & 0xff);
}

/** Whether every request must go through short-command mode (both bits set, as both drivers test). */
export function shortCommandRequired(devCapsCfg: number): boolean {
  const both = VER_GET_RESP_DEV_CAPS_CFG.SHORT_CMD_SUPPORTED | VER_GET_RESP_DEV_CAPS_CFG.SHORT_CMD_REQUIRED;
  return (devCapsCfg & both) === both;
}
