import t from 'tap';
import {
  doorbellLo, doorbellHi, DbcType, DbType, dbcTypeName, DbcPath, DbcDbc,
} from '../firmware-hwrm/roce/doorbell.ts';
import {
  dbcDbcIndexOf as doorbellIndex, dbcDbcEpochOf as doorbellEpoch, dbcDbcToggleOf as doorbellToggle,
  dbcDbcXidOf as doorbellXid, dbcDbcPathOf as doorbellPath, dbcDbcValidOf as doorbellValid,
  dbcDbcTypeOf as doorbellType, DBC_DBC_VALID_SHIFT, dbcDbcWord0, dbcDbcWord1,
} from '../firmware-hwrm/roce/doorbell.g.ts';

// Expected values are computed by hand from bnxt_hsi.h's dbc_dbc bit table (DBC_DBC_*_SFT and
// _MASK), with three worked examples.

const u64 = (hi: number, lo: number) => (BigInt(hi) << 32n) | BigInt(lo);

t.test('three worked examples', async (t) => {
  // SQ doorbell for QP 0x45, index 3, epoch 0
  t.equal(u64(doorbellHi(0x45, DbcType.SQ), doorbellLo(3, 0)), 0x0400_0045_0000_0003n);
  // CQ ARMALL for CQ 7 with consumer 10
  t.equal(u64(doorbellHi(7, DbcType.CQ_ARMALL), doorbellLo(10, 0)), 0x6400_0007_0000_000an);
  // NQ_ARM for ring 0x20, consumer 5, epoch 1
  t.equal(u64(doorbellHi(0x20, DbcType.NQ_ARM), doorbellLo(5, 1)), 0xb400_0020_0100_0005n);
});

t.test('bit positions: index 0-23, epoch 24, toggle 25-26; xid 0-19, valid 26, type 28-31', async (t) => {
  t.equal(doorbellLo(0xff_ffff, 0), 0x00ff_ffff);
  t.equal(doorbellLo(0, 1), 0x0100_0000);
  t.equal(doorbellLo(0, 0, 3), 0x0600_0000);
  t.equal(doorbellLo(0x12_3456, 1, 2), 0x0512_3456);
  t.equal(doorbellHi(0xf_ffff, DbcType.NULL), 0xf40f_ffff);
  t.equal(doorbellHi(0, DbcType.RQ), 0x1400_0000);
  t.equal(doorbellHi(0x1_2345, DbcType.CQ_ARMENA), 0x7401_2345);
  t.equal(2 ** DBC_DBC_VALID_SHIFT, 2 ** 26);
  t.equal(dbcDbcWord0(0x12_3456, 1, 2), 0x0512_3456, 'the hot path packer agrees');
  t.equal(dbcDbcWord1(0x1_2345, DbcPath.ROCE, 1, 0, DbcType.CQ_ARMENA), 0x7401_2345);
  t.ok(doorbellLo(0xff_ffff, 1, 3) >= 0 && doorbellHi(0xf_ffff, 0xf) >= 0, 'halves are unsigned');
});

t.test('decoders for the model', async (t) => {
  const lo = 0x0512_3456;
  const hi = 0xb400_0020;
  t.equal(doorbellIndex(lo), 0x12_3456);
  t.equal(doorbellEpoch(lo), 1);
  t.equal(doorbellToggle(lo), 2);
  t.equal(doorbellXid(hi), 0x20);
  t.equal(doorbellPath(hi), DbcPath.ROCE);
  t.equal(doorbellValid(hi), 1);
  t.equal(doorbellType(hi), DbcType.NQ_ARM);
  t.equal(doorbellValid(0xb000_0020), 0, 'valid bit clear (P5 may ignore it)');
  t.equal(doorbellPath(0x0100_0000), DbcPath.L2);
});

t.test('doorbell types are the dbc_dbc values', async (t) => {
  t.strictSame(DbcType, {
    SQ: 0x0, RQ: 0x1, SRQ: 0x2, SRQ_ARM: 0x3, CQ: 0x4, CQ_ARMSE: 0x5, CQ_ARMALL: 0x6, CQ_ARMENA: 0x7,
    SRQ_ARMENA: 0x8, CQ_CUTOFF_ACK: 0x9, NQ: 0xa, NQ_ARM: 0xb, NQ_MASK: 0xe, NULL: 0xf,
  });
  t.equal(DbType, DbcType);
  t.equal(dbcTypeName(0xb), 'NQ_ARM');
  t.equal(dbcTypeName(0xc), 'UNKNOWN(0xc)');
});

t.test('out-of-range arguments are refused, not truncated', async (t) => {
  t.throws(() => doorbellLo(0x100_0000, 0), RangeError);
  t.throws(() => doorbellLo(-1, 0), RangeError);
  t.throws(() => doorbellLo(1.5, 0), RangeError);
  t.throws(() => doorbellLo(0, 2), RangeError);
  t.throws(() => doorbellLo(0, 0, 4), RangeError);
  t.throws(() => doorbellHi(0x10_0000, 0), RangeError);
  t.throws(() => doorbellHi(0, 16), RangeError);
});

t.test('dbc_dbc as 8 little-endian bytes', async (t) => {
  const values = { index: 3, epoch: 1, toggle: 2, xid: 0x45, path: 0, valid: 1, debug_trace: 0, type: DbcType.NQ_ARM };
  const fixture = [0x03, 0x00, 0x00, 0x05, 0x45, 0x00, 0x00, 0xb4];
  t.strictSame([...DbcDbc.encode(values)], fixture);
  t.strictSame(DbcDbc.decode(Uint8Array.from(fixture)), values);
});
