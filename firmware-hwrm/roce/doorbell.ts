/**
 * The 64-bit RoCE doorbell of P5/P7 (`dbc_dbc` in bnxt_en's hsi.h), used for SQ, RQ, SRQ, CQ,
 * NQ and CREQ alike. Facts §5.2. One 64-bit store of (hi << 32 | lo); the helpers return the
 * two 32-bit halves as numbers so nothing on the data path builds a BigInt (Mmio.doorbell64).
 *
 *   lo: bits 0–23 index │ 24 epoch │ 25–26 toggle │ 27–31 0
 *   hi: bits 0–19 xid   │ 20–23 0 │ 24–25 path (0 = RoCE) │ 26 valid │ 27 debug_trace │ 28–31 type
 *
 * e.g. SQ of QP 0x45, index 3 = 0x0400_0045_0000_0003.
 */
import { layout, u32 } from '../layout.ts';
import { checkBits } from './bits.ts';
import { namer } from './names.ts';

export const DBC_INDEX_MASK = 0xffffff;
export const DBC_EPOCH_SHIFT = 24;
export const DBC_TOGGLE_SHIFT = 25;
export const DBC_TOGGLE_MASK = 0x3;
export const DBC_XID_MASK = 0xfffff;
export const DBC_PATH_SHIFT = 24;
export const DBC_PATH_MASK = 0x3;
/** Bit 26 of the high word; both RoCE drivers always set it (whether P5 checks it is unverified). */
export const DBC_VALID = 0x0400_0000;
export const DBC_DEBUG_TRACE = 0x0800_0000;
export const DBC_TYPE_SHIFT = 28;
export const DBC_TYPE_MASK = 0xf;

// hsi.h: DBC_DBC_TYPE_*
export const DbcType = {
  SQ: 0x0,
  RQ: 0x1,
  SRQ: 0x2,
  SRQ_ARM: 0x3,
  CQ: 0x4,
  CQ_ARMSE: 0x5,
  CQ_ARMALL: 0x6,
  CQ_ARMENA: 0x7,
  SRQ_ARMENA: 0x8,
  CQ_CUTOFF_ACK: 0x9,
  NQ: 0xa,
  NQ_ARM: 0xb,
  /** Defined in dbc_dbc; bnxt_re never writes it. */
  NQ_MASK: 0xe,
  NULL: 0xf,
} as const;
export type DbcType = (typeof DbcType)[keyof typeof DbcType];
export const dbcTypeName = namer(DbcType);
/** Short alias of DbcType (the driver's RCFW channel uses this name). */
export const DbType = DbcType;

// hsi.h: DBC_DBC_PATH_*
export const DbcPath = {
  ROCE: 0x0,
  L2: 0x1,
  ENGINE: 0x2,
} as const;

/**
 * Low word: index (24 bits) | epoch << 24 | toggle << 25. `epoch` is the parity of the
 * index's ring wraps (0/1); `toggle` is 0 except on P7 arm doorbells and CUTOFF_ACK.
 */
export function doorbellLo(index: number, epoch: number, toggle = 0): number {
  checkBits('doorbell index', index, 24);
  checkBits('doorbell epoch', epoch, 1);
  checkBits('doorbell toggle', toggle, 2);
  return (index | (epoch << DBC_EPOCH_SHIFT) | (toggle << DBC_TOGGLE_SHIFT)) >>> 0;
}

/** High word: xid (20 bits) | path RoCE | valid | type << 28. */
export function doorbellHi(xid: number, type: number): number {
  checkBits('doorbell xid', xid, 20);
  checkBits('doorbell type', type, 4);
  return (xid | DBC_VALID | (type << DBC_TYPE_SHIFT)) >>> 0;
}

export function doorbellIndex(lo: number): number {
  return lo & DBC_INDEX_MASK;
}

export function doorbellEpoch(lo: number): number {
  return (lo >>> DBC_EPOCH_SHIFT) & 1;
}

export function doorbellToggle(lo: number): number {
  return (lo >>> DBC_TOGGLE_SHIFT) & DBC_TOGGLE_MASK;
}

export function doorbellXid(hi: number): number {
  return hi & DBC_XID_MASK;
}

export function doorbellPath(hi: number): number {
  return (hi >>> DBC_PATH_SHIFT) & DBC_PATH_MASK;
}

/** 1 if the valid bit is set. A P5 model should accept either value (facts §5.2). */
export function doorbellValid(hi: number): number {
  return (hi >>> 26) & 1;
}

export function doorbellType(hi: number): number {
  return (hi >>> DBC_TYPE_SHIFT) & DBC_TYPE_MASK;
}

// hsi.h: struct dbc_dbc (the 8 bytes as stored little-endian)
export const DbcDbc = layout('dbc_dbc', 8, {
  index: u32(0, 0, 24),
  epoch: u32(0, 24, 1),
  toggle: u32(0, 25, 2),
  xid: u32(4, 0, 20),
  path: u32(4, 24, 2),
  valid: u32(4, 26, 1),
  debug_trace: u32(4, 27, 1),
  type: u32(4, 28, 4),
});
