import t from 'tap';
import {
  CqBase, CqReq, CqResRc, CqTerminal, CqCutoff, CqeType, CqReqStatus, CqResRcStatus, CqResRcFlags,
  cqeTypeName, cqReqStatusName, cqResRcStatusName,
  CQE_BYTES, CQ_TERMINAL_NO_INDEX,
} from '../firmware-hwrm/roce/cqe.ts';
import {
  CQ_BASE_TOGGLE_WORD, cqBaseToggle, cqBaseCqeType, cqBaseStatus, cqBaseToggleOf, cqBaseCqeTypeOf, cqBaseStatusOf,
  cqReqPush, cqReqQpHandleLo, cqReqSqConsIdx, cqResRcFlags, cqResRcFlagsOf, cqResRcSrqOrRqWrId, cqResRcLength,
  cqResRcImmDataOrInvRKey, cqResRcQpHandleLo, cqResRcMrHandleHi, cqTerminalSqConsIdx, cqTerminalRqConsIdx,
  cqCutoffResizeToggleOf, CQ_TERMINAL_SQ_CONS_IDX_WORD, CQ_TERMINAL_RQ_CONS_IDX_WORD, CQ_TERMINAL_RQ_CONS_IDX_SHIFT,
} from '../firmware-hwrm/roce/cqe.g.ts';
import { wire, seq } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from the offsets of roce_hsi.h's cq_* structs.

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
  const values = {
    qp_handle: 0x0706_0504_0302_0100n, sq_cons_idx: 0x0908, toggle: 1, cqe_type: CqeType.REQ, push: 1,
    status: CqReqStatus.TRANSPORT_RETRY_CNT_ERR,
  };
  t.equal(CqReq.size, 32);
  t.strictSame([...CqReq.encode(values)], REQ_FIXTURE);
  t.strictSame(CqReq.decode(Uint8Array.from(REQ_FIXTURE)), values);
  t.strictSame(CqBase.decode(Uint8Array.from(REQ_FIXTURE)), { toggle: 1, cqe_type: 0, status: 0x0a });
});

t.test('responder RC CQE', async (t) => {
  const values = {
    length: 0x0302_0100, imm_data_or_inv_r_key: 0x0706_0504, qp_handle: 0x0f0e_0d0c_0b0a_0908n,
    mr_handle: 0x1716_1514_1312_1110n, toggle: 0, cqe_type: CqeType.RES_RC, status: CqResRcStatus.LOCAL_LENGTH_ERR,
    flags: CqResRcFlags.IMM | CqResRcFlags.RDMA,
    srq_or_rq_wr_id: 0xa_bcde,
  };
  t.strictSame([...CqResRc.encode(values)], RES_RC_FIXTURE);
  t.strictSame(CqResRc.decode(Uint8Array.from(RES_RC_FIXTURE)), values);
});

t.test('TERMINAL and CUT_OFF CQEs', async (t) => {
  const term = {
    qp_handle: 0x0706_0504_0302_0100n, sq_cons_idx: 0x0908, rq_cons_idx: 0xffff, toggle: 1, cqe_type: CqeType.TERMINAL,
    status: 0,
  };
  const termFixture = wire(32, [0, ...seq(0x00, 8)], [8, 0x08, 0x09, 0xff, 0xff], [24, 0x1d]); // 0xE << 1 | 1
  t.strictSame([...CqTerminal.encode(term)], termFixture);
  t.strictSame(CqTerminal.decode(Uint8Array.from(termFixture)), term);

  const cut = { toggle: 1, cqe_type: CqeType.CUT_OFF, resize_toggle: 2, status: 0 };
  const cutFixture = wire(32, [24, 0x5f]); // 1 | 0xF << 1 | 2 << 5
  t.strictSame([...CqCutoff.encode(cut)], cutFixture);
  t.strictSame(CqCutoff.decode(Uint8Array.from(cutFixture)), cut);
});

t.test('hot path: the word accessors read the hand fixtures', async (t) => {
  const req = new Uint32Array(Uint8Array.from(REQ_FIXTURE).buffer);
  t.equal(CQE_BYTES, 32);
  t.equal(cqBaseToggle(req, 0), 1);
  t.equal(cqBaseCqeType(req, 0), CqeType.REQ);
  t.equal(cqReqPush(req, 0), 1, 'PUSH: bit 5 of byte 24');
  t.equal(cqBaseStatus(req, 0), 0x0a);
  t.equal(cqReqQpHandleLo(req, 0), 0x0302_0100);
  t.equal(cqReqSqConsIdx(req, 0), 0x0908);

  const res = new Uint32Array(Uint8Array.from(RES_RC_FIXTURE).buffer);
  const trailer = res[CQ_BASE_TOGGLE_WORD]!;
  t.equal(CQ_BASE_TOGGLE_WORD, 6, 'the trailer is the u32 at byte 24');
  t.equal(cqBaseToggleOf(trailer), 0);
  t.equal(cqBaseCqeTypeOf(trailer), CqeType.RES_RC);
  t.equal(cqBaseStatusOf(trailer), 2);
  t.equal(cqResRcFlagsOf(trailer), 0x0a);
  t.equal(cqResRcFlags(res, 0), 0x0a);
  t.equal(cqResRcSrqOrRqWrId(res, 0), 0xa_bcde);
  t.equal(cqResRcLength(res, 0), 0x0302_0100);
  t.equal(cqResRcImmDataOrInvRKey(res, 0), 0x0706_0504);
  t.equal(cqResRcQpHandleLo(res, 0), 0x0b0a_0908);
  t.equal(cqResRcMrHandleHi(res, 0), 0x1716_1514);

  t.equal(CQ_TERMINAL_SQ_CONS_IDX_WORD * 4, 8);
  t.equal(CQ_TERMINAL_RQ_CONS_IDX_WORD * 4 + CQ_TERMINAL_RQ_CONS_IDX_SHIFT / 8, 10);
  const term = new Uint32Array(8);
  term[2] = 0x0302_0100;
  t.equal(cqTerminalSqConsIdx(term, 0), 0x0100);
  t.equal(cqTerminalRqConsIdx(term, 0), 0x0302);
  t.equal(CQ_TERMINAL_NO_INDEX, 0xffff);
  t.equal(cqCutoffResizeToggleOf(0x5f), 2);
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
