/**
 * The 64-bit RoCE doorbell of P5/P7 (`dbc_dbc` in bnxt_en's hsi.h), used for SQ, RQ, SRQ, CQ,
 * NQ and CREQ alike (the kernel's bnxt_qplib_ring_db, rdma-core's bnxt_re_ring_db). One 64-bit
 * store of (hi << 32 | lo); the accessors (doorbell.g.ts) give the two 32-bit halves as numbers,
 * so nothing on the data path builds a BigInt (Mmio.doorbell64).
 *
 *   lo: bits 0–23 index │ 24 epoch │ 25–26 toggle │ 27–31 0
 *   hi: bits 0–19 xid   │ 20–23 0 │ 24–25 path (0 = RoCE) │ 26 valid │ 27 debug_trace │ 28–31 type
 *
 * e.g. SQ of QP 0x45, index 3 = 0x0400_0045_0000_0003.
 */
import { layout, u32 } from '../layout.ts';
import { namer } from './names.ts';

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
 * Low word: index (24 bits) | epoch << 24 | toggle << 25, range-checked (hot paths use the
 * generated dbcDbcWord0). `epoch` is the parity of the index's ring wraps (0/1); `toggle` is 0
 * except on P7 arm doorbells and CUTOFF_ACK.
 */
export function doorbellLo(index: number, epoch: number, toggle = 0): number {
  return word(DbcDbc.encode({ index, epoch, toggle }), 0);
}

/** High word: xid (20 bits) | path RoCE | valid | type << 28, range-checked. */
export function doorbellHi(xid: number, type: number): number {
  return word(DbcDbc.encode({ xid, path: DbcPath.ROCE, valid: 1, type }), 4);
}

function word(b: Uint8Array, at: number): number {
  return new DataView(b.buffer, b.byteOffset).getUint32(at, true);
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
