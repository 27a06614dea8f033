/**
 * The software NIC's port CoS queues, answered by QUEUE_QPORTCFG (firmware/hwrm-port.ts) and
 * counted by context memory, which wants one fast-path TQM ring per queue
 * (firmware/hwrm-backing-store.ts; Linux bnxt_en bnxt.c bnxt_hwrm_func_backing_store_qcaps: bp->max_q).
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';

/** One lossy NIC queue and one lossless RoCE queue, as a RoCE-enabled Thor port has. */
export const PORT_QUEUES: readonly (readonly [id: number, profile: number, name: string])[] = [
  [0, H.QUEUE_SERVICE_PROFILE.LOSSY, 'nic'],
  [1, H.QUEUE_SERVICE_PROFILE.LOSSLESS_ROCE, 'roce'],
];

/** QUEUE_QPORTCFG's max_configurable_queues. */
export const PORT_QUEUE_COUNT = PORT_QUEUES.length;
