import t from 'tap';
import {
  FuncResetInput, FuncResetOutput, FuncQcapsInput, FuncQcapsOutput, FuncQcfgInput, FuncQcfgOutput,
  FuncResourceQcapsInput, FuncResourceQcapsOutput,
  FUNC_QCAPS_RESP_FLAGS, FUNC_QCAPS_RESP_FLAGS_EXT, FUNC_QCAPS_RESP_FLAGS_EXT3, FUNC_QCFG_RESP_FLAGS,
  FUNC_RESET_REQ_FUNC_RESET_LEVEL, HWRM_FID_SELF,
} from '../firmware-hwrm/hwrm/index.ts';
import { seq, zeros, seqBytes, REQ_HDR, REQ_HDR_BYTES, RESP_HDR } from './helpers/hwrm-fixtures.ts';

// Fixtures follow hsi.h hwrm_func_reset/qcaps/qcfg/cfg in the offset-per-byte pattern of helpers/hwrm-fixtures.ts.

/** A 16-byte response with nothing but the header and valid at 15. */
const BARE_RESPONSE_BYTES = [...seq(0, 7), ...zeros(7), 0x0f];

t.test('hwrm_func_reset_input (24): enables @16, vf_id @20, func_reset_level @22', async (t) => {
  const values = { ...REQ_HDR, enables: 0x13121110, vf_id: 0x1514, func_reset_level: 0x16 };
  const want = [...REQ_HDR_BYTES, ...seq(0x10, 0x16), 0];
  t.same([...FuncResetInput.encode(values)], want);
  t.strictSame(FuncResetInput.decode(Uint8Array.from(want)), values);
});

t.test('hwrm_func_reset_output (16): valid @15', async (t) => {
  const values = { ...RESP_HDR, valid: 0x0f };
  t.same([...FuncResetOutput.encode(values)], BARE_RESPONSE_BYTES);
  t.strictSame(FuncResetOutput.decode(Uint8Array.from(BARE_RESPONSE_BYTES)), values);
});

t.test('FUNC_RESET as both drivers send it: level RESETALL, everything else zero', async (t) => {
  const got = FuncResetInput.encode({
    req_type: 0x11, cmpl_ring: 0xffff, seq_id: 1, target_id: 0xffff, resp_addr: 0x1000,
    func_reset_level: FUNC_RESET_REQ_FUNC_RESET_LEVEL.RESETALL,
  });
  t.same([...got], [
    0x11, 0x00, 0xff, 0xff, 0x01, 0x00, 0xff, 0xff,
    0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  ]);
});

t.test('fid requests (24): fid @16, 6 unused bytes', async (t) => {
  for (const L of [FuncQcapsInput, FuncQcfgInput, FuncResourceQcapsInput]) {
    const values = { ...REQ_HDR, fid: 0x1110 };
    const want = [...REQ_HDR_BYTES, 0x10, 0x11, ...zeros(6)];
    t.equal(L.size, 24, L.name);
    t.same([...L.encode(values)], want, L.name);
    t.strictSame(L.decode(Uint8Array.from(want)), values, L.name);
  }
  t.same([...FuncQcapsInput.encode({ fid: HWRM_FID_SELF }).subarray(16)], [0xff, 0xff, 0, 0, 0, 0, 0, 0]);
});

t.test('hwrm_func_qcaps_output (144): every field at its documented offset', async (t) => {
  const values = {
    ...RESP_HDR,
    fid: 0x0908, port_id: 0x0b0a, flags: 0x0f0e0d0c, mac_address: seqBytes(0x10, 6),
    max_rsscos_ctx: 0x1716, max_cmpl_rings: 0x1918, max_tx_rings: 0x1b1a, max_rx_rings: 0x1d1c, max_l2_ctxs: 0x1f1e,
    max_vnics: 0x2120, first_vf_id: 0x2322, max_vfs: 0x2524, max_stat_ctx: 0x2726,
    max_encap_records: 0x2b2a2928, max_decap_records: 0x2f2e2d2c, max_tx_em_flows: 0x33323130,
    max_tx_wm_flows: 0x37363534, max_rx_em_flows: 0x3b3a3938, max_rx_wm_flows: 0x3f3e3d3c,
    max_mcast_filters: 0x43424140, max_flow_id: 0x47464544, max_hw_ring_grps: 0x4b4a4948, max_sp_tx_rings: 0x4d4c,
    max_msix_vfs: 0x4f4e, flags_ext: 0x53525150, max_schqs: 0x54, mpc_chnls_cap: 0x55, max_key_ctxs_alloc: 0x5756,
    flags_ext2: 0x5b5a5958, tunnel_disable_flag: 0x5d5c, xid_partition_cap: 0x5f5e,
    device_serial_number: seqBytes(0x60, 8), ctxs_per_partition: 0x6968, max_tso_segs: 0x6b6a,
    roce_vf_max_av: 0x6f6e6d6c, roce_vf_max_cq: 0x73727170, roce_vf_max_mrw: 0x77767574, roce_vf_max_qp: 0x7b7a7978,
    roce_vf_max_srq: 0x7f7e7d7c, roce_vf_max_gid: 0x83828180, flags_ext3: 0x87868584,
    max_roce_vfs: 0x8988, max_crypto_rx_flow_filters: 0x8b8a, valid: 0x8f,
  };
  const want = [...seq(0, 0x8b), 0, 0, 0, 0x8f]; // unused_3 at 140..142
  t.equal(FuncQcapsOutput.size, 144);
  t.same([...FuncQcapsOutput.encode(values)], want);
  t.strictSame(FuncQcapsOutput.decode(Uint8Array.from(want)), values);
});

t.test('decodes a RoCE-capable P5 PF FUNC_QCAPS answer written out by hand', async (t) => {
  const b = new Uint8Array(144);
  b.set([0x00, 0x00, 0x15, 0x00, 0x02, 0x00, 0x90, 0x00], 0);
  b.set([0x00, 0x00, 0x01, 0x00], 8); // fid 0, port_id 1
  b.set([0x18, 0x00, 0x10, 0x00], 12); // flags ROCE_V1 | ROCE_V2 | WCB_PUSH_MODE
  b.set([0x00, 0x0a, 0xf7, 0x12, 0x34, 0x56], 16); // MAC 00:0a:f7:12:34:56
  b.set([0x40, 0x00], 24); // max_cmpl_rings 64
  b.set([0x00, 0x02], 38); // max_stat_ctx 512
  b.set([0x00, 0x00, 0x00, 0x04], 80); // flags_ext BS_V2_SUPPORTED
  b.set([0x00, 0x02, 0x00, 0x00], 132); // flags_ext3 MULTI_L2_DB_SUPPORTED
  b[143] = 1;
  const r = FuncQcapsOutput.decode(b);
  t.equal(r.req_type, 0x15);
  t.equal(r.port_id, 1);
  t.ok(r.flags & FUNC_QCAPS_RESP_FLAGS.ROCE_V2_SUPPORTED);
  t.ok(r.flags & FUNC_QCAPS_RESP_FLAGS.ROCE_V1_SUPPORTED);
  t.ok(r.flags & FUNC_QCAPS_RESP_FLAGS.WCB_PUSH_MODE);
  t.same([...r.mac_address], [0x00, 0x0a, 0xf7, 0x12, 0x34, 0x56]);
  t.equal(r.max_cmpl_rings, 64);
  t.equal(r.max_stat_ctx, 512);
  t.equal(r.flags_ext, FUNC_QCAPS_RESP_FLAGS_EXT.BS_V2_SUPPORTED);
  t.equal(r.flags_ext3, FUNC_QCAPS_RESP_FLAGS_EXT3.MULTI_L2_DB_SUPPORTED);
  t.equal(r.valid, 1);
});

t.test('FUNC_QCAPS flag values of 3.5', async (t) => {
  t.equal(FUNC_QCAPS_RESP_FLAGS.ROCE_V1_SUPPORTED, 0x8);
  t.equal(FUNC_QCAPS_RESP_FLAGS.ROCE_V2_SUPPORTED, 0x10);
  t.equal(FUNC_QCAPS_RESP_FLAGS.HOT_RESET_CAPABLE, 0x400000);
  t.equal(FUNC_QCAPS_RESP_FLAGS.DBG_QCAPS_CMD_SUPPORTED, 0x80000000);
  t.equal(FUNC_QCAPS_RESP_FLAGS_EXT.BS_V2_SUPPORTED, 0x4000000);
  t.equal(FUNC_QCAPS_RESP_FLAGS_EXT.BS_V2_REQUIRED, 0x8000000);
  t.equal(FUNC_QCAPS_RESP_FLAGS_EXT3.REQUIRE_L2_FILTER, 0x2);
});

t.test('hwrm_func_qcfg_output (176): every field at its documented offset', async (t) => {
  const values = {
    ...RESP_HDR,
    fid: 0x0908, port_id: 0x0b0a, vlan: 0x0d0c, flags: 0x0f0e, mac_address: seqBytes(0x10, 6), pci_id: 0x1716,
    alloc_rsscos_ctx: 0x1918, alloc_cmpl_rings: 0x1b1a, alloc_tx_rings: 0x1d1c, alloc_rx_rings: 0x1f1e,
    alloc_l2_ctx: 0x2120, alloc_vnics: 0x2322, admin_mtu: 0x2524, mru: 0x2726, stat_ctx_id: 0x2928,
    port_partition_type: 0x2a, port_pf_cnt: 0x2b, dflt_vnic_id: 0x2d2c, max_mtu_configured: 0x2f2e,
    min_bw: 0x33323130, max_bw: 0x37363534, evb_mode: 0x38, options: 0x39, alloc_vfs: 0x3b3a,
    alloc_mcast_filters: 0x3f3e3d3c, alloc_hw_ring_grps: 0x43424140, alloc_sp_tx_rings: 0x4544, alloc_stat_ctx: 0x4746,
    alloc_msix: 0x4948, registered_vfs: 0x4b4a, l2_doorbell_bar_size_kb: 0x4d4c, active_endpoints: 0x4e, always_1: 0x4f,
    reset_addr_poll: 0x53525150, legacy_l2_db_size_kb: 0x5554, svif_info: 0x5756, mpc_chnls: 0x58, db_page_size: 0x59,
    roce_vnic_id: 0x5b5a, partition_min_bw: 0x5f5e5d5c, partition_max_bw: 0x63626160, host_mtu: 0x6564,
    flags2: 0x6766, stag_vid: 0x6968, port_kdnet_mode: 0x6a, kdnet_pcie_function: 0x6b, port_kdnet_fid: 0x6d6c,
    roce_bidi_opt_mode: 0x6f, num_ktls_tx_key_ctxs: 0x73727170, num_ktls_rx_key_ctxs: 0x77767574,
    lag_id: 0x78, parif: 0x79, fw_lag_id: 0x7a, num_quic_tx_key_ctxs: 0x7f7e7d7c, num_quic_rx_key_ctxs: 0x83828180,
    roce_max_av_per_vf: 0x87868584, roce_max_cq_per_vf: 0x8b8a8988, roce_max_mrw_per_vf: 0x8f8e8d8c,
    roce_max_qp_per_vf: 0x93929190, roce_max_srq_per_vf: 0x97969594, roce_max_gid_per_vf: 0x9b9a9998,
    xid_partition_cfg: 0x9d9c, mirror_vnic_id: 0x9f9e, max_link_width: 0xa0, max_link_speed: 0xa1,
    negotiated_link_width: 0xa2, negotiated_link_speed: 0xa3, pcie_compliance: 0xa6, l2_db_multi_page_size_kb: 0xa9a8,
    valid: 0xaf,
  };
  // unused_5 @110, unused_6 @123, unused_7 @164..165, unused_8 @167, unused_9 @170..174.
  const want = [...seq(0, 109), 0, ...seq(111, 122), 0, ...seq(124, 163), 0, 0, 0xa6, 0, 0xa8, 0xa9, ...zeros(5), 0xaf];
  t.equal(FuncQcfgOutput.size, 176);
  t.equal(want.length, 176);
  t.same([...FuncQcfgOutput.encode(values)], want);
  t.strictSame(FuncQcfgOutput.decode(Uint8Array.from(want)), values);
});

t.test('decodes the FUNC_QCFG doorbell fields bnxt_re reads', async (t) => {
  const b = new Uint8Array(176);
  b.set([0x00, 0x00, 0x16, 0x00, 0x03, 0x00, 0xb0, 0x00], 0);
  b.set([0x02, 0x02, 0xf2, 0x3c, 0x77, 0x88], 16); // MAC 02:02:f2:3c:77:88
  b.set([0xdc, 0x05], 36); // admin_mtu 1500
  b.set([0x00, 0x01], 76); // l2_doorbell_bar_size_kb 256
  b[79] = 1; // always_1
  b.set([0x40, 0x00], 84); // legacy_l2_db_size_kb 64
  b[89] = 0; // db_page_size 4 KB
  b.set([0x00, 0x80], 14); // flags ROCE_VNIC_ID_VALID
  b.set([0x05, 0x00], 90); // roce_vnic_id 5
  b[175] = 1;
  const r = FuncQcfgOutput.decode(b);
  t.equal(r.admin_mtu, 1500);
  t.equal(r.l2_doorbell_bar_size_kb * 1024, 0x40000);
  t.equal(r.legacy_l2_db_size_kb * 1024, 0x10000);
  t.equal(r.db_page_size, 0);
  t.ok(r.flags & FUNC_QCFG_RESP_FLAGS.ROCE_VNIC_ID_VALID);
  t.equal(r.roce_vnic_id, 5);
  t.same([...r.mac_address], [0x02, 0x02, 0xf2, 0x3c, 0x77, 0x88]);
});

t.test('a DPDK-style 160-byte FUNC_QCFG answer decodes; the kernel-only tail reads zero', async (t) => {
  const b = new Uint8Array(170);
  b.set([0x00, 0x00, 0x16, 0x00, 0x03, 0x00, 0xaa, 0x00], 0); // resp_len 170
  b.set([0x00, 0x01], 76);
  b[169] = 1; // DPDK's valid position
  const r = FuncQcfgOutput.decode(b);
  t.equal(r.resp_len, 170);
  t.equal(r.l2_doorbell_bar_size_kb, 256);
  t.equal(r.valid, 0);
});

t.test('hwrm_func_resource_qcaps_output (88): every field at its documented offset', async (t) => {
  const values = {
    ...RESP_HDR,
    max_vfs: 0x0908, max_msix: 0x0b0a, vf_reservation_strategy: 0x0d0c,
    min_rsscos_ctx: 0x0f0e, max_rsscos_ctx: 0x1110, min_cmpl_rings: 0x1312, max_cmpl_rings: 0x1514,
    min_tx_rings: 0x1716, max_tx_rings: 0x1918, min_rx_rings: 0x1b1a, max_rx_rings: 0x1d1c,
    min_l2_ctxs: 0x1f1e, max_l2_ctxs: 0x2120, min_vnics: 0x2322, max_vnics: 0x2524,
    min_stat_ctx: 0x2726, max_stat_ctx: 0x2928, min_hw_ring_grps: 0x2b2a, max_hw_ring_grps: 0x2d2c,
    max_tx_scheduler_inputs: 0x2f2e, flags: 0x3130, min_msix: 0x3332,
    min_ktls_tx_key_ctxs: 0x37363534, max_ktls_tx_key_ctxs: 0x3b3a3938, min_ktls_rx_key_ctxs: 0x3f3e3d3c,
    max_ktls_rx_key_ctxs: 0x43424140, min_quic_tx_key_ctxs: 0x47464544, max_quic_tx_key_ctxs: 0x4b4a4948,
    min_quic_rx_key_ctxs: 0x4f4e4d4c, max_quic_rx_key_ctxs: 0x53525150, valid: 0x57,
  };
  const want = [...seq(0, 0x53), 0, 0, 0, 0x57];
  t.equal(FuncResourceQcapsOutput.size, 88);
  t.same([...FuncResourceQcapsOutput.encode(values)], want);
  t.strictSame(FuncResourceQcapsOutput.decode(Uint8Array.from(want)), values);
});
