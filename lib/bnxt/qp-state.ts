/**
 * The QP state machine as the driver drives it (RC: RESET -> INIT -> RTR -> RTS, ERR), an
 * explicit table checked on every change, with the modify masks each step sends
 * (ib_verbs.c bnxt_re_modify_qp, the RDMA core's ib_modify_qp_is_ok table; RcTransitionMask).
 */
import { QpState, RcTransitionMask, ModifyQpMask } from '../../firmware-hwrm/roce/commands-qp.ts';

export type DriverQpState = 'RESET' | 'INIT' | 'RTR' | 'RTS' | 'ERR';

export const STATE_CODE: Record<DriverQpState, number> = {
  RESET: QpState.RESET, INIT: QpState.INIT, RTR: QpState.RTR, RTS: QpState.RTS, ERR: QpState.ERR,
};

const LEGAL: Record<DriverQpState, readonly DriverQpState[]> = {
  RESET: ['INIT', 'RESET', 'ERR'],
  INIT: ['INIT', 'RTR', 'RESET', 'ERR'],
  RTR: ['RTS', 'RESET', 'ERR'],
  RTS: ['RTS', 'RESET', 'ERR'],
  ERR: ['RESET', 'ERR'],
};

export function legalTransition(from: DriverQpState, to: DriverQpState): boolean {
  return LEGAL[from].includes(to);
}

/** The modify mask of each step this driver takes. RTR also sets the access flags (remote read). */
export function transitionMask(to: DriverQpState): number {
  switch (to) {
    case 'INIT': return RcTransitionMask.RESET_TO_INIT;
    case 'RTR': return (RcTransitionMask.INIT_TO_RTR | ModifyQpMask.ACCESS) >>> 0;
    case 'RTS': return RcTransitionMask.RTR_TO_RTS;
    default: return ModifyQpMask.STATE;
  }
}
