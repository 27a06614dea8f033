/**
 * The SQ's MSN table (hardware requester retransmission; Thor2 and firmware reporting
 * HW_REQUESTER_RETX_ENABLED): 8-byte roce_hsi.h sq_msn_search entries after the SQ's WQEs,
 * as many as the power of two Linux sizes it to (qplib_fp.c bnxt_qplib_create_qp:
 * roundup_pow_of_two of the SQ size, msn_tbl_sz), entry msn % size for the msn-th WQE posted.
 */

/** Bytes per sq_msn_search entry. */
export const MSN_ENTRY_BYTES = 8;

/**
 * Entries of the MSN table of an SQ of `sqSize` WQEs (static mode) or `sqSize` 16-byte slots
 * (variable mode: half the power of two, qplib_fp.c bnxt_qplib_create_qp).
 */
export function msnTableEntries(sqSize: number, variable = false): number {
  let n = 1;
  while (n < sqSize) n *= 2;
  return variable && n > 1 ? n / 2 : n;
}
