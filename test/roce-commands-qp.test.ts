import t from 'tap';
import {
  CmdqCreateQp, CreqCreateQpResp, CmdqDestroyQp, CreqDestroyQpResp, CmdqModifyQp, CreqModifyQpResp,
  CmdqQueryQp, CreqQueryQpResp, CreqQueryQpRespSb, CreateQpFlags, QpType, ModifyQpMask, RcTransitionMask,
  ModifyQpExtMask, QpState, qpStateName, QpAccess, NetworkType, PathMtu, pathMtuCode, pathMtuBytes, orrqSlots,
  irrqSlots,
} from '../firmware-hwrm/roce/commands-qp.ts';
import { wire, seq, base, baseRows, resp, respRows } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from roce_hsi.h cmdq_create_qp, cmdq_modify_qp, cmdq_query_qp,
// creq_query_qp_resp_sb.

t.test('CREATE_QP: 104 bytes', async (t) => {
  const values = {
    ...base(0x01, 7),
    qp_handle: 0x1716_1514_1312_1110n,
    qp_flags: 0x1b1a_1918,
    type: QpType.RC,
    sq_lvl: 2, sq_pg_size: 3,
    rq_lvl: 1, rq_pg_size: 5,
    dpi: 0x2322_2120,
    sq_size: 0x2726_2524,
    rq_size: 0x2b2a_2928,
    sq_sge: 6, sq_fwo: 0xabc,
    rq_sge: 5, rq_fwo: 0x123,
    scq_cid: 0x3332_3130,
    rcq_cid: 0x3736_3534,
    srq_cid: 0x3b3a_3938,
    pd_id: 0x3f3e_3d3c,
    sq_pbl: 0x0f_4544_4342_4140,
    rq_pbl: 0x0f_4d4c_4b4a_4948,
    irrq_addr: 0x0f_5554_5352_5150,
    orrq_addr: 0x0f_5d5c_5b5a_5958,
    request_xid: 0x6362_6160,
    steering_tag: 0x6564,
  };
  const fixture = wire(104, ...baseRows(0x01, 7),
    [16, ...seq(0x10, 8)],
    [24, ...seq(0x18, 4)],
    [28, 0x02, 0x32, 0x51], // type RC; level in bits 0-3, page-size code in bits 4-7
    [32, ...seq(0x20, 4)],
    [36, ...seq(0x24, 4)],
    [40, ...seq(0x28, 4)],
    [44, 0xc6, 0xab], // sq_sge 6 in bits 0-3, sq_fwo 0xABC in bits 4-15
    [46, 0x35, 0x12],
    [48, ...seq(0x30, 4)],
    [52, ...seq(0x34, 4)],
    [56, ...seq(0x38, 4)],
    [60, ...seq(0x3c, 4)],
    [64, ...seq(0x40, 6), 0x0f, 0x00],
    [72, ...seq(0x48, 6), 0x0f, 0x00],
    [80, ...seq(0x50, 6), 0x0f, 0x00],
    [88, ...seq(0x58, 6), 0x0f, 0x00],
    [96, ...seq(0x60, 4)],
    [100, 0x64, 0x65],
  );
  t.equal(CmdqCreateQp.size, 104);
  t.strictSame([...CmdqCreateQp.encode(values)], fixture);
  t.strictSame(CmdqCreateQp.decode(Uint8Array.from(fixture)), values);
});

t.test('CREATE_QP response: QP number in xid, optimized_transmit_enabled at 10', async (t) => {
  const values = { ...resp(0x01), xid: 0x000a_bcde, optimized_transmit_enabled: 1 };
  const fixture = wire(16, ...respRows(0x01), [4, 0xde, 0xbc, 0x0a, 0x00], [10, 0x01]);
  t.strictSame([...CreqCreateQpResp.encode(values)], fixture);
  t.strictSame(CreqCreateQpResp.decode(Uint8Array.from(fixture)), values);
});

t.test('DESTROY_QP: qp_cid at 16, 24 bytes', async (t) => {
  const values = { ...base(0x02, 2), qp_cid: 0x1312_1110 };
  const fixture = wire(24, ...baseRows(0x02, 2), [16, ...seq(0x10, 4)]);
  t.strictSame([...CmdqDestroyQp.encode(values)], fixture);
  t.strictSame(CmdqDestroyQp.decode(Uint8Array.from(fixture)), values);
  const r = { ...resp(0x02), xid: 0x45 };
  const rFixture = wire(16, ...respRows(0x02), [4, 0x45]);
  t.strictSame([...CreqDestroyQpResp.encode(r)], rFixture);
  t.strictSame(CreqDestroyQpResp.decode(Uint8Array.from(rFixture)), r);
});

/** MODIFY_QP with every field set, and its 144 bytes written by hand from roce_hsi.h's cmdq_modify_qp. */
const MODIFY_QP = {
  ...base(0x03, 9),
  qp_type: QpType.RC,
  modify_mask: RcTransitionMask.INIT_TO_RTR,
  qp_cid: 0x1716_1514,
  new_state: QpState.RTR, en_sqd_async_notify: 1, network_type: NetworkType.ROCEV2_IPV4,
  access: 0x07,
  pkey: 0x1b1a,
  qkey: 0x1f1e_1d1c,
  dgid: Uint8Array.from(seq(0x20, 16)),
  flow_label: 0x3332_3130,
  sgid_index: 0x3534,
  hop_limit: 0x36,
  traffic_class: 0x37,
  dest_mac: Uint8Array.from(seq(0x38, 6)),
  tos_ecn: 2, tos_dscp: 0x2e,
  pingpong_push_enable: 1, path_mtu: PathMtu.MTU_4096,
  timeout: 0x40, retry_cnt: 0x41, rnr_retry: 0x42, min_rnr_timer: 0x43,
  rq_psn: 0x4746_4544,
  sq_psn: 0x4b4a_4948,
  max_rd_atomic: 0x4c, max_dest_rd_atomic: 0x4d,
  enable_cc: 1,
  sq_size: 0x5352_5150,
  rq_size: 0x5756_5554,
  sq_sge: 0x5958, rq_sge: 0x5b5a,
  max_inline_data: 0x5f5e_5d5c,
  dest_qp_id: 0x6362_6160,
  pingpong_push_dpi: 0x6766_6564,
  src_mac: Uint8Array.from(seq(0x68, 6)),
  vlan_id: 0xabc, vlan_dei: 1, vlan_pcp: 5,
  irrq_addr: 0x0f_7574_7372_7170,
  orrq_addr: 0x0f_7d7c_7b7a_7978,
  ext_modify_mask: 0x8382_8180,
  ext_stats_ctx_id: 0x8786_8584,
  schq_id: 0x8988,
  rate_limit: 0x8f8e_8d8c,
};
const MODIFY_QP_FIXTURE = wire(144, ...baseRows(0x03, 9),
  [7, 0x02],
  [16, 0xe1, 0x17, 0x15, 0x14],
  [20, ...seq(0x14, 4)],
  [24, 0x92], // state 2 | EN_SQD_ASYNC_NOTIFY 0x10 | network type 2 << 6
  [25, 0x07],
  [26, 0x1a, 0x1b],
  [28, ...seq(0x1c, 4)],
  [32, ...seq(0x20, 16)], // dgid, natural order
  [48, ...seq(0x30, 4)],
  [52, 0x34, 0x35],
  [54, 0x36, 0x37],
  [56, ...seq(0x38, 6)],
  [62, 0xba], // ECN 2 in bits 0-1, DSCP 0x2E in bits 2-7
  [63, 0x41], // pingpong bit 0, MTU code 4 in bits 4-7
  [64, 0x40, 0x41, 0x42, 0x43],
  [68, ...seq(0x44, 4)],
  [72, ...seq(0x48, 4)],
  [76, 0x4c, 0x4d],
  [78, 0x01, 0x00],
  [80, ...seq(0x50, 4)],
  [84, ...seq(0x54, 4)],
  [88, 0x58, 0x59, 0x5a, 0x5b],
  [92, ...seq(0x5c, 4)],
  [96, ...seq(0x60, 4)],
  [100, ...seq(0x64, 4)],
  [104, ...seq(0x68, 6)],
  [110, 0xbc, 0xba], // VLAN 0xABC | DEI 0x1000 | PCP 5 << 13
  [112, ...seq(0x70, 6), 0x0f, 0x00],
  [120, ...seq(0x78, 6), 0x0f, 0x00],
  [128, ...seq(0x80, 4)],
  [132, ...seq(0x84, 4)],
  [136, 0x88, 0x89],
  [140, ...seq(0x8c, 4)],
);
t.test('MODIFY_QP: 144 bytes, qp_type in byte 7', async (t) => {
  const values = MODIFY_QP;
  const fixture = MODIFY_QP_FIXTURE;
  t.equal(CmdqModifyQp.size, 144);
  t.strictSame([...CmdqModifyQp.encode(values)], fixture);
  t.strictSame(CmdqModifyQp.decode(Uint8Array.from(fixture)), values);
});

t.test('MODIFY_QP response: push state, shaper status, lag_src_mac', async (t) => {
  const values = {
    ...resp(0x03), xid: 0x1716_1514,
    pingpong_push_enabled: 1, pingpong_push_index: 5, pingpong_push_state: 1, shaper_allocation_status: 1,
    lag_src_mac: 0x0f0e_0d0c,
  };
  const fixture = wire(16, ...respRows(0x03), [4, ...seq(0x14, 4)], [10, 0x1b, 0x01], [12, ...seq(0x0c, 4)]);
  t.strictSame([...CreqModifyQpResp.encode(values)], fixture);
  t.strictSame(CreqModifyQpResp.decode(Uint8Array.from(fixture)), values);
});

/** QUERY_QP's side buffer with every field set, and its 104 bytes by hand from creq_query_qp_resp_sb. */
const QUERY_QP_SB = {
  opcode: 0x04, status: 0x00, cookie: 0x0504, flags: 0x0706, resp_size: 7,
  xid: 0x0b0a_0908,
  state: QpState.RTS, en_sqd_async_notify: 1,
  access: 0x0d,
  pkey: 0x0f0e,
  qkey: 0x1312_1110,
  udp_src_port: 0x1514,
  dgid: Uint8Array.from(seq(0x18, 16)),
  flow_label: 0x2b2a_2928,
  sgid_index: 0x2d2c,
  hop_limit: 0x2e, traffic_class: 0x2f,
  dest_mac: Uint8Array.from(seq(0x30, 6)),
  dest_vlan_id: 0x123, path_mtu: PathMtu.MTU_2048,
  timeout: 0x38, retry_cnt: 0x39, rnr_retry: 0x3a, min_rnr_timer: 0x3b,
  rq_psn: 0x3f3e_3d3c,
  sq_psn: 0x4342_4140,
  max_rd_atomic: 0x44, max_dest_rd_atomic: 0x45,
  tos_ecn: 1, tos_dscp: 0x1a,
  enable_cc: 1,
  sq_size: 0x4b4a_4948,
  rq_size: 0x4f4e_4d4c,
  sq_sge: 0x5150, rq_sge: 0x5352,
  max_inline_data: 0x5756_5554,
  dest_qp_id: 0x5b5a_5958,
  port_id: 0x5d5c,
  stat_collection_id: 0x5f,
  src_mac: Uint8Array.from(seq(0x60, 6)),
  vlan_id: 0x456, vlan_dei: 0, vlan_pcp: 7,
};
const QUERY_QP_SB_FIXTURE = wire(104,
  [0, 0x04, 0x00, 0x04, 0x05, 0x06, 0x07, 0x07],
  [8, ...seq(0x08, 4)],
  [12, 0x13], // state 3 | EN_SQD_ASYNC_NOTIFY 0x10
  [13, 0x0d],
  [14, 0x0e, 0x0f],
  [16, ...seq(0x10, 4)],
  [20, 0x14, 0x15],
  [24, ...seq(0x18, 16)],
  [40, ...seq(0x28, 4)],
  [44, 0x2c, 0x2d, 0x2e, 0x2f],
  [48, ...seq(0x30, 6)],
  [54, 0x23, 0x31], // VLAN 0x123 in bits 0-11, MTU code 3 in bits 12-15
  [56, 0x38, 0x39, 0x3a, 0x3b],
  [60, ...seq(0x3c, 4)],
  [64, ...seq(0x40, 4)],
  [68, 0x44, 0x45],
  [70, 0x69], // ECN 1 | DSCP 0x1A << 2
  [71, 0x01],
  [72, ...seq(0x48, 4)],
  [76, ...seq(0x4c, 4)],
  [80, 0x50, 0x51, 0x52, 0x53],
  [84, ...seq(0x54, 4)],
  [88, ...seq(0x58, 4)],
  [92, 0x5c, 0x5d],
  [95, 0x5f],
  [96, ...seq(0x60, 6)],
  [102, 0x56, 0xe4], // VLAN 0x456 | PCP 7 << 13
);
t.test('QUERY_QP: command, response with side-buffer size, 104-byte side buffer', async (t) => {
  const values = { ...base(0x04, 2), qp_cid: 0x1312_1110 };
  const fixture = wire(24, ...baseRows(0x04, 2), [16, ...seq(0x10, 4)]);
  t.strictSame([...CmdqQueryQp.encode(values)], fixture);
  t.strictSame(CmdqQueryQp.decode(Uint8Array.from(fixture)), values);

  const r = { ...resp(0x04), size: 104 };
  const rFixture = wire(16, ...respRows(0x04), [4, 0x68]);
  t.strictSame([...CreqQueryQpResp.encode(r)], rFixture);
  t.strictSame(CreqQueryQpResp.decode(Uint8Array.from(rFixture)), r);

  const sb = QUERY_QP_SB;
  const sbFixture = QUERY_QP_SB_FIXTURE;
  t.equal(CreqQueryQpRespSb.size, 104);
  t.strictSame([...CreqQueryQpRespSb.encode(sb)], sbFixture);
  t.strictSame(CreqQueryQpRespSb.decode(Uint8Array.from(sbFixture)), sb);
});

t.test('CREATE_QP flags, QP type, states, access, network type', async (t) => {
  t.strictSame(CreateQpFlags, {
    SRQ_USED: 0x1, FORCE_COMPLETION: 0x2, RESERVED_LKEY_ENABLE: 0x4, FR_PMR_ENABLED: 0x8,
    VARIABLE_SIZED_WQE_ENABLED: 0x10, OPTIMIZED_TRANSMIT_ENABLED: 0x20, RESPONDER_UD_CQE_WITH_CFA: 0x40,
    EXT_STATS_ENABLED: 0x80, EXPRESS_MODE_ENABLED: 0x100, STEERING_TAG_VALID: 0x200, RDMA_READ_OR_ATOMICS_USED: 0x400,
  });
  t.strictSame(QpType, { RC: 2, UD: 4, RAW_ETHERTYPE: 6, GSI: 7 });
  t.strictSame(QpState, { RESET: 0, INIT: 1, RTR: 2, RTS: 3, SQD: 4, SQE: 5, ERR: 6 });
  t.equal(qpStateName(3), 'RTS');
  t.equal(qpStateName(7), 'UNKNOWN(0x7)');
  t.strictSame(QpAccess, { LOCAL_WRITE: 1, REMOTE_WRITE: 2, REMOTE_READ: 4, REMOTE_ATOMIC: 8 });
  t.strictSame(NetworkType, { ROCEV1: 0, ROCEV2_IPV4: 2, ROCEV2_IPV6: 3 });
  t.strictSame(ModifyQpExtMask, { EXT_STATS_CTX: 1, SCHQ_ID_VALID: 2, RATE_LIMIT_VALID: 8 });
});

t.test('modify-mask bits and the kernel RC transition masks', async (t) => {
  const bits = [
    'STATE', 'EN_SQD_ASYNC_NOTIFY', 'ACCESS', 'PKEY', 'QKEY', 'DGID', 'FLOW_LABEL', 'SGID_INDEX', 'HOP_LIMIT',
    'TRAFFIC_CLASS', 'DEST_MAC', 'PINGPONG_PUSH_MODE', 'PATH_MTU', 'TIMEOUT', 'RETRY_CNT', 'RNR_RETRY', 'RQ_PSN',
    'MAX_RD_ATOMIC', 'MIN_RNR_TIMER', 'SQ_PSN', 'MAX_DEST_RD_ATOMIC', 'SQ_SIZE', 'RQ_SIZE', 'SQ_SGE', 'RQ_SGE',
    'MAX_INLINE_DATA', 'DEST_QP_ID', 'SRC_MAC', 'VLAN_ID', 'ENABLE_CC', 'TOS_ECN', 'TOS_DSCP',
  ] as const;
  bits.forEach((name, bit) => t.equal(ModifyQpMask[name], 2 ** bit, name));
  const M = ModifyQpMask;
  t.equal(RcTransitionMask.RESET_TO_INIT, M.STATE | M.ACCESS | M.PKEY);
  t.equal(RcTransitionMask.INIT_TO_RTR, (M.STATE | M.DGID | M.FLOW_LABEL | M.SGID_INDEX | M.HOP_LIMIT | M.TRAFFIC_CLASS
    | M.DEST_MAC | M.PATH_MTU | M.RQ_PSN | M.MIN_RNR_TIMER | M.MAX_DEST_RD_ATOMIC | M.DEST_QP_ID | M.VLAN_ID) >>> 0);
  t.equal(RcTransitionMask.RTR_TO_RTS, M.STATE | M.TIMEOUT | M.RETRY_CNT | M.RNR_RETRY | M.MAX_RD_ATOMIC | M.SQ_PSN);
  t.equal(RcTransitionMask.TO_ERR, M.STATE);
});

t.test('path MTU encoding and ORRQ/IRRQ slot counts', async (t) => {
  t.equal(pathMtuCode(256), 0);
  t.equal(pathMtuCode(1024), 2);
  t.equal(pathMtuCode(4096), 4);
  t.equal(pathMtuCode(8192), 5);
  t.equal(pathMtuBytes(3), 2048);
  t.throws(() => pathMtuCode(1500), RangeError);
  t.throws(() => pathMtuBytes(6), RangeError);
  t.equal(orrqSlots(126), 127);
  t.equal(irrqSlots(126), 254);
  t.equal(irrqSlots(1), 4);
});
