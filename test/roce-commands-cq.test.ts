import t from 'tap';
import {
  CmdqCreateCq, CreqCreateCqResp, CmdqDestroyCq, CreqDestroyCqResp, CreateCqFlags,
} from '../firmware-hwrm/roce/commands-cq.ts';
import { wire, seq, base, baseRows, resp, respRows } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from roce_hsi.h cmdq_base, creq_base, cmdq_create_cq/destroy_cq/resize_cq.

t.test('CREATE_CQ: 64 bytes', async (t) => {
  const values = {
    ...base(0x09, 4),
    cq_handle: 0x1716_1514_1312_1110n,
    lvl: 1, pg_size: 2,
    cnq_id: 0xabc, cq_fco: 0x12345,
    dpi: 0x2322_2120,
    cq_size: 0x2726_2524,
    pbl: 0x0f_2d2c_2b2a_2928,
    steering_tag: 0x3130,
    buf_maxtime: 0x155, normal_maxbuf: 0x0a, during_maxbuf: 0x15, enable_ring_idle_mode: 1,
  };
  const fixture = wire(64, ...baseRows(0x09, 4),
    [16, ...seq(0x10, 8)],
    [24, 0x09, 0x00, 0x00, 0x00], // level 1 in bits 0-1, page-size code 2 in bits 2-4
    [28, 0xbc, 0x5a, 0x34, 0x12], // cnq_id 0xABC in bits 0-11, cq_fco 0x12345 in bits 12-31
    [32, ...seq(0x20, 4)],
    [36, ...seq(0x24, 4)],
    [40, ...seq(0x28, 6), 0x0f, 0x00],
    [48, 0x30, 0x31],
    [52, 0x55, 0x55, 0x0d, 0x00], // 0x155 | 0x0A << 9 | 0x15 << 14 | 1 << 19 = 0x000D5555
  );
  t.equal(CmdqCreateCq.size, 64);
  t.strictSame([...CmdqCreateCq.encode(values)], fixture);
  t.strictSame(CmdqCreateCq.decode(Uint8Array.from(fixture)), values);
});

t.test('CREATE_CQ coalescing with the kernel P5 defaults', async (t) => {
  const got = CmdqCreateCq.encode({ buf_maxtime: 1, normal_maxbuf: 1, during_maxbuf: 1, enable_ring_idle_mode: 1 });
  t.strictSame([...got.subarray(52, 56)], [0x01, 0x42, 0x08, 0x00]); // 1 | 1 << 9 | 1 << 14 | 1 << 19 = 0x84201
});

t.test('CREATE_CQ response: CQ id in xid', async (t) => {
  const values = { ...resp(0x09), xid: 0x0000_0007 };
  const fixture = wire(16, ...respRows(0x09), [4, 0x07]);
  t.strictSame([...CreqCreateCqResp.encode(values)], fixture);
  t.strictSame(CreqCreateCqResp.decode(Uint8Array.from(fixture)), values);
});

t.test('DESTROY_CQ: cq_cid at 16; response arm level at 10, total_cnq_events at 12', async (t) => {
  const values = { ...base(0x0a, 2), cq_cid: 0x1312_1110 };
  const fixture = wire(24, ...baseRows(0x0a, 2), [16, ...seq(0x10, 4)]);
  t.equal(CmdqDestroyCq.size, 24);
  t.strictSame([...CmdqDestroyCq.encode(values)], fixture);
  t.strictSame(CmdqDestroyCq.decode(Uint8Array.from(fixture)), values);

  const r = { ...resp(0x0a), xid: 0x07, cq_arm_lvl: 2, total_cnq_events: 0x0d0c };
  const rFixture = wire(16, ...respRows(0x0a), [4, 0x07], [10, 0x02, 0x00, 0x0c, 0x0d]);
  t.strictSame([...CreqDestroyCqResp.encode(r)], rFixture);
  t.strictSame(CreqDestroyCqResp.decode(Uint8Array.from(rFixture)), r);
});

t.test('CREATE_CQ flags', async (t) => {
  t.strictSame(CreateCqFlags, {
    DISABLE_CQ_OVERFLOW_DETECTION: 1, STEERING_TAG_VALID: 2, INFINITE_CQ_MODE: 4, COALESCING_VALID: 8,
  });
});
