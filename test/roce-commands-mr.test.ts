import t from 'tap';
import {
  CmdqAllocateMrw, CreqAllocateMrwResp, CmdqDeallocateKey, CreqDeallocateKeyResp, CmdqRegisterMr, CreqRegisterMrResp,
  CmdqDeregisterMr, CreqDeregisterMrResp, MrwType, MrAccess, RegisterMrFlags, AllocateMrwAccess, MR_SIZE_ALL,
} from '../firmware-hwrm/roce/commands-mr.ts';
import { wire, seq, base, baseRows, resp, respRows } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from roce_hsi.h cmdq_allocate_mrw, cmdq_register_mr, cmdq_deregister_mr,
// cmdq_deallocate_key.

t.test('ALLOCATE_MRW: 32 bytes', async (t) => {
  const values = {
    ...base(0x0d, 2),
    mrw_handle: 0x1716_1514_1312_1110n,
    mrw_flags: MrwType.PMR, steering_tag_valid: 1,
    access: AllocateMrwAccess.CONSUMER_OWNED_KEY,
    steering_tag: 0x1b1a,
    pd_id: 0x1f1e_1d1c,
  };
  const fixture = wire(32, ...baseRows(0x0d, 2),
    [16, ...seq(0x10, 8)],
    [24, 0x11, 0x20], // type PMR in bits 0-3, STEERING_TAG_VALID bit 4; access CONSUMER_OWNED_KEY
    [26, 0x1a, 0x1b],
    [28, ...seq(0x1c, 4)],
  );
  t.equal(CmdqAllocateMrw.size, 32);
  t.strictSame([...CmdqAllocateMrw.encode(values)], fixture);
  t.strictSame(CmdqAllocateMrw.decode(Uint8Array.from(fixture)), values);

  const r = { ...resp(0x0d), xid: 0x1234_5678 };
  const rFixture = wire(16, ...respRows(0x0d), [4, 0x78, 0x56, 0x34, 0x12]);
  t.strictSame([...CreqAllocateMrwResp.encode(r)], rFixture);
  t.strictSame(CreqAllocateMrwResp.decode(Uint8Array.from(rFixture)), r);
});

t.test('DEALLOCATE_KEY: type at 16, key at 20; response bound_window_info at 12', async (t) => {
  const values = { ...base(0x0e, 2), mrw_flags: MrwType.MW_TYPE2B, key: 0x1716_1514 };
  const fixture = wire(24, ...baseRows(0x0e, 2), [16, 0x04], [20, ...seq(0x14, 4)]);
  t.strictSame([...CmdqDeallocateKey.encode(values)], fixture);
  t.strictSame(CmdqDeallocateKey.decode(Uint8Array.from(fixture)), values);

  const r = { ...resp(0x0e), xid: 0x1716_1514, bound_window_info: 0x0f0e_0d0c };
  const rFixture = wire(16, ...respRows(0x0e), [4, ...seq(0x14, 4)], [12, ...seq(0x0c, 4)]);
  t.strictSame([...CreqDeallocateKeyResp.encode(r)], rFixture);
  t.strictSame(CreqDeallocateKeyResp.decode(Uint8Array.from(rFixture)), r);
});

t.test('REGISTER_MR: 56 bytes', async (t) => {
  const values = {
    ...base(0x0f, 4),
    lvl: 1, log2_pg_size: 21,
    access: MrAccess.LOCAL_WRITE | MrAccess.REMOTE_READ | MrAccess.REMOTE_WRITE,
    log2_pbl_pg_size: 12,
    key: 0x1716_1514,
    pbl: 0x0f_1d1c_1b1a_1918,
    va: 0x0f_2524_2322_2120,
    mr_size: 0x2f2e_2d2c_2b2a_2928n,
    steering_tag: 0x3130,
  };
  const fixture = wire(56, ...baseRows(0x0f, 4),
    [16, 0x55], // level 1 in bits 0-1, log2 page size 21 (2M) in bits 2-6
    [17, 0x07],
    [18, 0x0c, 0x00],
    [20, ...seq(0x14, 4)],
    [24, ...seq(0x18, 6), 0x0f, 0x00],
    [32, ...seq(0x20, 6), 0x0f, 0x00],
    [40, ...seq(0x28, 8)],
    [48, 0x30, 0x31],
  );
  t.equal(CmdqRegisterMr.size, 56);
  t.strictSame([...CmdqRegisterMr.encode(values)], fixture);
  t.strictSame(CmdqRegisterMr.decode(Uint8Array.from(fixture)), values);
});

t.test('REGISTER_MR for the kernel DMA MR: level 0, pbl 0, va 0, size all ones, unified flow', async (t) => {
  const got = CmdqRegisterMr.encode({
    opcode: 0x0f, cmd_size: 4, flags: RegisterMrFlags.ALLOC_MR, lvl: 0, log2_pg_size: 12, access: MrAccess.LOCAL_WRITE,
    log2_pbl_pg_size: 12, key: 0x0001, pbl: 0, va: 0, mr_size: MR_SIZE_ALL,
  });
  t.strictSame([...got], wire(56,
    [0, 0x0f, 0x04, 0x01],
    [16, 0x30, 0x01, 0x0c, 0x00, 0x01], // 12 << 2 = 0x30; key = PD id 1 with ALLOC_MR
    [40, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
  ));
});

t.test('REGISTER_MR response and DEREGISTER_MR', async (t) => {
  const r = { ...resp(0x0f), xid: 0x0000_0a01 };
  const rFixture = wire(16, ...respRows(0x0f), [4, 0x01, 0x0a]);
  t.strictSame([...CreqRegisterMrResp.encode(r)], rFixture);
  t.strictSame(CreqRegisterMrResp.decode(Uint8Array.from(rFixture)), r);

  const values = { ...base(0x10, 2), lkey: 0x1312_1110 };
  const fixture = wire(24, ...baseRows(0x10, 2), [16, ...seq(0x10, 4)]);
  t.strictSame([...CmdqDeregisterMr.encode(values)], fixture);
  t.strictSame(CmdqDeregisterMr.decode(Uint8Array.from(fixture)), values);

  const d = { ...resp(0x10), xid: 0x1312_1110, bound_windows: 0x0f0e_0d0c };
  const dFixture = wire(16, ...respRows(0x10), [4, ...seq(0x10, 4)], [12, ...seq(0x0c, 4)]);
  t.strictSame([...CreqDeregisterMrResp.encode(d)], dFixture);
  t.strictSame(CreqDeregisterMrResp.decode(Uint8Array.from(dFixture)), d);
});

t.test('MR types, access bits and flags', async (t) => {
  t.strictSame(MrwType, { MR: 0, PMR: 1, MW_TYPE1: 2, MW_TYPE2A: 3, MW_TYPE2B: 4 });
  t.strictSame(MrAccess, {
    LOCAL_WRITE: 1, REMOTE_READ: 2, REMOTE_WRITE: 4, REMOTE_ATOMIC: 8, MW_BIND: 0x10, ZERO_BASED: 0x20,
  });
  t.strictSame(RegisterMrFlags, { ALLOC_MR: 1, STEERING_TAG_VALID: 2, ENABLE_RO: 4 });
});
