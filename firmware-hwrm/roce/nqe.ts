/**
 * Notification-queue entries (16 bytes; roce_hsi.h, bnxt_qplib_service_nq). An NQ is created through HWRM and
 * consumed like the CREQ: valid bit 0 of the u32 at offset 8, expected 1 on the first lap and
 * flipped on each wrap; re-arm with an NQ_ARM doorbell.
 *
 *   0..1  type (bits 0–5) | toggle (bits 6–7, P7)    8..11   v (bit 0)
 *   4..7  cq_handle_low                              12..15  cq_handle_high
 */
import { layout, u8, u16, u32 } from '../layout.ts';
import { namer } from './names.ts';

export const NQE_BYTES = 16;

// roce_hsi.h: NQ_BASE_TYPE_*
export const NqType = {
  CQ_NOTIFICATION: 0x30,
  SRQ_EVENT: 0x32,
  DBQ_EVENT: 0x34,
  QP_EVENT: 0x38,
  FUNC_EVENT: 0x3a,
} as const;
export type NqType = (typeof NqType)[keyof typeof NqType];
export const nqTypeName = namer(NqType);

// roce_hsi.h: NQ_SRQ_EVENT_EVENT_*
export const NqSrqEventCode = {
  SRQ_THRESHOLD_EVENT: 0x1,
} as const;

// roce_hsi.h: struct nq_base
export const NqBase = layout('nq_base', 16, {
  type: u16(0, 0, 6),
  info10: u16(0, 6, 10),
  info16: u16(2),
  info32: u32(4),
  v: u32(8, 0, 1),
  info63_low: u32(8, 1, 31),
  info63_high: u32(12),
});

// roce_hsi.h: struct nq_cn (CQ notification)
export const NqCn = layout('nq_cn', 16, {
  type: u16(0, 0, 6),
  /** P7: copy into the next CQ arm doorbell. */
  toggle: u16(0, 6, 2),
  cq_handle_low: u32(4),
  v: u32(8, 0, 1),
  cq_handle_high: u32(12),
});

// roce_hsi.h: struct nq_srq_event
export const NqSrqEvent = layout('nq_srq_event', 16, {
  type: u8(0, 0, 6),
  toggle: u8(0, 6, 2),
  event: u8(1),
  srq_handle_low: u32(4),
  v: u32(8, 0, 1),
  srq_handle_high: u32(12),
});
