import t from 'tap';
import {
  FuncBackingStoreQcapsInput, FuncBackingStoreQcapsOutput, FuncBackingStoreCfgInput, FuncBackingStoreCfgOutput,
  FuncBackingStoreQcapsV2Input, FuncBackingStoreQcapsV2Output, FuncBackingStoreCfgV2Input, FuncBackingStoreCfgV2Output,
  FUNC_BACKING_STORE_CFG_LEGACY_LEN, FUNC_BACKING_STORE_CFG_REQ_ENABLES, FUNC_BACKING_STORE_PG_SIZE,
  FUNC_BACKING_STORE_LVL, backingStorePgSizeLvl, FUNC_BACKING_STORE_V2_TYPE, FUNC_BACKING_STORE_QCAPS_V2_RESP_FLAGS,
  FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS,
} from '../firmware-hwrm/hwrm/index.ts';
import { seq, zeros, u64pat, REQ_HDR, REQ_HDR_BYTES, RESP_HDR } from './helpers/hwrm-fixtures.ts';

// Fixtures follow hsi.h hwrm_func_backing_store_qcaps_output / _cfg_input in the offset-per-byte pattern of
// helpers/hwrm-fixtures.ts.

t.test('hwrm_func_backing_store_qcaps_input is the bare 16-byte header', async (t) => {
  t.equal(FuncBackingStoreQcapsInput.size, 16);
  t.same([...FuncBackingStoreQcapsInput.encode(REQ_HDR)], REQ_HDR_BYTES);
});

t.test('hwrm_func_backing_store_qcaps_output (104): every field at its documented offset', async (t) => {
  const values = {
    ...RESP_HDR,
    qp_max_entries: 0x0b0a0908, qp_min_qp1_entries: 0x0d0c, qp_max_l2_entries: 0x0f0e, qp_entry_size: 0x1110,
    srq_max_l2_entries: 0x1312, srq_max_entries: 0x17161514, srq_entry_size: 0x1918, cq_max_l2_entries: 0x1b1a,
    cq_max_entries: 0x1f1e1d1c, cq_entry_size: 0x2120, vnic_max_vnic_entries: 0x2322,
    vnic_max_ring_table_entries: 0x2524, vnic_entry_size: 0x2726, stat_max_entries: 0x2b2a2928, stat_entry_size: 0x2d2c,
    tqm_entry_size: 0x2f2e, tqm_min_entries_per_ring: 0x33323130, tqm_max_entries_per_ring: 0x37363534,
    mrav_max_entries: 0x3b3a3938, mrav_entry_size: 0x3d3c, tim_entry_size: 0x3f3e, tim_max_entries: 0x43424140,
    mrav_num_entries_units: 0x4544, tqm_entries_multiple: 0x46, ctx_kind_initializer: 0x47, ctx_init_mask: 0x4948,
    qp_init_offset: 0x4a, srq_init_offset: 0x4b, cq_init_offset: 0x4c, vnic_init_offset: 0x4d, tqm_fp_rings_count: 0x4e,
    stat_init_offset: 0x4f, mrav_init_offset: 0x50, tqm_fp_rings_count_ext: 0x51, tkc_init_offset: 0x52,
    rkc_init_offset: 0x53, tkc_entry_size: 0x5554, rkc_entry_size: 0x5756, tkc_max_entries: 0x5b5a5958,
    rkc_max_entries: 0x5f5e5d5c, fast_qpmd_qp_num_entries: 0x6160, valid: 0x67,
  };
  const want = [...seq(0, 0x61), ...zeros(5), 0x67]; // rsvd1 @98..102
  t.equal(FuncBackingStoreQcapsOutput.size, 104);
  t.same([...FuncBackingStoreQcapsOutput.encode(values)], want);
  t.strictSame(FuncBackingStoreQcapsOutput.decode(Uint8Array.from(want)), values);
});

t.test('hwrm_func_backing_store_cfg_input (336): every field at its documented offset', async (t) => {
  const values = {
    ...REQ_HDR,
    flags: 0x13121110, enables: 0x17161514,
    qpc_pg_size_qpc_lvl: 0x18, srq_pg_size_srq_lvl: 0x19, cq_pg_size_cq_lvl: 0x1a, vnic_pg_size_vnic_lvl: 0x1b,
    stat_pg_size_stat_lvl: 0x1c, tqm_sp_pg_size_tqm_sp_lvl: 0x1d,
    tqm_ring0_pg_size_tqm_ring0_lvl: 0x1e, tqm_ring1_pg_size_tqm_ring1_lvl: 0x1f, tqm_ring2_pg_size_tqm_ring2_lvl: 0x20,
    tqm_ring3_pg_size_tqm_ring3_lvl: 0x21, tqm_ring4_pg_size_tqm_ring4_lvl: 0x22, tqm_ring5_pg_size_tqm_ring5_lvl: 0x23,
    tqm_ring6_pg_size_tqm_ring6_lvl: 0x24, tqm_ring7_pg_size_tqm_ring7_lvl: 0x25,
    mrav_pg_size_mrav_lvl: 0x26, tim_pg_size_tim_lvl: 0x27,
    qpc_page_dir: 0x2d2c2b2a2928, srq_page_dir: 0x353433323130, cq_page_dir: 0x3d3c3b3a3938,
    vnic_page_dir: 0x454443424140, stat_page_dir: 0x4d4c4b4a4948, tqm_sp_page_dir: 0x555453525150,
    tqm_ring0_page_dir: 0x5d5c5b5a5958, tqm_ring1_page_dir: 0x656463626160, tqm_ring2_page_dir: 0x6d6c6b6a6968,
    tqm_ring3_page_dir: 0x757473727170, tqm_ring4_page_dir: 0x7d7c7b7a7978, tqm_ring5_page_dir: 0x858483828180,
    tqm_ring6_page_dir: 0x8d8c8b8a8988, tqm_ring7_page_dir: 0x959493929190, mrav_page_dir: 0x9d9c9b9a9998,
    tim_page_dir: 0xa5a4a3a2a1a0,
    qp_num_entries: 0xabaaa9a8, srq_num_entries: 0xafaeadac, cq_num_entries: 0xb3b2b1b0, stat_num_entries: 0xb7b6b5b4,
    tqm_sp_num_entries: 0xbbbab9b8, tqm_ring0_num_entries: 0xbfbebdbc, tqm_ring1_num_entries: 0xc3c2c1c0,
    tqm_ring2_num_entries: 0xc7c6c5c4, tqm_ring3_num_entries: 0xcbcac9c8, tqm_ring4_num_entries: 0xcfcecdcc,
    tqm_ring5_num_entries: 0xd3d2d1d0, tqm_ring6_num_entries: 0xd7d6d5d4, tqm_ring7_num_entries: 0xdbdad9d8,
    mrav_num_entries: 0xdfdedddc, tim_num_entries: 0xe3e2e1e0,
    qp_num_qp1_entries: 0xe5e4, qp_num_l2_entries: 0xe7e6, qp_entry_size: 0xe9e8, srq_num_l2_entries: 0xebea,
    srq_entry_size: 0xedec, cq_num_l2_entries: 0xefee, cq_entry_size: 0xf1f0, vnic_num_vnic_entries: 0xf3f2,
    vnic_num_ring_table_entries: 0xf5f4, vnic_entry_size: 0xf7f6, stat_entry_size: 0xf9f8, tqm_entry_size: 0xfbfa,
    mrav_entry_size: 0xfdfc, tim_entry_size: 0xfffe,
    // From 256 the pattern wraps (offset & 0xff); byte 256 would read 00, so it holds 0xa5 instead.
    tqm_ring8_pg_size_tqm_ring_lvl: 0xa5, tqm_ring8_num_entries: 0x07060504, tqm_ring8_page_dir: 0x0d0c0b0a0908,
    tqm_ring9_pg_size_tqm_ring_lvl: 0x10, tqm_ring9_num_entries: 0x17161514, tqm_ring9_page_dir: 0x1d1c1b1a1918,
    tqm_ring10_pg_size_tqm_ring_lvl: 0x20, tqm_ring10_num_entries: 0x27262524, tqm_ring10_page_dir: 0x2d2c2b2a2928,
    tkc_num_entries: 0x33323130, rkc_num_entries: 0x37363534, tkc_page_dir: 0x3d3c3b3a3938,
    rkc_page_dir: 0x454443424140, tkc_entry_size: 0x4948, rkc_entry_size: 0x4b4a, tkc_pg_size_tkc_lvl: 0x4c,
    rkc_pg_size_rkc_lvl: 0x4d, qp_num_fast_qpmd_entries: 0x4f4e,
  };
  const want = [
    ...REQ_HDR_BYTES, ...seq(0x10, 0x27), // flags, enables, 16 pg_size/lvl bytes
    ...u64pat(0x28), ...u64pat(0x30), ...u64pat(0x38), ...u64pat(0x40), ...u64pat(0x48), ...u64pat(0x50),
    ...u64pat(0x58), ...u64pat(0x60), ...u64pat(0x68), ...u64pat(0x70), ...u64pat(0x78), ...u64pat(0x80),
    ...u64pat(0x88), ...u64pat(0x90), ...u64pat(0x98), ...u64pat(0xa0), // 16 page_dirs, 40..167
    ...seq(0xa8, 0xff), // num_entries and entry sizes, 168..255
    0xa5, 0, 0, 0, 0x04, 0x05, 0x06, 0x07, ...u64pat(0x108), // tqm_ring8 @256
    0x10, 0, 0, 0, 0x14, 0x15, 0x16, 0x17, ...u64pat(0x118), // tqm_ring9 @272
    0x20, 0, 0, 0, 0x24, 0x25, 0x26, 0x27, ...u64pat(0x128), // tqm_ring10 @288
    ...seq(0x130, 0x137), ...u64pat(0x138), ...u64pat(0x140), ...seq(0x148, 0x14f), // tkc/rkc, fast qpmd @304..335
  ];
  t.equal(FuncBackingStoreCfgInput.size, 336);
  t.equal(want.length, 336);
  t.same([...FuncBackingStoreCfgInput.encode(values)], want);
  t.strictSame(FuncBackingStoreCfgInput.decode(Uint8Array.from(want)), values);
});

t.test('the 256-byte legacy CFG decodes with the 336-byte-only fields as zero', async (t) => {
  t.equal(FUNC_BACKING_STORE_CFG_LEGACY_LEN, 256);
  const b = new Uint8Array(FUNC_BACKING_STORE_CFG_LEGACY_LEN);
  b.set([0x93, 0x01], 0);
  b.set([0xff, 0xc0, 0x00, 0x00], 20); // enables QP|SRQ|CQ|VNIC|STAT|TQM_SP|TQM_RING0|TQM_RING1|MRAV|TIM
  b[24] = 0x02; // qpc: 4 KB pages, level 2
  b.set([0x00, 0x10, 0x20, 0x00, 0x01, 0x00, 0x00, 0x00], 40); // qpc_page_dir 0x1_0020_1000
  b.set([0x00, 0x04, 0x01, 0x00], 168); // qp_num_entries 0x10400
  b.set([0xc0, 0x01], 232); // qp_entry_size 448
  const r = FuncBackingStoreCfgInput.decode(b);
  t.equal(r.req_type, 0x193);
  t.equal(r.enables, 0xc0ff);
  t.ok(r.enables & FUNC_BACKING_STORE_CFG_REQ_ENABLES.TQM_RING1);
  t.ok(r.enables & FUNC_BACKING_STORE_CFG_REQ_ENABLES.MRAV);
  t.notOk(r.enables & FUNC_BACKING_STORE_CFG_REQ_ENABLES.TQM_RING2);
  t.equal(r.qpc_pg_size_qpc_lvl, backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_4K, FUNC_BACKING_STORE_LVL.LVL_2));
  t.equal(r.qpc_page_dir, 0x1_0020_1000);
  t.equal(r.qp_num_entries, 0x10400);
  t.equal(r.qp_entry_size, 448);
  t.equal(r.tqm_ring8_num_entries, 0);
  t.equal(r.qp_num_fast_qpmd_entries, 0);
});

t.test('hwrm_func_backing_store_cfg_output (16): valid @15', async (t) => {
  const want = [...seq(0, 7), ...zeros(7), 0x0f];
  t.same([...FuncBackingStoreCfgOutput.encode({ ...RESP_HDR, valid: 0x0f })], want);
  t.strictSame(FuncBackingStoreCfgOutput.decode(Uint8Array.from(want)), { ...RESP_HDR, valid: 0x0f });
});

t.test('page size and level nibbles: bits 7:4 size, bits 3:0 level', async (t) => {
  t.equal(backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_4K, FUNC_BACKING_STORE_LVL.LVL_0), 0x00);
  t.equal(backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_4K, FUNC_BACKING_STORE_LVL.LVL_1), 0x01);
  t.equal(backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_2M, FUNC_BACKING_STORE_LVL.LVL_1), 0x31);
  t.equal(backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_1G, FUNC_BACKING_STORE_LVL.LVL_2), 0x52);
  t.same(FUNC_BACKING_STORE_PG_SIZE, { PG_4K: 0, PG_8K: 1, PG_64K: 2, PG_2M: 3, PG_8M: 4, PG_1G: 5 });
  t.throws(() => backingStorePgSizeLvl(6, 0), RangeError);
  t.throws(() => backingStorePgSizeLvl(0, 3), RangeError);
  t.throws(() => backingStorePgSizeLvl(-1, 0), RangeError);
  t.throws(() => backingStorePgSizeLvl(0, 0.5), RangeError);
});

t.test('V1 enables bits of 3.14.2', async (t) => {
  const e = FUNC_BACKING_STORE_CFG_REQ_ENABLES;
  t.same([
    e.QP, e.SRQ, e.CQ, e.VNIC, e.STAT, e.TQM_SP, e.TQM_RING0, e.TQM_RING7, e.MRAV, e.TIM, e.TQM_RING8, e.QP_FAST_QPMD,
  ],
    [0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x2000, 0x4000, 0x8000, 0x10000, 0x200000]);
});

t.test('hwrm_func_backing_store_qcaps_v2 input (24) and output (56)', async (t) => {
  const inValues = { ...REQ_HDR, type: 0x1110 };
  const inWant = [...REQ_HDR_BYTES, 0x10, 0x11, ...zeros(6)];
  t.same([...FuncBackingStoreQcapsV2Input.encode(inValues)], inWant);
  t.strictSame(FuncBackingStoreQcapsV2Input.decode(Uint8Array.from(inWant)), inValues);

  const values = {
    ...RESP_HDR,
    type: 0x0908, entry_size: 0x0b0a, flags: 0x0f0e0d0c, instance_bit_map: 0x13121110,
    ctx_init_value: 0x14, ctx_init_offset: 0x15, entry_multiple: 0x16,
    max_num_entries: 0x1b1a1918, min_num_entries: 0x1f1e1d1c, next_valid_type: 0x2120,
    subtype_valid_cnt: 0x22, exact_cnt_bit_map: 0x23,
    split_entry_0: 0x27262524, split_entry_1: 0x2b2a2928, split_entry_2: 0x2f2e2d2c, split_entry_3: 0x33323130,
    max_instance_count: 0x3534, valid: 0x37,
  };
  const want = [...seq(0, 0x16), 0, ...seq(0x18, 0x35), 0, 0x37]; // rsvd @23, rsvd3 @54
  t.equal(FuncBackingStoreQcapsV2Output.size, 56);
  t.same([...FuncBackingStoreQcapsV2Output.encode(values)], want);
  t.strictSame(FuncBackingStoreQcapsV2Output.decode(Uint8Array.from(want)), values);
});

t.test('decodes a QCAPS_V2 answer for the QP type written out by hand', async (t) => {
  const b = new Uint8Array(56);
  b.set([0x00, 0x00, 0xa8, 0x01, 0x05, 0x00, 0x38, 0x00], 0);
  b.set([0x00, 0x00, 0x80, 0x01], 8); // type QP, entry_size 384
  b.set([0x03, 0x00, 0x00, 0x00], 12); // ENABLE_CTX_KIND_INIT | TYPE_VALID
  b.set([0xff, 0x02, 0x01, 0x00], 20); // init value 0xff at offset 2 (x4), entry_multiple 1
  b.set([0x00, 0x00, 0x01, 0x00], 24); // max_num_entries 65536
  b.set([0x01, 0x00, 0x02, 0x00], 32); // next_valid_type SRQ, subtype_valid_cnt 2
  b.set([0x00, 0x04, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00], 36); // split 0: 1024 L2, split 1: 128 QP1
  b[55] = 1;
  const r = FuncBackingStoreQcapsV2Output.decode(b);
  t.equal(r.type, FUNC_BACKING_STORE_V2_TYPE.QP);
  t.equal(r.entry_size, 384);
  t.ok(r.flags & FUNC_BACKING_STORE_QCAPS_V2_RESP_FLAGS.TYPE_VALID);
  t.equal(r.ctx_init_value, 0xff);
  t.equal(r.ctx_init_offset, 2);
  t.equal(r.max_num_entries, 65536);
  t.equal(r.next_valid_type, FUNC_BACKING_STORE_V2_TYPE.SRQ);
  t.equal(r.subtype_valid_cnt, 2);
  t.equal(r.split_entry_0, 1024);
  t.equal(r.split_entry_1, 128);
});

t.test('hwrm_func_backing_store_cfg_v2 input (64) and output (16)', async (t) => {
  const values = {
    ...REQ_HDR,
    type: 0x1110, instance: 0x1312, flags: 0x17161514, page_dir: 0x1d1c1b1a1918, num_entries: 0x23222120,
    entry_size: 0x2524, page_size_pbl_level: 0x26, subtype_valid_cnt: 0x27,
    split_entry_0: 0x2b2a2928, split_entry_1: 0x2f2e2d2c, split_entry_2: 0x33323130, split_entry_3: 0x37363534,
    enables: 0x3b3a3938, next_bs_offset: 0x3f3e3d3c,
  };
  const want = [...REQ_HDR_BYTES, ...seq(0x10, 0x17), ...u64pat(0x18), ...seq(0x20, 0x3f)];
  t.equal(FuncBackingStoreCfgV2Input.size, 64);
  t.same([...FuncBackingStoreCfgV2Input.encode(values)], want);
  t.strictSame(FuncBackingStoreCfgV2Input.decode(Uint8Array.from(want)), values);
  const outWant = [...seq(0, 7), ...zeros(7), 0x0f];
  t.same([...FuncBackingStoreCfgV2Output.encode({ ...RESP_HDR, valid: 0x0f })], outWant);
});

t.test('the last CFG_V2 call (TIM) carries BS_CFG_ALL_DONE', async (t) => {
  const got = FuncBackingStoreCfgV2Input.encode({
    req_type: 0x1a3, cmpl_ring: 0xffff, seq_id: 0x30, target_id: 0xffff, resp_addr: 0x5000,
    type: FUNC_BACKING_STORE_V2_TYPE.TIM, instance: 0, flags: FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS.BS_CFG_ALL_DONE,
    page_dir: 0x8_0000, num_entries: 1024, entry_size: 16,
    page_size_pbl_level: backingStorePgSizeLvl(FUNC_BACKING_STORE_PG_SIZE.PG_4K, FUNC_BACKING_STORE_LVL.LVL_1),
  });
  t.same([...got], [
    0xa3, 0x01, 0xff, 0xff, 0x30, 0x00, 0xff, 0xff, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x0f, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, // type TIM, instance 0, flags ALL_DONE
    0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, // page_dir
    0x00, 0x04, 0x00, 0x00, 0x10, 0x00, 0x01, 0x00, // num_entries 1024, entry_size 16, 4K/level 1, 0 splits
    ...zeros(24),
  ]);
});

t.test('V2 context type codes of 3.14.3', async (t) => {
  const v = FUNC_BACKING_STORE_V2_TYPE;
  t.same([v.QP, v.SRQ, v.CQ, v.VNIC, v.STAT, v.SP_TQM_RING, v.FP_TQM_RING, v.MRAV, v.TIM], [
    0, 1, 2, 3, 4, 5, 6, 0xe, 0xf,
  ]);
  t.equal(v.TTX_PACING_TQM_RING, 0x25);
  t.equal(v.ERR_QPC_TRACE, 0x2b);
  t.equal(v.INVALID, 0xffff);
});
