import t from 'tap';
import {
  CmdqInitializeFw, CreqInitializeFwResp, CmdqDeinitializeFw, CreqDeinitializeFwResp, CmdqQueryFunc, CreqQueryFuncResp,
  CreqQueryFuncRespSb, CmdqQueryVersion, CreqQueryVersionResp, InitializeFwFlags, DevCapFlags, DevCapExtFlags2,
  REQ_RETRANSMISSION_SUPPORT_SHIFT, REQ_RETRANSMISSION_SUPPORT_MASK, ReqRetransmissionSupport,
} from '../firmware-hwrm/roce/commands-fw.ts';
import { wire, seq, base, baseRows, resp, respRows } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from roce_hsi.h cmdq_query_version, cmdq_query_func, creq_query_func_resp_sb,
// cmdq_initialize_fw.

t.test('INITIALIZE_FW: 112 bytes', async (t) => {
  const values = {
    ...base(0x80, 7),
    qpc_lvl: 1, qpc_pg_size: 2,
    mrw_lvl: 2, mrw_pg_size: 3,
    srq_lvl: 0, srq_pg_size: 4,
    cq_lvl: 1, cq_pg_size: 5,
    tqm_lvl: 2, tqm_pg_size: 0,
    tim_lvl: 0, tim_pg_size: 1,
    log2_dbr_pg_size: 0xa,
    qpc_page_dir: 0x0f_1d1c_1b1a_1918,
    mrw_page_dir: 0x0f_2524_2322_2120,
    srq_page_dir: 0x0f_2d2c_2b2a_2928,
    cq_page_dir: 0x0f_3534_3332_3130,
    tqm_page_dir: 0x0f_3d3c_3b3a_3938,
    tim_page_dir: 0x0f_4544_4342_4140,
    number_of_qp: 0x4b4a_4948,
    number_of_mrw: 0x4f4e_4d4c,
    number_of_srq: 0x5352_5150,
    number_of_cq: 0x5756_5554,
    max_qp_per_vf: 0x5b5a_5958,
    max_mrw_per_vf: 0x5f5e_5d5c,
    max_srq_per_vf: 0x6362_6160,
    max_cq_per_vf: 0x6766_6564,
    max_gid_per_vf: 0x6b6a_6968,
    stat_ctx_id: 0x6f6e_6d6c,
  };
  const fixture = wire(112, ...baseRows(0x80, 7),
    [16, 0x21, 0x32, 0x40, 0x51, 0x02, 0x10], // level in bits 0-3, page-size code in bits 4-7
    [22, 0x0a, 0x00],
    [24, ...seq(0x18, 6), 0x0f, 0x00],
    [32, ...seq(0x20, 6), 0x0f, 0x00],
    [40, ...seq(0x28, 6), 0x0f, 0x00],
    [48, ...seq(0x30, 6), 0x0f, 0x00],
    [56, ...seq(0x38, 6), 0x0f, 0x00],
    [64, ...seq(0x40, 6), 0x0f, 0x00],
    [72, ...seq(0x48, 40)], // the nine counts and stat_ctx_id, u32 each, 72..111
  );
  t.equal(CmdqInitializeFw.size, 112);
  t.strictSame([...CmdqInitializeFw.encode(values)], fixture);
  t.strictSame(CmdqInitializeFw.decode(Uint8Array.from(fixture)), values);
});

t.test('INITIALIZE_FW on P5: only flags, log2_dbr_pg_size and stat_ctx_id are set', async (t) => {
  const got = CmdqInitializeFw.encode({
    opcode: 0x80, cmd_size: 7, flags: InitializeFwFlags.OPTIMIZE_MODIFY_QP_SUPPORTED, log2_dbr_pg_size: 0,
    stat_ctx_id: 5,
  });
  t.strictSame([...got], wire(112, [0, 0x80, 0x07, 0x08], [108, 0x05]));
});

t.test('INITIALIZE_FW / DEINITIALIZE_FW responses and DEINITIALIZE_FW', async (t) => {
  const r = resp(0x80);
  const rFixture = wire(16, ...respRows(0x80));
  t.strictSame([...CreqInitializeFwResp.encode(r)], rFixture);
  t.strictSame(CreqInitializeFwResp.decode(Uint8Array.from(rFixture)), r);

  const values = base(0x81, 1);
  const fixture = wire(16, ...baseRows(0x81, 1));
  t.equal(CmdqDeinitializeFw.size, 16);
  t.strictSame([...CmdqDeinitializeFw.encode(values)], fixture);
  t.strictSame(CmdqDeinitializeFw.decode(Uint8Array.from(fixture)), values);

  const d = resp(0x81);
  const dFixture = wire(16, ...respRows(0x81));
  t.strictSame([...CreqDeinitializeFwResp.encode(d)], dFixture);
  t.strictSame(CreqDeinitializeFwResp.decode(Uint8Array.from(dFixture)), d);
});

t.test('QUERY_FUNC: bare header with a 10-unit side buffer; response carries its size', async (t) => {
  const values = { ...base(0x83, 1), resp_size: 10 };
  const fixture = wire(16, [0, 0x83, 0x01, 0x02, 0x03, 0x04, 0x05, 0x0a], [8, ...seq(0x08, 7), 0x00]);
  t.equal(CmdqQueryFunc.size, 16);
  t.strictSame([...CmdqQueryFunc.encode(values)], fixture);
  t.strictSame(CmdqQueryFunc.decode(Uint8Array.from(fixture)), values);

  const r = { ...resp(0x83), size: 160 };
  const rFixture = wire(16, ...respRows(0x83), [4, 0xa0]);
  t.strictSame([...CreqQueryFuncResp.encode(r)], rFixture);
  t.strictSame(CreqQueryFuncResp.decode(Uint8Array.from(rFixture)), r);
});

t.test('QUERY_FUNC side buffer: 160 bytes', async (t) => {
  const values = {
    opcode: 0x83, status: 0x00, cookie: 0x0504, flags: 0x0000, resp_size: 10,
    max_mr_size: 0x0f0e_0d0c_0b0a_0908n,
    max_qp: 0x1312_1110,
    max_qp_wr: 0x1514,
    dev_cap_flags: 0x1716,
    max_cq: 0x1b1a_1918,
    max_cqe: 0x1f1e_1d1c,
    max_pd: 0x2322_2120,
    max_sge: 0x24, max_srq_sge: 0x25, max_qp_rd_atom: 0x26, max_qp_init_rd_atom: 0x27,
    max_mr: 0x2b2a_2928,
    max_mw: 0x2f2e_2d2c,
    max_raw_eth_qp: 0x3332_3130,
    max_ah: 0x3736_3534,
    max_fmr: 0x3b3a_3938,
    max_srq_wr: 0x3f3e_3d3c,
    max_pkeys: 0x4342_4140,
    max_inline_data: 0x4746_4544,
    max_map_per_fmr: 0x48, l2_db_space_size: 0x49,
    max_srq: 0x4b4a,
    max_gid: 0x4f4e_4d4c,
    tqm_alloc_reqs: Uint8Array.from(seq(0x50, 48)),
    max_dpi: 0x8382_8180,
    max_sge_var_wqe: 0x84, dev_cap_ext_flags: 0x85,
    max_inline_data_var_wqe: 0x8786,
    start_qid: 0x8b8a_8988,
    max_msn_table_size: 0x8c,
    dev_cap_ext_flags_2: 0x8f8e,
    max_xp_qp_size: 0x9190,
    create_qp_batch_size: 0x9392,
    destroy_qp_batch_size: 0x9594,
    max_srq_ext: 0x9796,
    rate_limit_min: 0x9b9a,
    rate_limit_max: 0x9f9e_9d9c,
  };
  const fixture = wire(160,
    [0, 0x83, 0x00, 0x04, 0x05, 0x00, 0x00, 0x0a],
    [8, ...seq(0x08, 8)],          // max_mr_size
    [16, ...seq(0x10, 4)],         // max_qp
    [20, 0x14, 0x15, 0x16, 0x17],  // max_qp_wr, dev_cap_flags
    [24, ...seq(0x18, 12)],        // max_cq, max_cqe, max_pd
    [36, 0x24, 0x25, 0x26, 0x27],  // four u8 limits
    [40, ...seq(0x28, 32)],        // max_mr … max_inline_data (8 × u32)
    [72, 0x48, 0x49, 0x4a, 0x4b],  // max_map_per_fmr, l2_db_space_size, max_srq
    [76, ...seq(0x4c, 4)],         // max_gid
    [80, ...seq(0x50, 48)],        // tqm_alloc_reqs
    [128, ...seq(0x80, 4)],        // max_dpi
    [132, 0x84, 0x85, 0x86, 0x87], // max_sge_var_wqe, dev_cap_ext_flags, max_inline_data_var_wqe
    [136, ...seq(0x88, 4)],        // start_qid
    [140, 0x8c],                   // max_msn_table_size (141 reserved)
    [142, 0x8e, 0x8f],             // dev_cap_ext_flags_2
    [144, ...seq(0x90, 8)],        // max_xp_qp_size, create/destroy batch sizes, max_srq_ext
    [154, 0x9a, 0x9b],             // rate_limit_min (152-153 reserved)
    [156, ...seq(0x9c, 4)],        // rate_limit_max
  );
  t.equal(CreqQueryFuncRespSb.size, 160);
  t.strictSame([...CreqQueryFuncRespSb.encode(values)], fixture);
  t.strictSame(CreqQueryFuncRespSb.decode(Uint8Array.from(fixture)), values);
});

t.test('QUERY_VERSION: bare header; versions in the CREQ entry', async (t) => {
  const values = base(0x8b, 1);
  const fixture = wire(16, ...baseRows(0x8b, 1));
  t.strictSame([...CmdqQueryVersion.encode(values)], fixture);
  t.strictSame(CmdqQueryVersion.decode(Uint8Array.from(fixture)), values);

  const r = {
    ...resp(0x8b), fw_maj: 218, fw_minor: 1, fw_bld: 169, fw_rsvd: 7, intf_maj: 1, intf_minor: 10, intf_bld: 2,
    intf_rsvd: 95,
  };
  const rFixture = wire(16, [0, 0x38, 0x00, 0x04, 0x05, 0xda, 0x01, 0xa9, 0x07], [8, 0x01, 0x8b], [
    12, 0x01, 0x0a, 0x02, 0x5f,
  ]);
  t.strictSame([...CreqQueryVersionResp.encode(r)], rFixture);
  t.strictSame(CreqQueryVersionResp.decode(Uint8Array.from(rFixture)), r);
});

t.test('capability and INITIALIZE_FW flag values', async (t) => {
  t.strictSame(InitializeFwFlags, {
    MRAV_RESERVATION_SPLIT: 0x1, HW_REQUESTER_RETX_SUPPORTED: 0x2, OPTIMIZE_MODIFY_QP_SUPPORTED: 0x8,
    L2_VF_RESOURCE_MGMT: 0x10, MIRROR_ON_ROCE_SUPPORTED: 0x80,
  });
  t.equal(DevCapFlags.MR_REGISTER_ALLOC, 0x20);
  t.equal(DevCapFlags.HW_REQUESTER_RETX_ENABLED, 0x200);
  t.equal(DevCapFlags.HW_RESPONDER_RETX_ENABLED, 0x400);
  t.equal(DevCapExtFlags2.OPTIMIZE_MODIFY_QP_SUPPORTED, 0x1);
  t.equal(DevCapExtFlags2.CQ_COALESCING_SUPPORTED, 0x4);
  t.equal(DevCapExtFlags2.MODIFY_QP_RATE_LIMIT_SUPPORTED, 0x400);
  // bits 4-5 of dev_cap_ext_flags_2: 0x10 means HOST_MSN_TABLE
  t.equal((0x10 >> REQ_RETRANSMISSION_SUPPORT_SHIFT) & REQ_RETRANSMISSION_SUPPORT_MASK,
    ReqRetransmissionSupport.HOST_MSN_TABLE);
  t.equal(ReqRetransmissionSupport.HOST_PSN_TABLE, 0);
});
