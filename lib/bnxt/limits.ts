/**
 * Every bound the driver waits with, in one place (TigerBeetle's rule: every wait has a
 * bound). Values follow the Linux bnxt_en / bnxt_re drivers unless a note says why not.
 */
export const LIMITS = {
  /** HWRM default command timeout until VER_GET reports def_req_timeout (DFLT_HWRM_CMD_TIMEOUT). */
  hwrmDefaultTimeoutMs: 500,
  /** Cap on every HWRM command when VER_GET's max_req_timeout is 0 (HWRM_CMD_MAX_TIMEOUT). */
  hwrmMaxTimeoutMs: 40_000,
  /** FUNC_RESET waits 4 x the command timeout (HWRM_RESET_TIMEOUT). */
  hwrmResetTimeoutFactor: 4,
  /** Extra wait for the valid byte once resp_len appeared (HWRM_VALID_BIT_DELAY_USEC). */
  hwrmValidBitDelayUs: 50_000,
  /** One RoCE command's bound when max_req_timeout is 0 (RCFW_FW_STALL_MAX_TIMEOUT is 40 s; we
   *  bound each command by the same). */
  roceCommandTimeoutMs: 40_000,
  /** Spins before a waiting loop starts sleeping between looks. */
  spinsBeforeSleep: 200,
  /** Sleep between looks once spinning stopped, in µs. */
  pollSleepUs: 20,
  /** Qp.wait's sleep between looks after its spin, in µs (a device may cut it short). */
  waitSleepUs: 200,
} as const;

/** Timeouts may be shortened for tests of a firmware that stops answering. */
export interface Timeouts {
  hwrmMs: number;
  roceMs: number;
}
