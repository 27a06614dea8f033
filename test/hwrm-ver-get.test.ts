import t from 'tap';
import {
  VerGetInput, VerGetOutput, VER_GET_RESP_DEV_CAPS_CFG, VER_GET_RESP_FLAGS, hwrmSpecCode, shortCommandRequired,
  HWRM_VERSION_MAJOR, HWRM_VERSION_MINOR, HWRM_VERSION_UPDATE,
} from '../firmware-hwrm/hwrm/index.ts';
import { seq, zeros, seqBytes, REQ_HDR, REQ_HDR_BYTES, RESP_HDR } from './helpers/hwrm-fixtures.ts';

// Fixtures follow hsi.h hwrm_ver_get_input/_output in the offset-per-byte pattern of helpers/hwrm-fixtures.ts.

t.test('hwrm_ver_get_input (24 bytes): hwrm_intf_maj/min/upd at 16, 17, 18', async (t) => {
  const values = { ...REQ_HDR, hwrm_intf_maj: 0x10, hwrm_intf_min: 0x11, hwrm_intf_upd: 0x12 };
  const want = [...REQ_HDR_BYTES, 0x10, 0x11, 0x12, ...zeros(5)];
  t.equal(VerGetInput.size, 24);
  t.same([...VerGetInput.encode(values)], want);
  t.strictSame(VerGetInput.decode(Uint8Array.from(want)), values);
});

t.test('a driver VER_GET request as the kernel sends it', async (t) => {
  const got = VerGetInput.encode({
    req_type: 0x0000, cmpl_ring: 0xffff, seq_id: 0, target_id: 0xffff, resp_addr: 0x7f00_1000,
    hwrm_intf_maj: HWRM_VERSION_MAJOR, hwrm_intf_min: HWRM_VERSION_MINOR, hwrm_intf_upd: HWRM_VERSION_UPDATE,
  });
  t.same([...got], [
    0x00, 0x00, 0xff, 0xff, 0x00, 0x00, 0xff, 0xff,
    0x00, 0x10, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x0a, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
  ]);
});

const OUTPUT_VALUES = {
  ...RESP_HDR,
  hwrm_intf_maj_8b: 0x08, hwrm_intf_min_8b: 0x09, hwrm_intf_upd_8b: 0x0a, hwrm_intf_rsvd_8b: 0x0b,
  hwrm_fw_maj_8b: 0x0c, hwrm_fw_min_8b: 0x0d, hwrm_fw_bld_8b: 0x0e, hwrm_fw_rsvd_8b: 0x0f,
  mgmt_fw_maj_8b: 0x10, mgmt_fw_min_8b: 0x11, mgmt_fw_bld_8b: 0x12, mgmt_fw_rsvd_8b: 0x13,
  netctrl_fw_maj_8b: 0x14, netctrl_fw_min_8b: 0x15, netctrl_fw_bld_8b: 0x16, netctrl_fw_rsvd_8b: 0x17,
  dev_caps_cfg: 0x1b1a1918,
  roce_fw_maj_8b: 0x1c, roce_fw_min_8b: 0x1d, roce_fw_bld_8b: 0x1e, roce_fw_rsvd_8b: 0x1f,
  hwrm_fw_name: seqBytes(0x20, 16), mgmt_fw_name: seqBytes(0x30, 16), netctrl_fw_name: seqBytes(0x40, 16),
  active_pkg_name: seqBytes(0x50, 16), roce_fw_name: seqBytes(0x60, 16),
  chip_num: 0x7170, chip_rev: 0x72, chip_metal: 0x73, chip_bond_id: 0x74, chip_platform_type: 0x75,
  max_req_win_len: 0x7776, max_resp_len: 0x7978, def_req_timeout: 0x7b7a, flags: 0x7c, always_1: 0x7f,
  hwrm_intf_major: 0x8180, hwrm_intf_minor: 0x8382, hwrm_intf_build: 0x8584, hwrm_intf_patch: 0x8786,
  hwrm_fw_major: 0x8988, hwrm_fw_minor: 0x8b8a, hwrm_fw_build: 0x8d8c, hwrm_fw_patch: 0x8f8e,
  mgmt_fw_major: 0x9190, mgmt_fw_minor: 0x9392, mgmt_fw_build: 0x9594, mgmt_fw_patch: 0x9796,
  netctrl_fw_major: 0x9998, netctrl_fw_minor: 0x9b9a, netctrl_fw_build: 0x9d9c, netctrl_fw_patch: 0x9f9e,
  roce_fw_major: 0xa1a0, roce_fw_minor: 0xa3a2, roce_fw_build: 0xa5a4, roce_fw_patch: 0xa7a6,
  max_ext_req_len: 0xa9a8, max_req_timeout: 0xabaa, valid: 0xaf,
};
// unused_0 at 125..126, unused_1 at 172..174.
const OUTPUT_BYTES = [...seq(0, 124), 0, 0, 0x7f, ...seq(128, 171), 0, 0, 0, 0xaf];

t.test('hwrm_ver_get_output (176 bytes): every field at its documented offset', async (t) => {
  t.equal(VerGetOutput.size, 176);
  t.equal(OUTPUT_BYTES.length, 176);
  t.same([...VerGetOutput.encode(OUTPUT_VALUES)], OUTPUT_BYTES);
  t.strictSame(VerGetOutput.decode(Uint8Array.from(OUTPUT_BYTES)), OUTPUT_VALUES);
});

t.test('decodes a P5 firmware answer written out by hand', async (t) => {
  const b = new Uint8Array(176);
  b.set([0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0xb0, 0x00], 0); // success, req_type 0, seq 7, resp_len 176
  b.set([1, 10, 3, 0], 8); // interface 1.10.3
  b.set([0xde, 0x00, 0x91, 0x00], 12); // firmware 222.0.145
  b.set([0x0c, 0x00, 0x00, 0x00], 24); // dev_caps_cfg: SHORT_CMD_SUPPORTED | SHORT_CMD_REQUIRED
  b.set([0x32, 0x32, 0x32, 0x2e, 0x30], 32); // hwrm_fw_name "222.0"
  b.set([0x50, 0x17, 0x11], 112); // chip_num 0x1750 (BCM57508), chip_rev 0x11
  b.set([0x80, 0x00, 0xc0, 0x02, 0xf4, 0x01], 118); // max_req_win_len 128, max_resp_len 704, def_req_timeout 500
  b[127] = 1; // always_1
  b.set([0x50, 0x01, 0x28, 0x00], 168); // max_ext_req_len 336, max_req_timeout 40 s
  b[175] = 1; // valid
  const r = VerGetOutput.decode(b);
  t.equal(r.error_code, 0);
  t.equal(r.resp_len, 176);
  t.equal(hwrmSpecCode(r.hwrm_intf_maj_8b, r.hwrm_intf_min_8b, r.hwrm_intf_upd_8b), 0x10a03);
  t.equal(r.hwrm_fw_maj_8b, 222);
  t.equal(r.hwrm_fw_bld_8b, 145);
  t.equal(r.chip_num, 0x1750);
  t.equal(r.chip_rev, 0x11);
  t.equal(r.max_req_win_len, 128);
  t.equal(r.max_resp_len, 704);
  t.equal(r.def_req_timeout, 500);
  t.equal(r.max_ext_req_len, 336);
  t.equal(r.max_req_timeout, 40);
  t.equal(new TextDecoder().decode(r.hwrm_fw_name.subarray(0, 5)), '222.0');
  t.equal(r.always_1, 1);
  t.equal(r.valid, 1);
  t.ok(shortCommandRequired(r.dev_caps_cfg));
  t.equal(r.flags & VER_GET_RESP_FLAGS.DEV_NOT_RDY, 0);
});

t.test('an older firmware response of 128 bytes decodes with the newer fields as zero', async (t) => {
  const b = new Uint8Array(128);
  b.set([0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x80, 0x00], 0); // resp_len 128
  b.set([0x50, 0x17], 112);
  b[127] = 1; // valid of the old layout, always_1 of the new one
  const r = VerGetOutput.decode(b);
  t.equal(r.resp_len, 128);
  t.equal(r.chip_num, 0x1750);
  t.equal(r.always_1, 1);
  t.equal(r.max_ext_req_len, 0);
  t.equal(r.valid, 0);
});

t.test('dev_caps_cfg and flags bits of 3.1', async (t) => {
  t.equal(VER_GET_RESP_DEV_CAPS_CFG.SHORT_CMD_SUPPORTED, 0x4);
  t.equal(VER_GET_RESP_DEV_CAPS_CFG.SHORT_CMD_REQUIRED, 0x8);
  t.equal(VER_GET_RESP_DEV_CAPS_CFG.KONG_MB_CHNL_SUPPORTED, 0x10);
  t.equal(VER_GET_RESP_DEV_CAPS_CFG.DEBUG_TOKEN_SUPPORTED, 0x20000);
  t.equal(VER_GET_RESP_FLAGS.DEV_NOT_RDY, 0x1);
  t.equal(VER_GET_RESP_FLAGS.DEV_NOT_RDY_BACKING_STORE, 0x4);
  // Short mode only when both bits are set, as both drivers test.
  t.notOk(shortCommandRequired(0x4));
  t.notOk(shortCommandRequired(0x8));
  t.ok(shortCommandRequired(0xc));
  t.ok(shortCommandRequired(0x1c));
  t.notOk(shortCommandRequired(0));
});
