import t from 'tap';
import {
  CreqBase, CreqQpEvent, CreqQpErrorNotification, CreqCqErrorNotification, CreqFuncEvent,
  reqErrStateReasonName, resErrStateReasonName, cqErrReasonName, funcEventName, ReqErrStateReason, ResErrStateReason,
  CREQ_ENTRY_BYTES,
} from '../firmware-hwrm/roce/creq.ts';
import {
  creqQpEventType, creqQpEventStatus, creqQpEventCookie, creqQpEventXid, creqQpEventV, creqQpEventEvent, creqBaseVOf,
  CREQ_BASE_V_WORD,
} from '../firmware-hwrm/roce/creq.g.ts';
import { wire } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from the offsets of roce_hsi.h's creq_* structs.

t.test('creq_qp_event: type, status, cookie, xid, v, event', async (t) => {
  const values = { type: 0x38, status: 0x05, cookie: 0x8007, xid: 0x0001_2345, v: 1, event: 0x01 };
  const fixture = wire(16, [0, 0x38, 0x05, 0x07, 0x80, 0x45, 0x23, 0x01, 0x00], [8, 0x01, 0x01]);
  t.strictSame([...CreqQpEvent.encode(values)], fixture);
  t.strictSame(CreqQpEvent.decode(Uint8Array.from(fixture)), values);
  t.strictSame(CreqBase.decode(Uint8Array.from(fixture)), { type: 0x38, v: 1, event: 0x01 });

  // the consumer's word accessors read the same fixture
  const e = new Uint32Array(Uint8Array.from(fixture).buffer);
  t.equal(CREQ_ENTRY_BYTES, 16);
  t.equal(creqQpEventType(e, 0), 0x38);
  t.equal(creqQpEventStatus(e, 0), 0x05);
  t.equal(creqQpEventCookie(e, 0), 0x8007);
  t.equal(creqQpEventXid(e, 0), 0x12345);
  t.equal(creqQpEventV(e, 0), 1);
  t.equal(creqBaseVOf(e[CREQ_BASE_V_WORD]!), 1, 'v is bit 0 of byte 8');
  t.equal(creqQpEventEvent(e, 0), 0x01);
});

t.test('the type field keeps only bits 0-5', async (t) => {
  t.equal(CreqBase.decode(Uint8Array.from([0xf8, 0, 0, 0, 0, 0, 0, 0, 0xff, 0x0a])).type, 0x38);
  t.equal(CreqBase.decode(Uint8Array.from([0xf8, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0x0a])).v, 0);
});

t.test('QP error notification (event 0xC0)', async (t) => {
  const values = {
    type: 0x38, status: 0x00, req_slow_path_state: 0x11, req_err_state_reason: 0x02, xid: 0x45, v: 1, event: 0xc0,
    res_slow_path_state: 0x22, res_err_state_reason: 0x06, sq_cons_idx: 0x0102, rq_cons_idx: 0x0304,
  };
  const fixture = wire(16,
    [0, 0x38, 0x00, 0x11, 0x02, 0x45, 0x00, 0x00, 0x00],
    [8, 0x01, 0xc0, 0x22, 0x06, 0x02, 0x01, 0x04, 0x03],
  );
  t.strictSame([...CreqQpErrorNotification.encode(values)], fixture);
  t.strictSame(CreqQpErrorNotification.decode(Uint8Array.from(fixture)), values);
});

t.test('CQ error notification (event 0xC1)', async (t) => {
  const values = { type: 0x38, status: 0x00, cq_err_reason: 0x02, xid: 0x0007, v: 1, event: 0xc1 };
  const fixture = wire(16, [0, 0x38, 0x00, 0x02, 0x00, 0x07, 0x00, 0x00, 0x00], [8, 0x01, 0xc1]);
  t.strictSame([...CreqCqErrorNotification.encode(values)], fixture);
  t.strictSame(CreqCqErrorNotification.decode(Uint8Array.from(fixture)), values);
});

t.test('function event (type 0x3A)', async (t) => {
  const values = { type: 0x3a, v: 1, event: 0x81 };
  const fixture = wire(16, [0, 0x3a], [8, 0x01, 0x81]);
  t.strictSame([...CreqFuncEvent.encode(values)], fixture);
  t.strictSame(CreqFuncEvent.decode(Uint8Array.from(fixture)), values);
});

t.test('reason and event names', async (t) => {
  t.equal(reqErrStateReasonName(0x00), 'NO_ERROR');
  t.equal(reqErrStateReasonName(0x02), 'REQ_TIMEOUT_RETRY_LIMIT');
  t.equal(reqErrStateReasonName(0x03), 'REQ_RNR_TIMEOUT_RETRY_LIMIT');
  t.equal(reqErrStateReasonName(0x1a), 'REQ_PROD_WQE_MSMTCH_ERROR');
  t.equal(reqErrStateReasonName(0x1c), 'REQ_RETX_SETUP_ERROR');
  t.equal(reqErrStateReasonName(0x1d), 'UNKNOWN(0x1d)');
  t.equal(Object.keys(ReqErrStateReason).length, 29, 'requester reasons 0x00..0x1C');
  t.equal(resErrStateReasonName(0x03), 'RES_EXCEEDS_WQE');
  t.equal(resErrStateReasonName(0x06), 'RES_RX_INVALID_R_KEY');
  t.equal(resErrStateReasonName(0x19), 'RES_SRQ_LOAD_ERROR');
  t.equal(resErrStateReasonName(0x1a), 'UNKNOWN(0x1a)', '0x1A is not defined');
  t.equal(resErrStateReasonName(0x1b), 'RES_TX_PCI_ERROR');
  t.equal(resErrStateReasonName(0x1d), 'RES_PSN_NOT_FOUND');
  t.equal(Object.keys(ResErrStateReason).length, 29, 'responder reasons 0x00..0x1D without 0x1A');
  t.equal(cqErrReasonName(1), 'REQ_CQ_INVALID_ERROR');
  t.equal(cqErrReasonName(5), 'RES_CQ_OVERFLOW_ERROR');
  t.equal(cqErrReasonName(0), 'UNKNOWN(0x0)');
  t.equal(funcEventName(0x07), 'CFCQ_ERROR');
  t.equal(funcEventName(0x0b), 'TIM_ERROR');
  t.equal(funcEventName(0x80), 'VF_COMM_REQUEST');
  t.equal(funcEventName(0x81), 'RESOURCE_EXHAUSTED');
});
