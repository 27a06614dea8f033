/**
 * Driver registration: HWRM_FUNC_DRV_RGTR (0x1d), HWRM_FUNC_DRV_UNRGTR (0x1a) and
 * HWRM_FUNC_DRV_IF_CHANGE (0x0d) (hsi.h hwrm_func_drv_rgtr_input, _unrgtr_input, _if_change_input; bnxt.c
 * bnxt_hwrm_func_drv_rgtr, bnxt_hwrm_if_change).
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// ---- HWRM_FUNC_DRV_RGTR ---------------------------------------------------------------

// hsi.h: struct hwrm_func_drv_rgtr_input (112 bytes: fits the 128-byte window)
export const FuncDrvRgtrInput = layout('hwrm_func_drv_rgtr_input', 112, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_DRV_RGTR_REQ_FLAGS bits. */
  flags: u32(16),
  /** FUNC_DRV_RGTR_REQ_ENABLES bits. */
  enables: u32(20),
  /** FUNC_DRV_RGTR_REQ_OS_TYPE. */
  os_type: u16(24),
  /** Driver version, free-form. */
  ver_maj_8b: u8(26),
  ver_min_8b: u8(27),
  ver_upd_8b: u8(28),
  timestamp: u32(32),
  /**
   * The header's __le32 vf_req_fwd[8]: a 256-bit bitmap of req_types a PF wants forwarded
   * from its VFs. As bytes, bit n is byte n >> 3, bit n & 7 (the LE words make this hold).
   */
  vf_req_fwd: bytes(40, 32),
  /** The header's __le32 async_event_fwd[8]: async event ids to deliver, same bit order. */
  async_event_fwd: bytes(72, 32),
  /** 16-bit driver version (with flags 16BIT_VER_MODE). */
  ver_maj: u16(104),
  ver_min: u16(106),
  ver_upd: u16(108),
  ver_patch: u16(110),
});

// hsi.h: struct hwrm_func_drv_rgtr_output
export const FuncDrvRgtrOutput = layout('hwrm_func_drv_rgtr_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  /** FUNC_DRV_RGTR_RESP_FLAGS bits. */
  flags: u32(8),
  valid: u8(15),
});

export const FUNC_DRV_RGTR_REQ_FLAGS = {
  FWD_ALL_MODE: 0x1,
  FWD_NONE_MODE: 0x2,
  '16BIT_VER_MODE': 0x4,
  FLOW_HANDLE_64BIT_MODE: 0x8,
  HOT_RESET_SUPPORT: 0x10,
  ERROR_RECOVERY_SUPPORT: 0x20,
  MASTER_SUPPORT: 0x40,
  FAST_RESET_SUPPORT: 0x80,
  RSS_STRICT_HASH_TYPE_SUPPORT: 0x100,
  NPAR_1_2_SUPPORT: 0x200,
  ASYM_QUEUE_CFG_SUPPORT: 0x400,
  TF_INGRESS_NIC_FLOW_MODE: 0x800,
  TF_EGRESS_NIC_FLOW_MODE: 0x1000,
} as const;

export const FUNC_DRV_RGTR_REQ_ENABLES = {
  OS_TYPE: 0x1,
  VER: 0x2,
  TIMESTAMP: 0x4,
  VF_REQ_FWD: 0x8,
  ASYNC_EVENT_FWD: 0x10,
} as const;

export const FUNC_DRV_RGTR_REQ_OS_TYPE = {
  UNKNOWN: 0x0,
  OTHER: 0x1,
  MSDOS: 0xe,
  WINDOWS: 0x12,
  SOLARIS: 0x1d,
  LINUX: 0x24,
  FREEBSD: 0x2a,
  ESXI: 0x68,
  WIN864: 0x73,
  WIN2012R2: 0x74,
  UEFI: 0x8000,
} as const;

export const FUNC_DRV_RGTR_RESP_FLAGS = {
  /** The driver should send HWRM_FUNC_DRV_IF_CHANGE when its interface goes up or down. */
  IF_CHANGE_SUPPORTED: 0x1,
} as const;

// ---- HWRM_FUNC_DRV_UNRGTR -------------------------------------------------------------

// hsi.h: struct hwrm_func_drv_unrgtr_input
export const FuncDrvUnrgtrInput = layout('hwrm_func_drv_unrgtr_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_DRV_UNRGTR_REQ_FLAGS bits. */
  flags: u32(16),
});

// hsi.h: struct hwrm_func_drv_unrgtr_output
export const FuncDrvUnrgtrOutput = layout('hwrm_func_drv_unrgtr_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  valid: u8(15),
});

export const FUNC_DRV_UNRGTR_REQ_FLAGS = { PREPARE_FOR_SHUTDOWN: 0x1 } as const;

// ---- HWRM_FUNC_DRV_IF_CHANGE ----------------------------------------------------------

// hsi.h: struct hwrm_func_drv_if_change_input
export const FuncDrvIfChangeInput = layout('hwrm_func_drv_if_change_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** FUNC_DRV_IF_CHANGE_REQ_FLAGS: UP when the interface opens, 0 when it closes. */
  flags: u32(16),
});

// hsi.h: struct hwrm_func_drv_if_change_output
export const FuncDrvIfChangeOutput = layout('hwrm_func_drv_if_change_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  /** FUNC_DRV_IF_CHANGE_RESP_FLAGS bits. */
  flags: u32(8),
  valid: u8(15),
});

export const FUNC_DRV_IF_CHANGE_REQ_FLAGS = { UP: 0x1 } as const;

export const FUNC_DRV_IF_CHANGE_RESP_FLAGS = {
  RESC_CHANGE: 0x1,
  HOT_FW_RESET_DONE: 0x2,
  CAPS_CHANGE: 0x4,
} as const;
