/**
 * Two informational commands Linux's bnxt_en sends at probe and logs as errors when refused:
 * HWRM_FW_SET_TIME (0xc8, `bnxt_hwrm_fw_set_time`) and HWRM_NVM_GET_DEV_INFO (0xfff6,
 * `bnxt_hwrm_nvm_get_dev_info`, the NVM configuration version ethtool shows).
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_fw_set_time_input (size:256b/32B) / _output (16B)
export const FwSetTimeInput = layout('hwrm_fw_set_time_input', 32, {
  ...REQUEST_HEADER_FIELDS,
  year: u16(16), month: u8(18), day: u8(19), hour: u8(20), minute: u8(21), second: u8(22), millisecond: u16(24),
  zone: u16(26),
});
export const FwSetTimeOutput = layout('hwrm_fw_set_time_output', 16, { ...RESPONSE_HEADER_FIELDS, valid: u8(15) });

// hsi.h: struct hwrm_nvm_get_dev_info_input (size:192b/24B) / _output (size:768b/96B)
export const NvmGetDevInfoInput =
  layout('hwrm_nvm_get_dev_info_input', 24, { ...REQUEST_HEADER_FIELDS, flags: u8(16) });
export const NvmGetDevInfoOutput = layout('hwrm_nvm_get_dev_info_output', 96, {
  ...RESPONSE_HEADER_FIELDS,
  manufacturer_id: u16(8), device_id: u16(10), sector_size: u32(12), nvram_size: u32(16), reserved_size: u32(20),
  available_size: u32(24), nvm_cfg_ver_maj: u8(28), nvm_cfg_ver_min: u8(29), nvm_cfg_ver_upd: u8(30), flags: u8(31),
  pkg_name: bytes(32, 16), hwrm_fw_major: u16(48), hwrm_fw_minor: u16(50), hwrm_fw_build: u16(52),
  hwrm_fw_patch: u16(54), mgmt_fw_major: u16(56), mgmt_fw_minor: u16(58), mgmt_fw_build: u16(60),
  mgmt_fw_patch: u16(62), roce_fw_major: u16(64), roce_fw_minor: u16(66), roce_fw_build: u16(68),
  roce_fw_patch: u16(70), netctrl_fw_major: u16(72), netctrl_fw_minor: u16(74), netctrl_fw_build: u16(76),
  netctrl_fw_patch: u16(78), valid: u8(95),
});
