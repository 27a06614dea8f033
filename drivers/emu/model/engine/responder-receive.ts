/**
 * The responder's receive queue (rxe: rxe_resp.c get_srq_wqe/check_resource and do_complete): a
 * SEND's first packet takes the receive WQE at rqConsumer (CHK_RESOURCE), checked as the chip checks
 * it; the message's last packet completes it (COMPLETE) with a responder CQE.
 */
import { CqResRcStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ResErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import {
  RQ_WQE_TYPE_RCV, SLOT_BYTES, STATIC_WQE_BYTES, WQE_HEADER_BYTES, WQE_HEADER_SLOTS,
} from '../../../../firmware-hwrm/roce/wqe.ts';
import * as Wqe from '../../../../firmware-hwrm/roce/wqe.g.ts';
import { ringSlot } from '../../../../firmware-hwrm/ring.ts';
import { NakCode } from '../wire/index.ts';
import { SglError, loadSglAfterHeader } from './sgl.ts';
import { writeResCqe } from './cq-writer.ts';
import { enterError } from './flush.ts';
import { MAX_SGE, type QpTransport } from './transport.ts';
import type { EngineCore } from './core.ts';
import { traceRqWqe } from './sq-wqe.ts';
import { classError } from './responder-answers.ts';

/** CHK_RESOURCE: reads and checks the receive WQE at rqConsumer (roce_hsi.h: struct rq_wqe_hdr). */
export function loadReceive(core: EngineCore, t: QpTransport): boolean {
  const iommu = core.iommu;
  const rq = t.qp.rq;
  const base = rq.entryOffset(ringSlot(t.rqConsumer, t.rqEntries));
  // Variable mode: a receive WQE is (2 + rq_sge) slots (roce-cmd-qp.ts) and may cross a page, so
  // its header slot and each SGE slot are read on their own; static WQEs never cross one.
  const variable = t.variable;
  const u = iommu.wordsIn(rq.memory, base, variable ? SLOT_BYTES : STATIC_WQE_BYTES);
  if (u === undefined) {
    core.counters.dmaFaults++;
    classError(core, t, NakCode.REMOTE_OPERATIONAL_ERROR, CqResRcStatus.LOCAL_QP_OPERATION_ERR,
      ResErrStateReason.RES_RX_PCI_ERROR, true);
    return false;
  }
  const w = iommu.wordOffset;
  if (core.bus.wqeTrace !== undefined) traceRqWqe(core, t, u, w, variable ? rq.entryBytes : STATIC_WQE_BYTES);
  const wrId = Wqe.rqWqeHdrWrId(u, w);
  const sges = Wqe.rqWqeHdrWqeSize(u, w) - WQE_HEADER_SLOTS;
  const staticLimit = t.qp.rqSge > 0 && t.qp.rqSge < MAX_SGE ? t.qp.rqSge : MAX_SGE;
  const limit = variable ? rq.entryBytes / SLOT_BYTES - WQE_HEADER_SLOTS : staticLimit;
  if (Wqe.rqWqeHdrWqeType(u, w) !== RQ_WQE_TYPE_RCV || sges < 0 || sges > limit) {
    classError(core, t, NakCode.REMOTE_OPERATIONAL_ERROR, CqResRcStatus.LOCAL_QP_OPERATION_ERR,
      ResErrStateReason.RES_WQE_FORMAT_ERROR, true);
    return false;
  }
  const status = loadSglAfterHeader(
    iommu, core.tables, t.qp.pd, t.recvSgl, rq.memory, base + WQE_HEADER_BYTES, u, w, sges, variable, true, true,
  );
  if (status !== SglError.OK) {
    classError(core, t, NakCode.REMOTE_OPERATIONAL_ERROR, CqResRcStatus.LOCAL_PROTECTION_ERR,
      ResErrStateReason.RES_WQE_FORMAT_ERROR, true);
    return false;
  }
  t.recvWrId = wrId;
  t.recvOffset = 0;
  t.recvActive = true;
  return true;
}

/** COMPLETE: the receive at rqConsumer is done. False if its CQ overflowed (the QP fails, nothing is acknowledged). */
export function completeReceive(
  core: EngineCore, t: QpTransport, length: number, imm: number, cqeFlags: number, solicited: boolean,
): boolean {
  if (!writeResCqe(core, t, length, imm, CqResRcStatus.OK, cqeFlags, t.recvWrId, solicited)) {
    core.counters.cqOverflows++;
    enterError(core, t, 0, ResErrStateReason.RES_CMP_ERROR, true);
    return false;
  }
  t.rqConsumer++;
  t.recvActive = false;
  return true;
}