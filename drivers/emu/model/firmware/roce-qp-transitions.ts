/**
 * The RC QP state machine MODIFY_QP walks, as a table: which transitions are legal, which
 * modify-mask bits each one must carry and which it must not (qplib_fp.c bnxt_qplib_modify_qp; roce_hsi.h
 * CMDQ_MODIFY_QP_MODIFY_MASK_*).
 *
 *   RESET -> INIT -> RTR -> RTS          INIT -> INIT, RTS -> RTS, SQE -> RTS
 *   any   -> RESET, any -> ERR
 *
 * Required bits are the attributes IBA makes mandatory, i.e. the masks the kernel sends:
 * RESET->INIT 0x0D, INIT->RTR 0x141517E1, RTR->RTS 0xAE001. RTR->RTS must not carry the
 * path attributes: the kernel strips them because firmware rejects changing them there.
 * A MODIFY_QP without the STATE bit changes attributes only: a transition from the current
 * state to itself, with no bits required.
 */
import {
  ModifyQpMask as M, QpState as S, RcTransitionMask, qpStateName,
} from '../../../../firmware-hwrm/roce/index.ts';

export interface TransitionRule {
  readonly required: number;
  readonly forbidden: number;
}

const RTR_TO_RTS_FORBIDDEN =
  M.PKEY | M.DGID | M.FLOW_LABEL | M.SGID_INDEX | M.HOP_LIMIT | M.TRAFFIC_CLASS | M.DEST_MAC | M.PATH_MTU |
  M.RQ_PSN | M.MIN_RNR_TIMER | M.MAX_DEST_RD_ATOMIC | M.DEST_QP_ID;

const STATE_ONLY: TransitionRule = { required: M.STATE, forbidden: 0 };
const STATES = 7;

/** RC_RULES[from][to]: undefined = illegal. */
const RC_RULES: (TransitionRule | undefined)[][] = Array.from(
  { length: STATES }, () => new Array<TransitionRule | undefined>(STATES).fill(undefined),
);
function legal(from: number, to: number, rule: TransitionRule): void {
  RC_RULES[from]![to] = rule;
}
legal(S.RESET, S.INIT, { required: RcTransitionMask.RESET_TO_INIT, forbidden: 0 });
legal(S.INIT, S.INIT, STATE_ONLY);
legal(S.INIT, S.RTR, { required: RcTransitionMask.INIT_TO_RTR, forbidden: 0 });
legal(S.RTR, S.RTS, { required: RcTransitionMask.RTR_TO_RTS, forbidden: RTR_TO_RTS_FORBIDDEN });
legal(S.RTS, S.RTS, STATE_ONLY);
legal(S.SQE, S.RTS, STATE_ONLY);
for (let from = 0; from < STATES; from++) {
  legal(from, S.RESET, STATE_ONLY);
  legal(from, S.ERR, STATE_ONLY);
}

/**
 * The GSI QP (QP1, a UD QP) walks the UD table of IBA 11.2.4 as Linux's ib_modify_qp_is_ok
 * (core/verbs.c qp_state_table, IB_QPT_GSI) has it: RESET->INIT needs the P_Key index and the
 * Q_Key, RTR->RTS the SQ PSN; INIT->RTR needs nothing. bnxt_re adds PATH_MTU at RTR
 * (ib_verbs.c bnxt_re_modify_qp) and bnxt_qplib_modify_qp SGID_INDEX (qplib_fp.c
 * __modify_flags_from_init_state: "Bono FW 20.6.5 requires SGID_INDEX"), so both are taken;
 * attributes only a connected QP has (its peer, its retries, read depths, access) never are.
 */
const CONNECTED_ONLY =
  M.ACCESS | M.DGID | M.FLOW_LABEL | M.HOP_LIMIT | M.TRAFFIC_CLASS | M.DEST_MAC | M.TIMEOUT | M.RETRY_CNT |
  M.RNR_RETRY | M.RQ_PSN | M.MIN_RNR_TIMER | M.MAX_RD_ATOMIC | M.MAX_DEST_RD_ATOMIC | M.DEST_QP_ID;
const GSI_RULES: (TransitionRule | undefined)[][] = Array.from(
  { length: STATES }, () => new Array<TransitionRule | undefined>(STATES).fill(undefined),
);
function legalGsi(from: number, to: number, required: number, forbidden = 0): void {
  GSI_RULES[from]![to] = { required: M.STATE | required, forbidden: CONNECTED_ONLY | forbidden };
}
legalGsi(S.RESET, S.INIT, M.PKEY | M.QKEY);
legalGsi(S.INIT, S.INIT, 0);
legalGsi(S.INIT, S.RTR, 0);
legalGsi(S.RTR, S.RTS, M.SQ_PSN, M.PKEY | M.SGID_INDEX | M.PATH_MTU);
legalGsi(S.RTS, S.RTS, 0);
legalGsi(S.SQE, S.RTS, 0);
for (let from = 0; from < STATES; from++) {
  legalGsi(from, S.RESET, 0);
  legalGsi(from, S.ERR, 0);
}

/** The rule for from -> to, or undefined if the transition is illegal. */
export function rcTransition(from: number, to: number): TransitionRule | undefined {
  return RC_RULES[from]?.[to];
}

/** The rule for from -> to of the GSI QP, or undefined if the transition is illegal. */
export function gsiTransition(from: number, to: number): TransitionRule | undefined {
  return GSI_RULES[from]?.[to];
}

/** Where a MODIFY_QP with `mask` and `newState` takes an RC QP in `from`, or why it may not. */
export function checkRcModify(from: number, mask: number, newState: number): { to: number } | { why: string } {
  return checkModify(rcTransition, from, mask, newState);
}

/** The same for the GSI QP (QP1). */
export function checkGsiModify(from: number, mask: number, newState: number): { to: number } | { why: string } {
  return checkModify(gsiTransition, from, mask, newState);
}

function checkModify(
  table: (from: number, to: number) => TransitionRule | undefined, from: number, mask: number, newState: number,
): { to: number } | { why: string } {
  const changesState = (mask & M.STATE) !== 0;
  const to = changesState ? newState : from;
  const rule = table(from, to);
  if (!rule) return { why: `${qpStateName(from)} -> ${qpStateName(to)} is not a legal transition` };
  const required = changesState ? rule.required : 0;
  const missing = (required & ~mask) >>> 0;
  if (missing !== 0)
    return { why: `${qpStateName(from)} -> ${qpStateName(to)} lacks modify_mask bits 0x${missing.toString(16)}` };
  const extra = (rule.forbidden & mask) >>> 0;
  if (extra !== 0)
    return { why: `${qpStateName(from)} -> ${qpStateName(to)} may not change modify_mask bits ` +
      `0x${extra.toString(16)}` };
  return { to };
}
