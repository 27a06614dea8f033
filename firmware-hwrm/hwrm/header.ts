/**
 * The frame every HWRM message shares: the 16-byte request header, the 8-byte response
 * header, the error response, and the short-command descriptor written to the BAR0 window
 * when the full request lives in host memory (hsi.h struct input, struct output, struct hwrm_short_input; bnxt_hwrm.c
 * __hwrm_send).
 *
 *   request  +0 req_type +2 cmpl_ring +4 seq_id +6 target_id +8 resp_addr (u64) +16 body...
 *   response +0 error_code +2 req_type +4 seq_id +6 resp_len +8 body... valid at resp_len-1
 */
import { layout, u8, u16, u32, u64 } from '../layout.ts';
import type { Values } from '../layout.ts';

/** The first 16 bytes of every request; spread into each request layout. */
export const REQUEST_HEADER_FIELDS = {
  req_type: u16(0),
  cmpl_ring: u16(2),
  seq_id: u16(4),
  target_id: u16(6),
  resp_addr: u64(8),
};

/** The first 8 bytes of every response; spread into each response layout. */
export const RESPONSE_HEADER_FIELDS = {
  error_code: u16(0),
  req_type: u16(2),
  seq_id: u16(4),
  resp_len: u16(6),
};

// hsi.h: struct input (same bytes as struct hwrm_cmd_hdr)
export const HwrmInput = layout('input', 16, REQUEST_HEADER_FIELDS);
// hsi.h: struct output (same bytes as struct hwrm_resp_hdr)
export const HwrmOutput = layout('output', 8, RESPONSE_HEADER_FIELDS);

export type RequestHeader = Values<typeof REQUEST_HEADER_FIELDS>;
export type ResponseHeader = Values<typeof RESPONSE_HEADER_FIELDS>;

// hsi.h: struct hwrm_err_output (an error response of 16 bytes or more)
export const HwrmErrOutput = layout('hwrm_err_output', 16, {
  ...RESPONSE_HEADER_FIELDS,
  opaque_0: u32(8),
  opaque_1: u16(12),
  /** Command-specific error sub-code. */
  cmd_err: u8(14),
  valid: u8(15),
});

// hsi.h: struct hwrm_short_input (the 16 bytes written to BAR0 in short-command mode)
export const HwrmShortInput = layout('hwrm_short_input', 16, {
  req_type: u16(0),
  signature: u16(2),
  target_id: u16(4),
  /** Length in bytes of the full request in host memory. */
  size: u16(6),
  /** IOVA of the full request; must be 16-byte aligned. */
  req_addr: u64(8),
});

/** HWRM_NA_SIGNATURE: the header's "not applicable" value, (__le32)(-1). */
export const HWRM_NA_SIGNATURE = 0xffff_ffff;
/** cmpl_ring value asking for no completion-ring entry: the driver polls the DMA'd response. */
export const HWRM_NO_CMPL_RING = 0xffff;
/** target_id values (2.2). 0x0..0xfff7 name a function (a PF acting on a child VF). */
export const HWRM_TARGET_ID = {
  /** The HWRM firmware itself; what a driver always uses. */
  HWRM: 0xffff,
  BONO: 0xfff8,
  KONG: 0xfff9,
  APE: 0xfffa,
  TOOLS: 0xfffd,
} as const;
/** fid value meaning "the calling function" in FUNC_QCAPS / FUNC_QCFG / FUNC_CFG. */
export const HWRM_FID_SELF = 0xffff;

/** The value the firmware writes into a response's last byte once the rest is in place. */
export const HWRM_RESP_VALID_KEY = 1;
/** Request window length before VER_GET has reported max_req_win_len. */
export const HWRM_MAX_REQ_LEN = 128;
/** Largest response of the current HSI (the drivers use a whole 4 KB page anyway). */
export const HWRM_MAX_RESP_LEN = 704;
/** Window length used for zero padding in short-command mode (BNXT_HWRM_SHORT_REQ_LEN). */
export const HWRM_SHORT_REQ_LEN = 16;
/** hwrm_short_input.signature. */
export const SHORT_REQ_SIGNATURE_SHORT_CMD = 0x4321;
/** hwrm_short_input.target_id: the real target_id is inside the full request. */
export const SHORT_REQ_TARGET_ID = { DEFAULT: 0x0, TOOLS: 0xfffd } as const;

/**
 * The HWRM interface version these layouts follow (kernel include/linux/bnxt/hsi.h,
 * 1.10.3.133); sent by the driver in VER_GET's hwrm_intf_maj/min/upd.
 */
export const HWRM_VERSION_MAJOR = 1;
export const HWRM_VERSION_MINOR = 10;
export const HWRM_VERSION_UPDATE = 3;
export const HWRM_VERSION_RSVD = 133;
