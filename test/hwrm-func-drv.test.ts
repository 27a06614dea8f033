import t from 'tap';
import {
  FuncDrvRgtrInput, FuncDrvRgtrOutput, FuncDrvUnrgtrInput, FuncDrvUnrgtrOutput, FuncDrvIfChangeInput,
  FuncDrvIfChangeOutput, FUNC_DRV_RGTR_REQ_ENABLES, FUNC_DRV_RGTR_REQ_OS_TYPE, FUNC_DRV_RGTR_REQ_FLAGS,
  FUNC_DRV_RGTR_RESP_FLAGS, FUNC_DRV_IF_CHANGE_REQ_FLAGS, FUNC_DRV_IF_CHANGE_RESP_FLAGS, FUNC_DRV_UNRGTR_REQ_FLAGS,
} from '../firmware-hwrm/hwrm/index.ts';
import { seq, zeros, seqBytes, REQ_HDR, REQ_HDR_BYTES, RESP_HDR } from './helpers/hwrm-fixtures.ts';

// Fixtures follow hsi.h hwrm_func_drv_rgtr/unrgtr/if_change in the offset-per-byte pattern of helpers/hwrm-fixtures.ts.

t.test('hwrm_func_drv_rgtr_input (112): every field at its documented offset', async (t) => {
  const values = {
    ...REQ_HDR,
    flags: 0x13121110, enables: 0x17161514, os_type: 0x1918, ver_maj_8b: 0x1a, ver_min_8b: 0x1b, ver_upd_8b: 0x1c,
    timestamp: 0x23222120, vf_req_fwd: seqBytes(0x28, 32), async_event_fwd: seqBytes(0x48, 32),
    ver_maj: 0x6968, ver_min: 0x6b6a, ver_upd: 0x6d6c, ver_patch: 0x6f6e,
  };
  // unused_0 @29..31, unused_1 @36..39.
  const want = [...REQ_HDR_BYTES, ...seq(0x10, 0x1c), 0, 0, 0, ...seq(0x20, 0x23), 0, 0, 0, 0, ...seq(0x28, 0x6f)];
  t.equal(FuncDrvRgtrInput.size, 112);
  t.equal(want.length, 112);
  t.same([...FuncDrvRgtrInput.encode(values)], want);
  t.strictSame(FuncDrvRgtrInput.decode(Uint8Array.from(want)), values);
});

t.test('a kernel-style registration: Linux, version, async events 8 and 9 forwarded', async (t) => {
  // async_event_fwd is __le32[8]; event id n is word n/32, bit n%32: ids 8 and 9 make word 0 = 0x300.
  const asyncEventFwd = new Uint8Array(32);
  asyncEventFwd[1] = 0x03;
  const got = FuncDrvRgtrInput.encode({
    req_type: 0x1d, cmpl_ring: 0xffff, seq_id: 4, target_id: 0xffff, resp_addr: 0x2000,
    enables: FUNC_DRV_RGTR_REQ_ENABLES.OS_TYPE | FUNC_DRV_RGTR_REQ_ENABLES.VER |
      FUNC_DRV_RGTR_REQ_ENABLES.ASYNC_EVENT_FWD,
    flags: FUNC_DRV_RGTR_REQ_FLAGS.ASYM_QUEUE_CFG_SUPPORT,
    os_type: FUNC_DRV_RGTR_REQ_OS_TYPE.LINUX, ver_maj_8b: 1, ver_min_8b: 2, ver_upd_8b: 3,
    async_event_fwd: asyncEventFwd,
  });
  const want = [
    0x1d, 0x00, 0xff, 0xff, 0x04, 0x00, 0xff, 0xff, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x04, 0x00, 0x00, // flags 0x400
    0x13, 0x00, 0x00, 0x00, // enables 0x13
    0x24, 0x00, 0x01, 0x02, 0x03, 0x00, 0x00, 0x00, // os_type LINUX, 1.2.3
    ...zeros(8), // timestamp, unused_1
    ...zeros(32), // vf_req_fwd
    0x00, 0x03, 0x00, 0x00, ...zeros(28), // async_event_fwd word 0 = 0x00000300
    ...zeros(8), // 16-bit version
  ];
  t.same([...got], want);
});

t.test('hwrm_func_drv_rgtr_output (16): flags @8, valid @15', async (t) => {
  const values = { ...RESP_HDR, flags: 0x0b0a0908, valid: 0x0f };
  const want = [...seq(0, 11), 0, 0, 0, 0x0f];
  t.same([...FuncDrvRgtrOutput.encode(values)], want);
  t.strictSame(FuncDrvRgtrOutput.decode(Uint8Array.from(want)), values);
  const r = FuncDrvRgtrOutput.decode(Uint8Array.from([0, 0, 0x1d, 0, 4, 0, 16, 0, 0x01, 0, 0, 0, 0, 0, 0, 1]));
  t.equal(r.flags & FUNC_DRV_RGTR_RESP_FLAGS.IF_CHANGE_SUPPORTED, 1);
});

t.test('hwrm_func_drv_unrgtr_input/output: flags @16; valid @15', async (t) => {
  const values = { ...REQ_HDR, flags: 0x13121110 };
  const want = [...REQ_HDR_BYTES, 0x10, 0x11, 0x12, 0x13, 0, 0, 0, 0];
  t.same([...FuncDrvUnrgtrInput.encode(values)], want);
  t.strictSame(FuncDrvUnrgtrInput.decode(Uint8Array.from(want)), values);
  const outWant = [...seq(0, 7), ...zeros(7), 0x0f];
  t.same([...FuncDrvUnrgtrOutput.encode({ ...RESP_HDR, valid: 0x0f })], outWant);
  t.strictSame(FuncDrvUnrgtrOutput.decode(Uint8Array.from(outWant)), { ...RESP_HDR, valid: 0x0f });
  t.equal(FUNC_DRV_UNRGTR_REQ_FLAGS.PREPARE_FOR_SHUTDOWN, 1);
});

t.test('hwrm_func_drv_if_change_input/output: flags @16; flags @8 and valid @15', async (t) => {
  const values = { ...REQ_HDR, flags: 0x13121110 };
  const want = [...REQ_HDR_BYTES, 0x10, 0x11, 0x12, 0x13, 0, 0, 0, 0];
  t.same([...FuncDrvIfChangeInput.encode(values)], want);
  t.strictSame(FuncDrvIfChangeInput.decode(Uint8Array.from(want)), values);
  t.same([...FuncDrvIfChangeInput.encode({ flags: FUNC_DRV_IF_CHANGE_REQ_FLAGS.UP }).subarray(16)], [
    1, 0, 0, 0, 0, 0, 0, 0,
  ]);
  const outValues = { ...RESP_HDR, flags: 0x0b0a0908, valid: 0x0f };
  const outWant = [...seq(0, 11), 0, 0, 0, 0x0f];
  t.same([...FuncDrvIfChangeOutput.encode(outValues)], outWant);
  t.strictSame(FuncDrvIfChangeOutput.decode(Uint8Array.from(outWant)), outValues);
  t.equal(FUNC_DRV_IF_CHANGE_RESP_FLAGS.HOT_FW_RESET_DONE, 0x2);
});
