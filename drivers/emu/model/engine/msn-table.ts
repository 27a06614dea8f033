/**
 * Hardware requester retransmission from the host MSN table (Thor2, and firmware that reports
 * HW_REQUESTER_RETX_ENABLED with a HOST_MSN_TABLE; Linux qplib_fp.c bnxt_qplib_create_qp,
 * _is_host_msn_table). The driver keeps, after the SQ's WQEs, a table of
 * roundup_pow_of_two(SQ size) 8-byte roce_hsi.h sq_msn_search entries and fills entry
 * msn % size for each WQE it posts, msn counting WQEs from 0 (bnxt_qplib_pull_psn_buff,
 * bnxt_qplib_fill_msn_search):
 *
 *   bits  0-23  start PSN of the WQE
 *   bits 24-47  next PSN (the first PSN after it)
 *   bits 48-63  start slot: the WQE's first 16-byte slot in the SQ (8 per WQE in static
 *               mode; in variable mode where the WQE starts, qplib_fp.c swq->slot_idx)
 *
 * The chip finds where to resend from in that table, not in its own memory of what it sent, so
 * the model does too: a go-back-N to PSN p reads the entries of the unacknowledged WQEs, takes
 * the one whose [start, next) holds p and resends that WQE with the entry's start PSN. A wrong
 * start PSN makes the retransmission wrong (other bytes under a PSN); an entry whose slot is not
 * the WQE's, or no entry holding p, fails the QP with REQ_RETX_SETUP_ERROR (the strict reading:
 * what the chip does with a table that names no WQE is not public).
 */
import { CqReqStatus } from '../../../../firmware-hwrm/roce/cqe.ts';
import { ReqErrStateReason } from '../../../../firmware-hwrm/roce/creq.ts';
import { PSN_MASK, psnDiff } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import { MSN_ENTRY_BYTES } from '../../../../firmware-hwrm/roce/msn-table.ts';
import { failSendHead } from './flush.ts';
import type { QpTransport } from './transport.ts';
import type { EngineCore } from './core.ts';


/**
 * Points the requester at PSN `psn` by the MSN table; false (and the QP failed) if the table
 * names no WQE that holds it, or names another WQE's slot.
 */
export function rewindFromMsnTable(core: EngineCore, t: QpTransport, psn: number): boolean {
  const qp = t.qp;
  const iommu = core.iommu;
  const tableAt = qp.sq.entries * qp.sq.entryBytes;
  for (let w = t.compWqe; w < t.fetchedWqe; w++) {
    const at = tableAt + (w % qp.msnEntries) * MSN_ENTRY_BYTES;
    const lo = iommu.read32In(qp.sq.memory, at);
    const hi = iommu.read32In(qp.sq.memory, at + 4);
    const start = lo & PSN_MASK;
    const next = ((lo >>> 24) | ((hi & 0xffff) << 8)) & PSN_MASK;
    if (psnDiff(psn, start) < 0 || psnDiff(psn, next) >= 0) continue;
    const slot = t.sqSlot(w);
    if (hi >>> 16 !== t.startSlot(w) % 0x10000) break;
    core.counters.msnRetransmissions++;
    t.wqeStartPsn[slot] = start;
    t.txWqe = w;
    t.txPsn = psn;
    return true;
  }
  core.counters.msnLookupFailures++;
  failSendHead(core, t, CqReqStatus.LOCAL_QP_OPERATION_ERR, ReqErrStateReason.REQ_RETX_SETUP_ERROR);
  return false;
}
