/**
 * HWRM response `error_code` values (hsi.h `struct ret_codes`).
 * A driver keeps the raw number in its results; these names are for messages.
 */

export const HWRM_ERR_CODE = {
  SUCCESS: 0x0,
  /** Generic failure. */
  FAIL: 0x1,
  INVALID_PARAMS: 0x2,
  /** The caller may not touch that resource. */
  RESOURCE_ACCESS_DENIED: 0x3,
  /** The firmware could not allocate. */
  RESOURCE_ALLOC_ERROR: 0x4,
  INVALID_FLAGS: 0x5,
  INVALID_ENABLES: 0x6,
  UNSUPPORTED_TLV: 0x7,
  /** No firmware buffer; retry. */
  NO_BUFFER: 0x8,
  UNSUPPORTED_OPTION_ERR: 0x9,
  /** Hot reset in progress; retry later. */
  HOT_RESET_PROGRESS: 0xa,
  HOT_RESET_FAIL: 0xb,
  NO_FLOW_COUNTER_DURING_ALLOC: 0xc,
  KEY_HASH_COLLISION: 0xd,
  KEY_ALREADY_EXISTS: 0xe,
  /** Internal firmware error. */
  HWRM_ERROR: 0xf,
  /** Cannot service now; retry. */
  BUSY: 0x10,
  /** Secure-lock violation. */
  RESOURCE_LOCKED: 0x11,
  /** A VF request could not be forwarded to its PF. */
  PF_UNAVAILABLE: 0x12,
  ENTITY_NOT_PRESENT: 0x13,
  /** Kernel header only. */
  SECURE_SOC_ERROR: 0x14,
  /** Not an error: the response is TLV-encoded. */
  TLV_ENCAPSULATED_RESPONSE: 0x8000,
  UNKNOWN_ERR: 0xfffe,
  /** Unknown or unsupported req_type. */
  CMD_NOT_SUPPORTED: 0xffff,
} as const;

export type HwrmErrorCodeName = keyof typeof HWRM_ERR_CODE;

const NAME_BY_CODE = new Map<number, string>(Object.entries(HWRM_ERR_CODE).map(([name, code]) => [code, name]));

/**
 * The header's name of an error code ("INVALID_PARAMS"), or the code in hex ("0x0042") for
 * one the header does not name. Never throws, whatever it is given.
 */
export function hwrmErrorName(code: number): string {
  const name = NAME_BY_CODE.get(code);
  if (name !== undefined) return name;
  return Number.isInteger(code) && code >= 0 ? `0x${code.toString(16).padStart(4, '0')}` : String(code);
}

/** Codes the HSI describes as transient ("retry"): a driver may resend the same request. */
export function isHwrmRetryable(code: number): boolean {
  return code === HWRM_ERR_CODE.NO_BUFFER || code === HWRM_ERR_CODE.HOT_RESET_PROGRESS || code === HWRM_ERR_CODE.BUSY;
}
