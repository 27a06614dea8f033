/**
 * The named states of the requester and the responder of one QP, with their legal
 * transitions as tables (checked on every change: an illegal one is a broken invariant).
 * The completer has no state of its own beyond the requester's positions: like rxe's
 * completer it runs once per response packet, from check-PSN to update-completion.
 */

/** Requester (rxe: req.state). */
export const ReqState = {
  /** The QP is not in RTS (RESET, INIT, RTR, SQD): nothing is sent. */
  OFF: 0,
  /** Sending new and retransmitted packets as the window allows. */
  READY: 1,
  /** An RNR NAK arrived: nothing is sent until its timer expires. */
  RNR_WAIT: 2,
  /** The QP is in ERR: nothing is sent, everything left is flushed. */
  ERROR: 3,
} as const;
export const REQ_STATE_NAMES = ['OFF', 'READY', 'RNR_WAIT', 'ERROR'] as const;

/** Responder (rxe: resp.state). */
export const RespState = {
  /** The QP is not in RTR/RTS/SQD: requests are dropped. */
  OFF: 0,
  READY: 1,
  ERROR: 2,
} as const;
export const RESP_STATE_NAMES = ['OFF', 'READY', 'ERROR'] as const;

const R = ReqState;
// REQ_LEGAL[from] = bit set of the states `from` may move to (staying is always legal).
const REQ_LEGAL = [
  /* OFF      */ (1 << R.READY) | (1 << R.ERROR),
  /* READY    */ (1 << R.OFF) | (1 << R.RNR_WAIT) | (1 << R.ERROR),
  /* RNR_WAIT */ (1 << R.OFF) | (1 << R.READY) | (1 << R.ERROR),
  /* ERROR    */ (1 << R.OFF),
];

const S = RespState;
const RESP_LEGAL = [
  /* OFF   */ (1 << S.READY) | (1 << S.ERROR),
  /* READY */ (1 << S.OFF) | (1 << S.ERROR),
  /* ERROR */ (1 << S.OFF),
];

export function checkReqTransition(from: number, to: number): void {
  if (from !== to && (REQ_LEGAL[from]! & (1 << to)) === 0) {
    throw new Error(`engine: illegal requester transition ${REQ_STATE_NAMES[from]} -> ${REQ_STATE_NAMES[to]}`);
  }
}

export function checkRespTransition(from: number, to: number): void {
  if (from !== to && (RESP_LEGAL[from]! & (1 << to)) === 0) {
    throw new Error(`engine: illegal responder transition ${RESP_STATE_NAMES[from]} -> ${RESP_STATE_NAMES[to]}`);
  }
}
