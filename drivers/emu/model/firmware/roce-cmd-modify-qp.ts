/**
 * MODIFY_QP (roce_hsi.h: struct cmdq_modify_qp; what bnxt_qplib_modify_qp in qplib_fp.c sends): a legal transition
 * carrying its required attributes (roce-qp-transitions.ts), attributes within their encodings, then every
 * attribute the mask names stored on the QP. All checks come before the first change.
 * The engine hears of a state change after it happened.
 */
import {
  CmdqModifyQp, CreqModifyQpResp, DevCapFlags, ModifyQpMask as M, QpState, RoceStatus, PSN_MASK, pathMtuCode,
  pathMtuFor,
} from '../../../../firmware-hwrm/roce/index.ts';
import type { EmuQpState } from '../objects.ts';
import { refuse, success, type Answer, type RoceContext } from './roce-answer.ts';
import { checkGsiModify, checkRcModify } from './roce-qp-transitions.ts';

const QPN_MAX = 0xffffff;

/**
 * The largest path MTU code the port's Ethernet MTU carries (the one rule the driver and the
 * port use too); 8192 (code 5) is a bnxt extension no Ethernet MTU here reaches.
 */
export function maxPathMtuCode(portMtu: number): number {
  return pathMtuCode(pathMtuFor(portMtu));
}

/** The firmware keeps ORRQ / IRRQ itself: read depths are ORD and IRD, not slots (personality current-iqm). */
export function internalQueueMemory(ctx: RoceContext): boolean {
  return (ctx.firmware.devCapFlags & DevCapFlags.INTERNAL_QUEUE_MEMORY) !== 0;
}

export function modifyQp(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqModifyQp.decode(cmd);
  const { state } = ctx;
  const P = RoceStatus.INVALID_PARAMETER;
  const fq = state.qps.get(c.qp_cid);
  if (!fq) return refuse(P, `MODIFY_QP: no QP ${c.qp_cid}`);
  const qp = fq.qp;
  const mask = c.modify_mask >>> 0;
  const gsi = qp.service === 'gsi';
  const step = gsi ? checkGsiModify(qp.state, mask, c.new_state) : checkRcModify(qp.state, mask, c.new_state);
  if ('why' in step) return refuse(P, `MODIFY_QP ${qp.qpn}: ${step.why}`);

  // Attribute values, each only where the mask names it.
  const limits = ctx.limits();
  const has = (bit: number) => (mask & bit) !== 0;
  const bad = (what: string) => refuse(P, `MODIFY_QP ${qp.qpn}: ${what}`);
  // A connected QP names its source GID; a UD QP's sends each name theirs (the address
  // vector), so QP1's sgid_index is not held to the table: bnxt_qplib_modify_qp sends entry 0's
  // at RTR whether or not the GID table has one yet.
  if (has(M.SGID_INDEX) && !gsi && !state.gids.has(c.sgid_index))
    return bad(`sgid_index ${c.sgid_index} is no GID table entry`);
  const mtuCode = maxPathMtuCode(ctx.bus.config.mtu);
  if (has(M.PATH_MTU) && c.path_mtu > mtuCode)
    return bad(`path MTU code ${c.path_mtu} exceeds the port's (${mtuCode}, MTU ${ctx.bus.config.mtu})`);
  if (has(M.TIMEOUT) && c.timeout > 31) return bad(`timeout ${c.timeout} is not a 5-bit exponent`);
  if (has(M.RETRY_CNT) && c.retry_cnt > 7) return bad(`retry_cnt ${c.retry_cnt} is not 0..7`);
  if (has(M.RNR_RETRY) && c.rnr_retry > 7) return bad(`rnr_retry ${c.rnr_retry} is not 0..7`);
  if (has(M.MIN_RNR_TIMER) && c.min_rnr_timer > 31) return bad(`min_rnr_timer ${c.min_rnr_timer} is not a 5-bit code`);
  if (has(M.RQ_PSN) && c.rq_psn > PSN_MASK) return bad(`rq_psn 0x${c.rq_psn.toString(16)} is not a 24-bit PSN`);
  if (has(M.SQ_PSN) && c.sq_psn > PSN_MASK) return bad(`sq_psn 0x${c.sq_psn.toString(16)} is not a 24-bit PSN`);
  if (has(M.DEST_QP_ID) && c.dest_qp_id > QPN_MAX)
    return bad(`dest_qp_id 0x${c.dest_qp_id.toString(16)} is not a 24-bit QP number`);
  // ORRQ slots = ORD + 1 and IRRQ slots = 2 x IRD + 2, within what CREATE_QP's ORRQ/IRRQ hold;
  // with internal queue memory the depths themselves, within QUERY_FUNC's maxima (Broadcom's
  // bnxt_re sends them raw where BNXT_RE_IQM(dev_cap_flags)), so slots sent to such a device
  // exceed them and are refused.
  const iqm = internalQueueMemory(ctx);
  const maxOrrq = iqm ? limits.maxQpInitRdAtom : limits.maxQpInitRdAtom + 1;
  const maxIrrq = iqm ? limits.maxQpRdAtom : 2 * limits.maxQpRdAtom + 2;
  if (has(M.MAX_RD_ATOMIC) && (c.max_rd_atomic < 1 || c.max_rd_atomic > maxOrrq))
    return bad(`max_rd_atomic ${c.max_rd_atomic} is not 1..${maxOrrq}`);
  if (has(M.MAX_DEST_RD_ATOMIC) && (c.max_dest_rd_atomic < 1 || c.max_dest_rd_atomic > maxIrrq))
    return bad(`max_dest_rd_atomic ${c.max_dest_rd_atomic} is not 1..${maxIrrq}`);

  // Store what the mask names.
  if (has(M.ACCESS)) qp.access = c.access;
  if (has(M.PKEY)) qp.pkey = c.pkey;
  if (has(M.QKEY)) fq.qkey = c.qkey;
  if (has(M.EN_SQD_ASYNC_NOTIFY)) fq.enSqdAsyncNotify = c.en_sqd_async_notify;
  if (has(M.DGID)) {
    qp.destGid.set(c.dgid);
    fq.networkType = c.network_type;
  }
  if (has(M.FLOW_LABEL)) fq.flowLabel = c.flow_label & 0xfffff;
  if (has(M.SGID_INDEX)) {
    qp.sgidIndex = c.sgid_index;
    fq.usesSgid = !gsi; // QP1 holds no GID entry (see above)
  }
  if (has(M.HOP_LIMIT)) qp.hopLimit = c.hop_limit;
  if (has(M.TRAFFIC_CLASS)) fq.trafficClass = c.traffic_class;
  if (has(M.DEST_MAC)) qp.destMac.set(c.dest_mac);
  if (has(M.PATH_MTU)) qp.pathMtuBytes = 256 << c.path_mtu;
  if (has(M.TIMEOUT)) qp.timeout = c.timeout;
  if (has(M.RETRY_CNT)) qp.retryCnt = c.retry_cnt;
  if (has(M.RNR_RETRY)) qp.rnrRetry = c.rnr_retry;
  if (has(M.MIN_RNR_TIMER)) qp.minRnrTimer = c.min_rnr_timer;
  if (has(M.RQ_PSN)) qp.rqPsn = c.rq_psn;
  if (has(M.SQ_PSN)) qp.sqPsn = c.sq_psn;
  // Held as slots either way (the engine's unit): ORD + 1, 2 x IRD + 2.
  if (has(M.MAX_RD_ATOMIC)) qp.maxRdAtomic = iqm ? c.max_rd_atomic + 1 : c.max_rd_atomic;
  if (has(M.MAX_DEST_RD_ATOMIC)) qp.maxDestRdAtomic = iqm ? 2 * c.max_dest_rd_atomic + 2 : c.max_dest_rd_atomic;
  if (has(M.DEST_QP_ID)) qp.destQpn = c.dest_qp_id;
  if (has(M.SRC_MAC)) fq.srcMac = c.src_mac;
  if (has(M.VLAN_ID)) {
    fq.vlanId = c.vlan_id;
    fq.vlanDei = c.vlan_dei;
    fq.vlanPcp = c.vlan_pcp;
  }
  if (has(M.ENABLE_CC)) fq.enableCc = c.enable_cc;
  if (has(M.TOS_ECN)) fq.tosEcn = c.tos_ecn;
  if (has(M.TOS_DSCP)) fq.tosDscp = c.tos_dscp;
  // SQ_SIZE, RQ_SIZE, SQ_SGE, RQ_SGE, MAX_INLINE_DATA (RESIZE_QP is not offered), PINGPONG_PUSH_MODE
  // and the ext_modify_mask attributes are accepted and ignored.

  const from = qp.state;
  if (step.to !== from) {
    qp.state = step.to as EmuQpState;
    if (step.to === QpState.RESET) {
      // A reset QP starts over: its context's queue positions go back to 0 and it names no GID.
      qp.sqProducer = 0;
      qp.rqProducer = 0;
      fq.usesSgid = false;
    }
    ctx.hooks.qpStateChanged(qp, from);
  }
  return success(CreqModifyQpResp.encode({ xid: qp.qpn }));
}
