import t from 'tap';
import {
  RoceOpcode, ROCE_COMMAND_BYTES, roceOpcodeName, RoceStatus, roceStatusName, CreqType, creqTypeName, CreqEvent,
} from '../firmware-hwrm/roce/opcodes.ts';

// Values from roce_hsi.h: CMDQ_BASE_OPCODE_*, CREQ_BASE_TYPE_*, CREQ_QP_EVENT_EVENT_*, struct sizes.

t.test('command opcodes are the ones the RCFW table gives', async (t) => {
  const want: Array<[keyof typeof RoceOpcode, number]> = [
    ['CREATE_QP', 0x01], ['DESTROY_QP', 0x02], ['MODIFY_QP', 0x03], ['QUERY_QP', 0x04],
    ['CREATE_SRQ', 0x05], ['DESTROY_SRQ', 0x06], ['QUERY_SRQ', 0x08],
    ['CREATE_CQ', 0x09], ['DESTROY_CQ', 0x0a], ['RESIZE_CQ', 0x0c],
    ['ALLOCATE_MRW', 0x0d], ['DEALLOCATE_KEY', 0x0e], ['REGISTER_MR', 0x0f], ['DEREGISTER_MR', 0x10],
    ['ADD_GID', 0x11], ['DELETE_GID', 0x12], ['CREATE_QP1', 0x13], ['DESTROY_QP1', 0x14],
    ['CREATE_AH', 0x15], ['DESTROY_AH', 0x16], ['MODIFY_GID', 0x17], ['QUERY_GID', 0x18],
    ['INITIALIZE_FW', 0x80], ['DEINITIALIZE_FW', 0x81], ['STOP_FUNC', 0x82], ['QUERY_FUNC', 0x83],
    ['SET_FUNC_RESOURCES', 0x84], ['READ_CONTEXT', 0x85], ['MAP_TC_TO_COS', 0x8a], ['QUERY_VERSION', 0x8b],
    ['MODIFY_ROCE_CC', 0x8c], ['QUERY_ROCE_CC', 0x8d], ['QUERY_ROCE_STATS', 0x8e], ['SET_LINK_AGGR_MODE', 0x8f],
    ['MODIFY_CQ', 0x90], ['QUERY_QP_EXTEND', 0x91], ['QUERY_ROCE_STATS_EXT', 0x92], ['ROCE_MIRROR_CFG', 0x99],
  ];
  for (const [name, code] of want) {
    t.equal(RoceOpcode[name], code, name);
    t.equal(roceOpcodeName(code), name);
  }
});

t.test('wire sizes are the recomputed ones of the opcode table', async (t) => {
  const want: Array<[number, number]> = [
    [0x01, 104], [0x02, 24], [0x03, 144], [0x04, 24], [0x05, 56], [0x06, 24], [0x08, 24], [0x09, 64],
    [0x0a, 24], [0x0c, 40], [0x0d, 32], [0x0e, 24], [0x0f, 56], [0x10, 24], [0x11, 48], [0x12, 24],
    [0x13, 80], [0x14, 24], [0x15, 64], [0x16, 24], [0x17, 48], [0x18, 24], [0x80, 112], [0x81, 16],
    [0x83, 16], [0x84, 56], [0x85, 24], [0x8a, 24], [0x8b, 16], [0x8c, 56], [0x8d, 16], [0x8e, 24],
    [0x8f, 40], [0x91, 24], [0x92, 24], [0x99, 24],
  ];
  for (const [op, size] of want) t.equal(ROCE_COMMAND_BYTES[op], size, roceOpcodeName(op));
  t.equal(ROCE_COMMAND_BYTES[0x82], undefined, 'STOP_FUNC has no documented size');
});

t.test('CREQ status codes have names, and an unknown code never throws', async (t) => {
  const want = [
    'SUCCESS', 'FAIL', 'RESOURCES', 'INVALID_CMD', 'NOT_IMPLEMENTED', 'INVALID_PARAMETER', 'HARDWARE_ERROR',
    'INTERNAL_ERROR',
  ];
  want.forEach((name, code) => {
    t.equal(roceStatusName(code), name);
    t.equal(RoceStatus[name as keyof typeof RoceStatus], code);
  });
  t.equal(roceStatusName(8), 'UNKNOWN(0x8)');
  t.equal(roceStatusName(0xff), 'UNKNOWN(0xff)');
  t.equal(roceStatusName(-1), 'UNKNOWN(-1)');
  t.equal(roceStatusName(Number.NaN), 'UNKNOWN(NaN)');
  t.equal(roceStatusName(1.5), 'UNKNOWN(1.5)');
  t.equal(roceOpcodeName(0x07), 'UNKNOWN(0x7)');
});

t.test('CREQ entry types and notification events', async (t) => {
  t.equal(CreqType.QP_EVENT, 0x38);
  t.equal(CreqType.FUNC_EVENT, 0x3a);
  t.equal(CreqType.HWRM_ASYNC_EVENT, 0x2e);
  t.equal(creqTypeName(0x3a), 'FUNC_EVENT');
  t.equal(CreqEvent.QP_ERROR_NOTIFICATION, 0xc0);
  t.equal(CreqEvent.CQ_ERROR_NOTIFICATION, 0xc1);
});
