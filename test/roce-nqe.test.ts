import t from 'tap';
import {
  NqBase, NqCn, NqSrqEvent, NqType, nqTypeName, NqSrqEventCode,
  NQE_BYTES,
} from '../firmware-hwrm/roce/nqe.ts';
import { nqCnType, nqCnToggle, nqCnV, nqCnCqHandleLow, nqCnCqHandleHigh } from '../firmware-hwrm/roce/nqe.g.ts';
import { wire, seq } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from the offsets of roce_hsi.h's nq_* structs.

const CN_FIXTURE = wire(16,
  [0, 0xb0, 0x00], [4, ...seq(0x04, 4)], [8, 0x01, 0x00, 0x00, 0x00], [12, ...seq(0x0c, 4)]);

t.test('CQ notification: type 0x30, toggle in bits 6-7, cq_handle split at 4 and 12, valid at 8', async (t) => {
  const values = {
    type: NqType.CQ_NOTIFICATION, toggle: 2, cq_handle_low: 0x0706_0504, v: 1, cq_handle_high: 0x0f0e_0d0c,
  };
  t.equal(NqCn.size, 16);
  t.strictSame([...NqCn.encode(values)], CN_FIXTURE);
  t.strictSame(NqCn.decode(Uint8Array.from(CN_FIXTURE)), values);
});

t.test('generic nq_base and the SRQ event', async (t) => {
  const base = {
    type: 0x38, info10: 0x2ab, info16: 0x0302, info32: 0x0706_0504, v: 1, info63_low: 0x0585_0484,
    info63_high: 0x0f0e_0d0c,
  };
  const baseFixture = wire(16,
    [0, 0xf8, 0xaa], [2, 0x02, 0x03], [4, ...seq(0x04, 4)], [8, 0x09, 0x09, 0x0a, 0x0b], [12, ...seq(0x0c, 4)]);
  t.strictSame([...NqBase.encode(base)], baseFixture);
  t.strictSame(NqBase.decode(Uint8Array.from(baseFixture)), base);

  const srq = {
    type: NqType.SRQ_EVENT, toggle: 1, event: NqSrqEventCode.SRQ_THRESHOLD_EVENT, srq_handle_low: 0x0706_0504, v: 1,
    srq_handle_high: 0x0f0e_0d0c,
  };
  const srqFixture = wire(16, [0, 0x72, 0x01], [4, ...seq(0x04, 4)], [8, 0x01], [12, ...seq(0x0c, 4)]);
  t.strictSame([...NqSrqEvent.encode(srq)], srqFixture);
  t.strictSame(NqSrqEvent.decode(Uint8Array.from(srqFixture)), srq);
});

t.test('hot path: the word accessors read the hand fixture', async (t) => {
  const e = new Uint32Array(Uint8Array.from(CN_FIXTURE).buffer);
  t.equal(NQE_BYTES, 16);
  t.equal(nqCnType(e, 0), 0x30);
  t.equal(nqCnToggle(e, 0), 2);
  t.equal(nqCnV(e, 0), 1);
  t.equal(nqCnCqHandleLow(e, 0), 0x0706_0504);
  t.equal(nqCnCqHandleHigh(e, 0), 0x0f0e_0d0c);
});

t.test('NQ entry types', async (t) => {
  t.strictSame(NqType, { CQ_NOTIFICATION: 0x30, SRQ_EVENT: 0x32, DBQ_EVENT: 0x34, QP_EVENT: 0x38, FUNC_EVENT: 0x3a });
  t.equal(nqTypeName(0x30), 'CQ_NOTIFICATION');
  t.equal(nqTypeName(0x31), 'UNKNOWN(0x31)');
});
