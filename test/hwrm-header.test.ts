import t from 'tap';
import {
  HwrmInput, HwrmOutput, HwrmErrOutput, HwrmShortInput,
  HWRM_NA_SIGNATURE, HWRM_NO_CMPL_RING, HWRM_TARGET_ID, HWRM_FID_SELF, HWRM_RESP_VALID_KEY, HWRM_MAX_REQ_LEN,
  HWRM_MAX_RESP_LEN, HWRM_SHORT_REQ_LEN, SHORT_REQ_SIGNATURE_SHORT_CMD, SHORT_REQ_TARGET_ID,
  HWRM_COMMANDS, hwrmRequestName, HWRM_ERR_CODE, hwrmErrorName, isHwrmRetryable,
} from '../firmware-hwrm/hwrm/index.ts';

// Fixtures follow hsi.h struct input, output, hwrm_short_input, hwrm_err_output, written out by hand.

t.test('request header: req_type, cmpl_ring, seq_id, target_id, resp_addr at 0, 2, 4, 6, 8', async (t) => {
  const values = { req_type: 0x0015, cmpl_ring: 0xffff, seq_id: 0x0203, target_id: 0xffff, resp_addr: 0x1_0000_2000 };
  const want = [
    0x15, 0x00, 0xff, 0xff, 0x03, 0x02, 0xff, 0xff,
    0x00, 0x20, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
  ];
  t.equal(HwrmInput.size, 16);
  t.same([...HwrmInput.encode(values)], want);
  t.strictSame(HwrmInput.decode(Uint8Array.from(want)), values);
});

t.test('response header: error_code, req_type, seq_id, resp_len at 0, 2, 4, 6', async (t) => {
  const bytes = Uint8Array.from([0x02, 0x00, 0x50, 0x00, 0x07, 0x00, 0x10, 0x00]);
  t.equal(HwrmOutput.size, 8);
  t.strictSame(HwrmOutput.decode(bytes), { error_code: 2, req_type: 0x50, seq_id: 7, resp_len: 16 });
  t.same([...HwrmOutput.encode({ error_code: 0xffff, req_type: 0x1a8, seq_id: 0x1234, resp_len: 56 })],
    [0xff, 0xff, 0xa8, 0x01, 0x34, 0x12, 0x38, 0x00]);
});

t.test('hwrm_err_output: opaque_0 @8, opaque_1 @12, cmd_err @14, valid @15', async (t) => {
  const bytes = Uint8Array.from([
    0x06, 0x00, 0x93, 0x01, 0x2a, 0x00, 0x10, 0x00,
    0x78, 0x56, 0x34, 0x12, 0xcd, 0xab, 0x03, 0x01,
  ]);
  const values = {
    error_code: 6, req_type: 0x193, seq_id: 42, resp_len: 16, opaque_0: 0x12345678, opaque_1: 0xabcd, cmd_err: 3,
    valid: 1,
  };
  t.strictSame(HwrmErrOutput.decode(bytes), values);
  t.same([...HwrmErrOutput.encode(values)], [...bytes]);
  t.equal(hwrmErrorName(HwrmErrOutput.decode(bytes).error_code), 'INVALID_ENABLES');
});

t.test('hwrm_short_input: req_type @0, signature 0x4321 @2, target_id @4, size @6, req_addr @8', async (t) => {
  const values = {
    req_type: 0x0193, signature: SHORT_REQ_SIGNATURE_SHORT_CMD, target_id: SHORT_REQ_TARGET_ID.DEFAULT, size: 256,
    req_addr: 0x2_1234_5670,
  };
  const want = [
    0x93, 0x01, 0x21, 0x43, 0x00, 0x00, 0x00, 0x01,
    0x70, 0x56, 0x34, 0x12, 0x02, 0x00, 0x00, 0x00,
  ];
  t.equal(HwrmShortInput.size, 16);
  t.same([...HwrmShortInput.encode(values)], want);
  t.strictSame(HwrmShortInput.decode(Uint8Array.from(want)), values);
});

t.test('transport constants as the header and drivers define them', async (t) => {
  t.equal(HWRM_NA_SIGNATURE, 0xffffffff);
  t.equal(HWRM_NO_CMPL_RING, 0xffff);
  t.equal(HWRM_TARGET_ID.HWRM, 0xffff);
  t.equal(HWRM_TARGET_ID.TOOLS, 0xfffd);
  t.equal(HWRM_FID_SELF, 0xffff);
  t.equal(HWRM_RESP_VALID_KEY, 1);
  t.equal(HWRM_MAX_REQ_LEN, 128);
  t.equal(HWRM_MAX_RESP_LEN, 704);
  t.equal(HWRM_SHORT_REQ_LEN, 16);
  t.equal(SHORT_REQ_SIGNATURE_SHORT_CMD, 0x4321);
  t.equal(SHORT_REQ_TARGET_ID.TOOLS, 0xfffd);
});

t.test('req_type numbers of table 3.0', async (t) => {
  const table: Array<[keyof typeof HWRM_COMMANDS, number]> = [
    ['VER_GET', 0x0000], ['ERROR_RECOVERY_QCFG', 0x000c], ['FUNC_DRV_IF_CHANGE', 0x000d], ['FUNC_VF_CFG', 0x000f],
    ['FUNC_RESET', 0x0011], ['FUNC_GETFID', 0x0012], ['FUNC_QCAPS', 0x0015], ['FUNC_QCFG', 0x0016],
    ['FUNC_CFG', 0x0017], ['FUNC_DRV_UNRGTR', 0x001a], ['FUNC_DRV_RGTR', 0x001d], ['PORT_PHY_CFG', 0x0020],
    ['PORT_MAC_CFG', 0x0021], ['PORT_PHY_QCFG', 0x0027], ['PORT_MAC_QCFG', 0x0028], ['PORT_PHY_QCAPS', 0x002a],
    ['QUEUE_QPORTCFG', 0x0030], ['VNIC_ALLOC', 0x0040], ['VNIC_CFG', 0x0042], ['RING_ALLOC', 0x0050],
    ['RING_FREE', 0x0051], ['RING_GRP_ALLOC', 0x0060], ['RING_GRP_FREE', 0x0061], ['CFA_L2_FILTER_ALLOC', 0x0090],
    ['STAT_CTX_ALLOC', 0x00b0], ['STAT_CTX_FREE', 0x00b1], ['FW_RESET', 0x00c0], ['FW_SET_TIME', 0x00c8],
    ['FUNC_RESOURCE_QCAPS', 0x0190], ['FUNC_BACKING_STORE_QCAPS', 0x0192], ['FUNC_BACKING_STORE_CFG', 0x0193],
    ['FUNC_BACKING_STORE_QCFG', 0x0194], ['FUNC_BACKING_STORE_CFG_V2', 0x01a3], ['FUNC_BACKING_STORE_QCFG_V2', 0x01a4],
    ['FUNC_DBR_PACING_QCFG', 0x01a6], ['FUNC_BACKING_STORE_QCAPS_V2', 0x01a8],
  ];
  for (const [name, reqType] of table) t.equal(HWRM_COMMANDS[name].req_type, reqType, name);
  const numbers = Object.values(HWRM_COMMANDS).map((row) => row.req_type);
  t.equal(new Set(numbers).size, numbers.length, 'no two commands share a number');
  t.same(numbers, [...numbers].sort((a, b) => a - b), 'the rows follow the order of the request types');
});

t.test('request names for messages; unknown numbers print as hex', async (t) => {
  t.equal(hwrmRequestName(0x15), 'HWRM_FUNC_QCAPS');
  t.equal(hwrmRequestName(0), 'HWRM_VER_GET');
  t.equal(hwrmRequestName(0x1a8), 'HWRM_FUNC_BACKING_STORE_QCAPS_V2');
  t.equal(hwrmRequestName(0x1ff), '0x01ff');
  t.equal(hwrmRequestName(-3), '-3');
  t.equal(hwrmRequestName(Number.NaN), 'NaN');
});

t.test('error codes of table 2.8 and their names', async (t) => {
  const table: Array<[number, string]> = [
    [0x0, 'SUCCESS'], [0x1, 'FAIL'], [0x2, 'INVALID_PARAMS'], [0x3, 'RESOURCE_ACCESS_DENIED'],
    [0x4, 'RESOURCE_ALLOC_ERROR'], [0x5, 'INVALID_FLAGS'], [0x6, 'INVALID_ENABLES'], [0x7, 'UNSUPPORTED_TLV'],
    [0x8, 'NO_BUFFER'], [0x9, 'UNSUPPORTED_OPTION_ERR'], [0xa, 'HOT_RESET_PROGRESS'], [0xb, 'HOT_RESET_FAIL'],
    [0xc, 'NO_FLOW_COUNTER_DURING_ALLOC'], [0xd, 'KEY_HASH_COLLISION'], [0xe, 'KEY_ALREADY_EXISTS'],
    [0xf, 'HWRM_ERROR'], [0x10, 'BUSY'], [0x11, 'RESOURCE_LOCKED'], [0x12, 'PF_UNAVAILABLE'],
    [0x13, 'ENTITY_NOT_PRESENT'], [0x14, 'SECURE_SOC_ERROR'], [0x8000, 'TLV_ENCAPSULATED_RESPONSE'],
    [0xfffe, 'UNKNOWN_ERR'], [0xffff, 'CMD_NOT_SUPPORTED'],
  ];
  for (const [code, name] of table) {
    t.equal(hwrmErrorName(code), name);
    t.equal(HWRM_ERR_CODE[name as keyof typeof HWRM_ERR_CODE], code);
  }
  t.equal(Object.keys(HWRM_ERR_CODE).length, table.length, 'the table lists every named code');
});

t.test('hwrmErrorName never throws and prints unknown codes as hex', async (t) => {
  t.equal(hwrmErrorName(0x15), '0x0015');
  t.equal(hwrmErrorName(0x7fff), '0x7fff');
  t.equal(hwrmErrorName(0x12345), '0x12345');
  t.equal(hwrmErrorName(-1), '-1');
  t.equal(hwrmErrorName(1.5), '1.5');
  t.equal(hwrmErrorName(Number.NaN), 'NaN');
  t.doesNotThrow(() => hwrmErrorName(undefined as unknown as number));
});

t.test('only the codes the HSI calls transient are retryable', async (t) => {
  t.ok(isHwrmRetryable(0x8));
  t.ok(isHwrmRetryable(0xa));
  t.ok(isHwrmRetryable(0x10));
  t.notOk(isHwrmRetryable(0x0));
  t.notOk(isHwrmRetryable(0x2));
  t.notOk(isHwrmRetryable(0xb));
  t.notOk(isHwrmRetryable(0xffff));
});
