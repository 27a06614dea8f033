import t from 'tap';
import {
  CqBase, CqReq, CqResRc, CqTerminal, CqCutoff, CqeType, CqReqStatus, CqResRcStatus, CqResRcFlags,
  cqeTypeName, cqReqStatusName, cqResRcStatusName,
  CQE_BYTES, CQE_TYPE_TOGGLE_OFFSET, CQE_TOGGLE_MASK, CQE_TYPE_SHIFT, CQE_TYPE_MASK, CQE_STATUS_OFFSET, CQE_FLAGS_OFFSET,
  CQE_WR_ID_OFFSET, CQE_WR_ID_MASK, CQE_TRAILER_WORD, CQE_TRAILER_STATUS_SHIFT, CQE_TRAILER_STATUS_MASK,
  CQE_TRAILER_FLAGS_SHIFT, CQE_TRAILER_FLAGS_MASK, CQ_REQ_QP_HANDLE_OFFSET, CQ_REQ_SQ_CONS_IDX_OFFSET, CQ_REQ_PUSH,
  CQ_RES_RC_LENGTH_OFFSET, CQ_RES_RC_IMM_DATA_OR_INV_R_KEY_OFFSET, CQ_RES_RC_QP_HANDLE_OFFSET, CQ_RES_RC_MR_HANDLE_OFFSET,
  CQ_TERMINAL_SQ_CONS_IDX_OFFSET, CQ_TERMINAL_RQ_CONS_IDX_OFFSET, CQ_TERMINAL_NO_INDEX,
  CQ_CUTOFF_RESIZE_TOGGLE_SHIFT, CQ_CUTOFF_RESIZE_TOGGLE_MASK,
} from '../firmware-hwrm/roce/cqe.ts';
import { wire, seq } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from bnxt-roce-interface.md §6.2–§6.5.

const REQ_FIXTURE = wire(32,
  [0, ...seq(0x00, 8)],   // qp_handle
  [8, 0x08, 0x09],        // sq_cons_idx
  [24, 0x21, 0x0a],       // toggle 1 | type REQ (0) << 1 | PUSH 0x20; status TRANSPORT_RETRY_CNT_ERR
);
const RES_RC_FIXTURE = wire(32,
  [0, ...seq(0x00, 24)],      // length, imm, qp_handle, mr_handle
  [24, 0x02, 0x02, 0x0a, 0x00], // toggle 0 | RES_RC << 1; LOCAL_LENGTH_ERR; flags IMM | RDMA
  [28, 0xde, 0xbc, 0x0a, 0x00], // wr_id 0xABCDE
);

t.test('requester CQE', async (t) => {
  const values = { qp_handle: 0x0706_0504_0302_0100n, sq_cons_idx: 0x0908, toggle: 1, cqe_type: CqeType.REQ, push: 1, status: CqReqStatus.TRANSPORT_RETRY_CNT_ERR };
  t.equal(CqReq.size, 32);
  t.strictSame([...CqReq.encode(values)], REQ_FIXTURE);
  t.strictSame(CqReq.decode(Uint8Array.from(REQ_FIXTURE)), values);
  t.strictSame(CqBase.decode(Uint8Array.from(REQ_FIXTURE)), { toggle: 1, cqe_type: 0, status: 0x0a });
});

t.test('responder RC CQE', async (t) => {
  const values = {
    length: 0x0302_0100, imm_data_or_inv_r_key: 0x0706_0504, qp_handle: 0x0f0e_0d0c_0b0a_0908n, mr_handle: 0x1716_1514_1312_1110n,
    toggle: 0, cqe_type: CqeType.RES_RC, status: CqResRcStatus.LOCAL_LENGTH_ERR, flags: CqResRcFlags.IMM | CqResRcFlags.RDMA,
    srq_or_rq_wr_id: 0xa_bcde,
  };
  t.strictSame([...CqResRc.encode(values)], RES_RC_FIXTURE);
  t.strictSame(CqResRc.decode(Uint8Array.from(RES_RC_FIXTURE)), values);
});

t.test('TERMINAL and CUT_OFF CQEs', async (t) => {
  const term = { qp_handle: 0x0706_0504_0302_0100n, sq_cons_idx: 0x0908, rq_cons_idx: 0xffff, toggle: 1, cqe_type: CqeType.TERMINAL, status: 0 };
  const termFixture = wire(32, [0, ...seq(0x00, 8)], [8, 0x08, 0x09, 0xff, 0xff], [24, 0x1d]); // 0xE << 1 | 1
  t.strictSame([...CqTerminal.encode(term)], termFixture);
  t.strictSame(CqTerminal.decode(Uint8Array.from(termFixture)), term);

  const cut = { toggle: 1, cqe_type: CqeType.CUT_OFF, resize_toggle: 2, status: 0 };
  const cutFixture = wire(32, [24, 0x5f]); // 1 | 0xF << 1 | 2 << 5
  t.strictSame([...CqCutoff.encode(cut)], cutFixture);
  t.strictSame(CqCutoff.decode(Uint8Array.from(cutFixture)), cut);
});

t.test('hot path: the numeric constants read the hand fixtures', async (t) => {
  const req = Uint8Array.from(REQ_FIXTURE);
  const reqView = new DataView(req.buffer);
  t.equal(CQE_BYTES, 32);
  t.equal(req[CQE_TYPE_TOGGLE_OFFSET]! & CQE_TOGGLE_MASK, 1);
  t.equal((req[CQE_TYPE_TOGGLE_OFFSET]! >> CQE_TYPE_SHIFT) & CQE_TYPE_MASK, CqeType.REQ);
  t.equal(req[CQE_TYPE_TOGGLE_OFFSET]! & CQ_REQ_PUSH, 0x20);
  t.equal(req[CQE_STATUS_OFFSET], 0x0a);
  t.equal(reqView.getUint32(CQ_REQ_QP_HANDLE_OFFSET, true), 0x0302_0100);
  t.equal(reqView.getUint16(CQ_REQ_SQ_CONS_IDX_OFFSET, true), 0x0908);

  const res = Uint8Array.from(RES_RC_FIXTURE);
  const resView = new DataView(res.buffer);
  const words = new Uint32Array(res.buffer);
  const trailer = words[CQE_TRAILER_WORD]!;
  t.equal(trailer & CQE_TOGGLE_MASK, 0);
  t.equal((trailer >>> CQE_TYPE_SHIFT) & CQE_TYPE_MASK, CqeType.RES_RC);
  t.equal((trailer >>> CQE_TRAILER_STATUS_SHIFT) & CQE_TRAILER_STATUS_MASK, 2);
  t.equal((trailer >>> CQE_TRAILER_FLAGS_SHIFT) & CQE_TRAILER_FLAGS_MASK, 0x0a);
  t.equal(resView.getUint16(CQE_FLAGS_OFFSET, true), 0x0a);
  t.equal(resView.getUint32(CQE_WR_ID_OFFSET, true) & CQE_WR_ID_MASK, 0xa_bcde);
  t.equal(resView.getUint32(CQ_RES_RC_LENGTH_OFFSET, true), 0x0302_0100);
  t.equal(resView.getUint32(CQ_RES_RC_IMM_DATA_OR_INV_R_KEY_OFFSET, true), 0x0706_0504);
  t.equal(resView.getUint32(CQ_RES_RC_QP_HANDLE_OFFSET, true), 0x0b0a_0908);
  t.equal(resView.getUint32(CQ_RES_RC_MR_HANDLE_OFFSET + 4, true), 0x1716_1514);

  t.equal(CQ_TERMINAL_SQ_CONS_IDX_OFFSET, 8);
  t.equal(CQ_TERMINAL_RQ_CONS_IDX_OFFSET, 10);
  t.equal(CQ_TERMINAL_NO_INDEX, 0xffff);
  t.equal((0x5f >> CQ_CUTOFF_RESIZE_TOGGLE_SHIFT) & CQ_CUTOFF_RESIZE_TOGGLE_MASK, 2);
});

t.test('CQE types and status names', async (t) => {
  t.strictSame(CqeType, {
    REQ: 0, RES_RC: 1, RES_UD: 2, RES_RAWETH_QP1: 3, RES_UD_CFA: 4, REQ_V3: 8, RES_RC_V3: 9, RES_UD_V3: 0xa,
    RES_RAWETH_QP1_V3: 0xb, RES_UD_CFA_V3: 0xc, NO_OP: 0xd, TERMINAL: 0xe, CUT_OFF: 0xf,
  });
  t.equal(cqeTypeName(0xe), 'TERMINAL');
  t.equal(cqeTypeName(5), 'UNKNOWN(0x5)');
  const req = ['OK', 'BAD_RESPONSE_ERR', 'LOCAL_LENGTH_ERR', 'LOCAL_QP_OPERATION_ERR', 'LOCAL_PROTECTION_ERR',
    'MEMORY_MGT_OPERATION_ERR', 'REMOTE_INVALID_REQUEST_ERR', 'REMOTE_ACCESS_ERR', 'REMOTE_OPERATION_ERR',
    'RNR_NAK_RETRY_CNT_ERR', 'TRANSPORT_RETRY_CNT_ERR', 'WORK_REQUEST_FLUSHED_ERR'];
  req.forEach((name, code) => t.equal(cqReqStatusName(code), name));
  t.equal(cqReqStatusName(0xc), 'UNKNOWN(0xc)');
  const res = ['OK', 'LOCAL_ACCESS_ERROR', 'LOCAL_LENGTH_ERR', 'LOCAL_PROTECTION_ERR', 'LOCAL_QP_OPERATION_ERR',
    'MEMORY_MGT_OPERATION_ERR', 'REMOTE_INVALID_REQUEST_ERR', 'WORK_REQUEST_FLUSHED_ERR', 'HW_FLUSH_ERR'];
  res.forEach((name, code) => t.equal(cqResRcStatusName(code), name));
  t.equal(cqResRcStatusName(9), 'UNKNOWN(0x9)');
  t.strictSame(CqResRcFlags, { SRQ: 1, IMM: 2, INV: 4, RDMA: 8 });
});
