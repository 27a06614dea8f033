import t from 'tap';
import {
  PTU_PTE_VALID, PTU_PTE_LAST, PTU_PTE_NEXT_TO_LAST, PTU_PDE_VALID, PTE_BYTES, PgSize, PblLevel,
  pgSizeCode, pgSizeBytes, log2PageSize, pblLevel, queuePteFlags, pteLo, pteHi, pteAddress, pteFlags,
} from '../firmware-hwrm/roce/pbl.ts';

// Values from qplib_res.h / qplib_res.c (bnxt_qplib_alloc_init_hwq, PTU_PTE_*).

t.test('PTE flag bits', async (t) => {
  t.equal(PTU_PTE_VALID, 0x1);
  t.equal(PTU_PTE_LAST, 0x2);
  t.equal(PTU_PTE_NEXT_TO_LAST, 0x4);
  t.equal(PTU_PDE_VALID, 0x1);
  t.equal(PTE_BYTES, 8);
});

t.test('queue ring PTEs: VALID everywhere, NEXT_TO_LAST and LAST on the final two pages', async (t) => {
  t.strictSame([0, 1, 2, 3].map((i) => queuePteFlags(i, 4)), [0x1, 0x1, 0x5, 0x3]);
  t.strictSame([0, 1].map((i) => queuePteFlags(i, 2)), [0x5, 0x3]);
  t.strictSame([queuePteFlags(0, 1)], [0x3]);
});

t.test('a PTE as two 32-bit halves and as 8 little-endian bytes', async (t) => {
  const address = 0x1_2345_6000;
  const lo = pteLo(address, PTU_PTE_VALID | PTU_PTE_LAST);
  const hi = pteHi(address);
  t.equal(lo, 0x2345_6003);
  t.equal(hi, 0x1);
  const bytes = new Uint8Array(8);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, lo, true);
  v.setUint32(4, hi, true);
  t.strictSame([...bytes], [0x03, 0x60, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00]);
  t.equal(pteAddress(lo, hi), address);
  t.equal(pteFlags(lo), 0x3);
  t.equal(pteLo(0xffff_f000, PTU_PTE_VALID), 0xffff_f001, 'unsigned');
  t.throws(() => pteLo(0x1_2345_6800, 1), RangeError, 'not 4 KiB aligned');
  t.throws(() => pteLo(4096, 0x1000), RangeError, 'flags overlap the address');
});

t.test('PBL levels', async (t) => {
  t.strictSame(PblLevel, { LVL_0: 0, LVL_1: 1, LVL_2: 2 });
  t.equal(pblLevel(1), 0);
  t.equal(pblLevel(2), 1);
  t.equal(pblLevel(512), 1);
  t.equal(pblLevel(513), 2);
  t.throws(() => pblLevel(0), RangeError);
});

t.test('page-size codes 0 = 4K … 5 = 1G, and log2 sizes for REGISTER_MR', async (t) => {
  t.strictSame(PgSize, { PG_4K: 0, PG_8K: 1, PG_64K: 2, PG_2M: 3, PG_8M: 4, PG_1G: 5 });
  t.strictSame([4096, 8192, 65536, 2 ** 21, 2 ** 23, 2 ** 30].map(pgSizeCode), [0, 1, 2, 3, 4, 5]);
  t.equal(pgSizeBytes(3), 2 ** 21);
  t.throws(() => pgSizeCode(16384), RangeError);
  t.throws(() => pgSizeBytes(6), RangeError);
  t.equal(log2PageSize(4096), 12);
  t.equal(log2PageSize(2 ** 21), 21);
  t.equal(log2PageSize(2 ** 30), 30);
  t.throws(() => log2PageSize(2048), RangeError);
  t.throws(() => log2PageSize(12288), RangeError);
});
