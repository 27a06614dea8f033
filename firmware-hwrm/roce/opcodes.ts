/**
 * RCFW command opcodes, CREQ status codes, CREQ entry types and the async event codes that
 * share the command-response entry. Values: roce_hsi.h (cmdq_base opcodes, creq_qp_event
 * status/event, creq_base type); wire sizes: the facts document §3.1 (recomputed from the
 * field lists, not the header's stale "size:" comments).
 */
import { namer } from './names.ts';

// roce_hsi.h: CMDQ_BASE_OPCODE_*
export const RoceOpcode = {
  CREATE_QP: 0x01,
  DESTROY_QP: 0x02,
  MODIFY_QP: 0x03,
  QUERY_QP: 0x04,
  CREATE_SRQ: 0x05,
  DESTROY_SRQ: 0x06,
  QUERY_SRQ: 0x08,
  CREATE_CQ: 0x09,
  DESTROY_CQ: 0x0a,
  RESIZE_CQ: 0x0c,
  ALLOCATE_MRW: 0x0d,
  DEALLOCATE_KEY: 0x0e,
  REGISTER_MR: 0x0f,
  DEREGISTER_MR: 0x10,
  ADD_GID: 0x11,
  DELETE_GID: 0x12,
  CREATE_QP1: 0x13,
  DESTROY_QP1: 0x14,
  CREATE_AH: 0x15,
  DESTROY_AH: 0x16,
  MODIFY_GID: 0x17,
  QUERY_GID: 0x18,
  INITIALIZE_FW: 0x80,
  DEINITIALIZE_FW: 0x81,
  STOP_FUNC: 0x82,
  QUERY_FUNC: 0x83,
  SET_FUNC_RESOURCES: 0x84,
  READ_CONTEXT: 0x85,
  VF_BACKCHANNEL_REQUEST: 0x86,
  READ_VF_MEMORY: 0x87,
  COMPLETE_VF_REQUEST: 0x88,
  EXTEND_CONTEXT_ARRRAY: 0x89,
  MAP_TC_TO_COS: 0x8a,
  QUERY_VERSION: 0x8b,
  MODIFY_ROCE_CC: 0x8c,
  QUERY_ROCE_CC: 0x8d,
  QUERY_ROCE_STATS: 0x8e,
  SET_LINK_AGGR_MODE: 0x8f,
  MODIFY_CQ: 0x90,
  QUERY_QP_EXTEND: 0x91,
  QUERY_ROCE_STATS_EXT: 0x92,
  ROCE_MIRROR_CFG: 0x99,
} as const;
export type RoceOpcode = (typeof RoceOpcode)[keyof typeof RoceOpcode];
export const roceOpcodeName = namer(RoceOpcode);

/**
 * Bytes each command occupies on the CMDQ (the size of each roce_hsi.h cmdq_* struct, counted in 16-byte slots as
 * qplib_rcfw.c does). Commands without a documented size (STOP_FUNC, MODIFY_CQ, the VF back-channel ones) are absent.
 */
export const ROCE_COMMAND_BYTES: Readonly<Record<number, number>> = {
  [RoceOpcode.CREATE_QP]: 104,
  [RoceOpcode.DESTROY_QP]: 24,
  [RoceOpcode.MODIFY_QP]: 144,
  [RoceOpcode.QUERY_QP]: 24,
  [RoceOpcode.CREATE_SRQ]: 56,
  [RoceOpcode.DESTROY_SRQ]: 24,
  [RoceOpcode.QUERY_SRQ]: 24,
  [RoceOpcode.CREATE_CQ]: 64,
  [RoceOpcode.DESTROY_CQ]: 24,
  [RoceOpcode.RESIZE_CQ]: 40,
  [RoceOpcode.ALLOCATE_MRW]: 32,
  [RoceOpcode.DEALLOCATE_KEY]: 24,
  [RoceOpcode.REGISTER_MR]: 56,
  [RoceOpcode.DEREGISTER_MR]: 24,
  [RoceOpcode.ADD_GID]: 48,
  [RoceOpcode.DELETE_GID]: 24,
  [RoceOpcode.CREATE_QP1]: 80,
  [RoceOpcode.DESTROY_QP1]: 24,
  [RoceOpcode.CREATE_AH]: 64,
  [RoceOpcode.DESTROY_AH]: 24,
  [RoceOpcode.MODIFY_GID]: 48,
  [RoceOpcode.QUERY_GID]: 24,
  [RoceOpcode.INITIALIZE_FW]: 112,
  [RoceOpcode.DEINITIALIZE_FW]: 16,
  [RoceOpcode.QUERY_FUNC]: 16,
  [RoceOpcode.SET_FUNC_RESOURCES]: 56,
  [RoceOpcode.READ_CONTEXT]: 24,
  [RoceOpcode.MAP_TC_TO_COS]: 24,
  [RoceOpcode.QUERY_VERSION]: 16,
  [RoceOpcode.MODIFY_ROCE_CC]: 56,
  [RoceOpcode.QUERY_ROCE_CC]: 16,
  [RoceOpcode.QUERY_ROCE_STATS]: 24,
  [RoceOpcode.SET_LINK_AGGR_MODE]: 40,
  [RoceOpcode.QUERY_QP_EXTEND]: 24,
  [RoceOpcode.QUERY_ROCE_STATS_EXT]: 24,
  [RoceOpcode.ROCE_MIRROR_CFG]: 24,
};

// roce_hsi.h: CREQ_QP_EVENT_STATUS_*. The kernel treats every non-zero status as failure.
export const RoceStatus = {
  SUCCESS: 0x0,
  FAIL: 0x1,
  RESOURCES: 0x2,
  INVALID_CMD: 0x3,
  NOT_IMPLEMENTED: 0x4,
  INVALID_PARAMETER: 0x5,
  HARDWARE_ERROR: 0x6,
  INTERNAL_ERROR: 0x7,
} as const;
export type RoceStatus = (typeof RoceStatus)[keyof typeof RoceStatus];
/** Name of a CREQ status; unknown codes come back as `UNKNOWN(0x..)`. Never throws. */
export const roceStatusName = namer(RoceStatus);

// roce_hsi.h: CREQ_BASE_TYPE_* (the low 6 bits of byte 0 of every CREQ entry).
export const CreqType = {
  /** Command responses and the QP/CQ error notifications. */
  QP_EVENT: 0x38,
  FUNC_EVENT: 0x3a,
  /**
   * HWRM async-event completion that may share the ring; the kernel ignores it (qplib_rcfw.c bnxt_qplib_service_creq).
   */
  HWRM_ASYNC_EVENT: 0x2e,
} as const;
export type CreqType = (typeof CreqType)[keyof typeof CreqType];
export const creqTypeName = namer(CreqType);

// roce_hsi.h: CREQ_QP_EVENT_EVENT_* beyond the opcodes (a response's event equals its opcode).
export const CreqEvent = {
  QP_ERROR_NOTIFICATION: 0xc0,
  CQ_ERROR_NOTIFICATION: 0xc1,
} as const;
export type CreqEvent = (typeof CreqEvent)[keyof typeof CreqEvent];
