/**
 * HWRM_QUEUE_QPORTCFG (0x30): the port's CoS queues and their service profiles. Linux's
 * bnxt_en refuses a port with no configurable queue (`bnxt_hwrm_queue_qportcfg`) and sizes
 * the TQM context memory from the count (`bp->max_q`).
 */
import { layout, u8, u16, u32, bytes } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_queue_qportcfg_input (size:192b/24B)
export const QueueQportcfgInput = layout('hwrm_queue_qportcfg_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** Bit 0: QUEUE_QPORTCFG_REQ_FLAGS_PATH (0 TX, 1 RX). */
  flags: u32(16),
  port_id: u16(20),
  drv_qmap_cap: u8(22),
});

/** QUEUE_QPORTCFG_RESP_QUEUE_IDn_SERVICE_PROFILE values. */
export const QUEUE_SERVICE_PROFILE = {
  LOSSY: 0x0, LOSSLESS_ROCE: 0x1, LOSSY_ROCE_CNP: 0x2, LOSSLESS_NIC: 0x3, UNKNOWN: 0xff,
} as const;
export const QUEUE_QPORTCFG_RESP_QUEUE_CFG_INFO = { ASYM_CFG: 0x1, USE_PROFILE_TYPE: 0x2 } as const;

// hsi.h: struct hwrm_queue_qportcfg_output (size:1344b/168B)
export const QueueQportcfgOutput = layout('hwrm_queue_qportcfg_output', 168, {
  ...RESPONSE_HEADER_FIELDS,
  max_configurable_queues: u8(8),
  max_configurable_lossless_queues: u8(9),
  queue_cfg_allowed: u8(10),
  queue_cfg_info: u8(11),
  queue_pfcenable_cfg_allowed: u8(12),
  queue_pri2cos_cfg_allowed: u8(13),
  queue_cos2bw_cfg_allowed: u8(14),
  /** queue_id0, queue_id0_service_profile, ... queue_id7, queue_id7_service_profile: 8 pairs from byte 15. */
  queue_pairs: bytes(15, 16),
  queue_id0_service_profile_type: u8(31),
  /** qid0_name .. qid7_name, 16 bytes each. */
  qid_names: bytes(32, 128),
  /** queue_id1_service_profile_type .. queue_id7_service_profile_type. */
  queue_service_profile_types: bytes(160, 7),
  valid: u8(167),
});

// hsi.h: struct hwrm_queue_pri2cos_qcfg_input (size:192b/24B): which CoS queue each 802.1p
// priority maps to (bnxt_dcb.c bnxt_hwrm_queue_pri2cos_qcfg, asked when RoCE comes up).
export const QueuePri2cosQcfgInput = layout('hwrm_queue_pri2cos_qcfg_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  /** Bit 0 path (0 TX, 1 RX); bit 1 IVLAN. */
  flags: u32(16),
  port_id: u8(20),
});

// hsi.h: struct hwrm_queue_pri2cos_qcfg_output (size:192b/24B)
export const QueuePri2cosQcfgOutput = layout('hwrm_queue_pri2cos_qcfg_output', 24, {
  ...RESPONSE_HEADER_FIELDS,
  /** pri0_cos_queue_id .. pri7_cos_queue_id. */
  pri_cos_queue_ids: bytes(8, 8),
  queue_cfg_info: u8(16),
  valid: u8(23),
});
