/**
 * The device's queue limits as Linux bnxt_re reads them from QUERY_FUNC (qplib_sp.c
 * bnxt_qplib_get_dev_attr), and whether this driver's fixed rings fit them. bnxt_re refuses a
 * CQ or QP beyond these limits before it asks the firmware (ib_verbs.c bnxt_re_create_cq: "max
 * exceeded"; bnxt_re_test_qp_limits), so does this driver, at Qp.make: a device whose limits are
 * below the rings gets a Result error, never a ring the firmware was not told it can hold.
 *
 *   max_cq_wqes  QUERY_FUNC max_cqe, capped at the chip's ChipProfile.maxCqWqes where it has
 *                one (0xFFFFF, BNXT_QPLIB_MAX_CQ_WQES, before P7: firmware-hwrm/chips.ts says why)
 *   max_qp_wqes  QUERY_FUNC max_qp_wr less BNXT_QPLIB_RESERVED_QP_WRS + 1 (128 WQEs "reserved
 *                for the HW", and one more)
 *   max_qp_sges  variable WQE mode: max_sge_var_wqe capped at BNXT_VAR_MAX_SGE 13; static: 6
 *                (qplib_sp.h BNXT_STATIC_MAX_SGE; the kernel does not read max_sge there)
 */
import type { CreqQueryFuncRespSb } from '../../firmware-hwrm/roce/index.ts';
import type { Values } from '../../firmware-hwrm/layout.ts';
import type { ChipProfile } from './chip.ts';

/** QUERY_FUNC's answer (creq_query_func_resp_sb), the device's capabilities. */
export type FuncCaps = Values<(typeof CreqQueryFuncRespSb)['fields']>;
/** qplib_sp.h BNXT_QPLIB_RESERVED_QP_WRS, and the one more bnxt_qplib_get_dev_attr takes off. */
const RESERVED_QP_WRS = 128 + 1;
/** qplib_sp.h BNXT_VAR_MAX_SGE and BNXT_STATIC_MAX_SGE. */
const VAR_MAX_SGE = 13;
const STATIC_MAX_SGE = 6;

export interface DeviceLimits {
  /** CQEs a consumer may ask one CQ to hold (bnxt_re's max_cq_wqes). */
  readonly cqWqes: number;
  /** WQEs a consumer may post to one SQ or RQ (max_qp_wqes). */
  readonly qpWqes: number;
  /** SGEs one WQE may carry in the chip's WQE mode (max_qp_sges). */
  readonly qpSges: number;
}

/** The limits of a device on `chip` whose QUERY_FUNC answered `caps`. */
export function deviceLimits(chip: ChipProfile, caps: FuncCaps): DeviceLimits {
  const cqWqes = chip.maxCqWqes === undefined ? caps.max_cqe : Math.min(caps.max_cqe, chip.maxCqWqes);
  const qpSges = chip.wqeMode === 'variable' ? Math.min(caps.max_sge_var_wqe, VAR_MAX_SGE) : STATIC_MAX_SGE;
  return { cqWqes, qpWqes: Math.max(0, caps.max_qp_wr - RESERVED_QP_WRS), qpSges };
}

/** What one queue pair of this driver asks of the device. */
export interface QpNeeds {
  /** Completions one CQ must hold: every entry of the ring it serves. */
  readonly cqEntries: number;
  /** Entries posted at once to the SQ and to the RQ. */
  readonly ringEntries: number;
  /** SGEs at CREATE_QP: sq_sge and rq_sge. */
  readonly sqSges: number;
  readonly rqSges: number;
}

/** Why a queue pair with `needs` does not fit `limits`, or undefined if it does. */
export function qpBeyondLimits(limits: DeviceLimits, needs: QpNeeds): string | undefined {
  const short: string[] = [];
  if (needs.cqEntries > limits.cqWqes) short.push(`CQs of ${needs.cqEntries} entries (it takes ${limits.cqWqes})`);
  if (needs.ringEntries > limits.qpWqes)
    short.push(`rings of ${needs.ringEntries} entries (it takes ${limits.qpWqes})`);
  const sges = Math.max(needs.sqSges, needs.rqSges);
  if (sges > limits.qpSges) short.push(`${sges} SGEs per WQE (it takes ${limits.qpSges})`);
  if (short.length === 0) return undefined;
  return `the device's limits are below this driver's fixed queues: ${short.join(', ')}`;
}
