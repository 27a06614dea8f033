/** Clear messages for CQE statuses (what poll returns as its error). */
import { CqReqStatus, CqResRcStatus, cqReqStatusName, cqResRcStatusName } from '../../firmware-hwrm/roce/cqe.ts';

const REQ: Record<number, string> = {
  [CqReqStatus.BAD_RESPONSE_ERR]: 'bad response from the peer',
  [CqReqStatus.LOCAL_LENGTH_ERR]: 'local length error',
  [CqReqStatus.LOCAL_QP_OPERATION_ERR]: 'local QP operation error',
  [CqReqStatus.LOCAL_PROTECTION_ERR]: 'local protection error: the region is not registered or the bytes lie outside ' +
    'it',
  [CqReqStatus.MEMORY_MGT_OPERATION_ERR]: 'memory management operation error',
  [CqReqStatus.REMOTE_INVALID_REQUEST_ERR]: 'the peer refused the request as invalid (e.g. a send longer than its ' +
    'receive)',
  [CqReqStatus.REMOTE_ACCESS_ERR]: 'the peer refused access (remote key, bounds or permission)',
  [CqReqStatus.REMOTE_OPERATION_ERR]: 'remote operation error at the peer',
  [CqReqStatus.RNR_NAK_RETRY_CNT_ERR]: 'receiver not ready: RNR retries exceeded',
  [CqReqStatus.TRANSPORT_RETRY_CNT_ERR]: 'retry exceeded: the peer did not acknowledge',
  [CqReqStatus.WORK_REQUEST_FLUSHED_ERR]: 'flushed: the queue pair has failed',
};

const RES: Record<number, string> = {
  [CqResRcStatus.LOCAL_ACCESS_ERROR]: 'local access error',
  [CqResRcStatus.LOCAL_LENGTH_ERR]: 'the message is longer than the receive',
  [CqResRcStatus.LOCAL_PROTECTION_ERR]: 'local protection error: the receive region is not registered or too small',
  [CqResRcStatus.LOCAL_QP_OPERATION_ERR]: 'local QP operation error',
  [CqResRcStatus.MEMORY_MGT_OPERATION_ERR]: 'memory management operation error',
  [CqResRcStatus.REMOTE_INVALID_REQUEST_ERR]: 'the peer sent an invalid request',
  [CqResRcStatus.WORK_REQUEST_FLUSHED_ERR]: 'flushed: the queue pair has failed',
  [CqResRcStatus.HW_FLUSH_ERR]: 'flushed by the NIC: the queue pair has failed',
};

/** What a CQE status no table names says (a NIC newer than this driver, or a malformed CQE). */
const UNKNOWN = 'the NIC completed the entry with a status this driver does not know';

export function requesterStatusMessage(status: number): string {
  return `${REQ[status] ?? UNKNOWN} (${cqReqStatusName(status)})`;
}

export function responderStatusMessage(status: number): string {
  return `${RES[status] ?? UNKNOWN} (${cqResRcStatusName(status)})`;
}

export function isFlush(isRequester: boolean, status: number): boolean {
  return isRequester ? status === CqReqStatus.WORK_REQUEST_FLUSHED_ERR
    : status === CqResRcStatus.WORK_REQUEST_FLUSHED_ERR || status === CqResRcStatus.HW_FLUSH_ERR;
}
