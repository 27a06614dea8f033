import t from 'tap';
import {
  CmdqInit, CmdqBase, CreqRespSbHeader, cmdqUnits, cmdqProdWord,
  CMDQ_MAILBOX_OFFSET, CMDQ_PROD_OFFSET, CMDQ_TRIGGER_OFFSET, CMDQ_TRIGGER_VALUE, CMDQ_FIRST_COMMAND_FLAG,
  CMDQE_BYTES, CMDQ_DEPTH, CMDQ_COOKIE_MASK, CMDQ_COOKIE_BLOCKING,
} from '../firmware-hwrm/roce/cmdq.ts';
import { wire } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from roce_hsi.h cmdq_init, cmdq_base and the side-buffer rule of qplib_rcfw.c.

t.test('cmdq_init: pbl, level in bits 0-1 and depth in bits 2-15, CREQ ring id, producer', async (t) => {
  const values = { cmdq_pbl: 0x12_3456_7000, cmdq_lvl: 0, cmdq_size: 8192, creq_ring_id: 0x0123, prod_idx: 0 };
  const fixture = wire(16,
    [0, 0x00, 0x70, 0x56, 0x34, 0x12, 0x00, 0x00, 0x00],
    [8, 0x00, 0x80], // 8192 << 2 | 0
    [10, 0x23, 0x01],
  );
  t.strictSame([...CmdqInit.encode(values)], fixture);
  t.strictSame(CmdqInit.decode(Uint8Array.from(fixture)), values);

  const other = {
    cmdq_pbl: 0x0f_0e0d_0c0b_0a09, cmdq_lvl: 2, cmdq_size: 0x1234, creq_ring_id: 0xbeef, prod_idx: 0x11223344,
  };
  const fixture2 = wire(16,
    [0, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00],
    [8, 0xd2, 0x48], // 0x1234 << 2 | 2 = 0x48d2
    [10, 0xef, 0xbe],
    [12, 0x44, 0x33, 0x22, 0x11],
  );
  t.strictSame([...CmdqInit.encode(other)], fixture2);
  t.strictSame(CmdqInit.decode(Uint8Array.from(fixture2)), other);
  t.throws(() => CmdqInit.encode({ cmdq_lvl: 4 }), RangeError);
  t.throws(() => CmdqInit.encode({ cmdq_size: 0x4000 }), RangeError);
});

t.test('cmdq_base: the 16-byte header of every command', async (t) => {
  const values = {
    opcode: 0x83, cmd_size: 1, flags: 0x0302, cookie: 0x8005, resp_size: 10, reserved8: 0x07,
    resp_addr: 0x0e_0d0c_0b0a_0908,
  };
  const fixture = wire(16,
    [0, 0x83, 0x01, 0x02, 0x03, 0x05, 0x80, 0x0a, 0x07],
    [8, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x00],
  );
  t.strictSame([...CmdqBase.encode(values)], fixture);
  t.strictSame(CmdqBase.decode(Uint8Array.from(fixture)), values);
});

t.test('side-buffer header: opcode, status, cookie, flags, resp_size', async (t) => {
  const values = { opcode: 0x83, status: 0x05, cookie: 0x1234, flags: 0x5678, resp_size: 10 };
  const fixture = wire(8, [0, 0x83, 0x05, 0x34, 0x12, 0x78, 0x56, 0x0a, 0x00]);
  t.equal(CreqRespSbHeader.size, 8);
  t.strictSame([...CreqRespSbHeader.encode(values)], fixture);
  t.strictSame(CreqRespSbHeader.decode(Uint8Array.from(fixture)), values);
});

t.test('channel registers and constants', async (t) => {
  t.equal(CMDQ_MAILBOX_OFFSET, 0x600);
  t.equal(CMDQ_PROD_OFFSET, 0x60c);
  t.equal(CMDQ_TRIGGER_OFFSET, 0x700);
  t.equal(CMDQ_TRIGGER_VALUE, 1);
  t.equal(CMDQ_FIRST_COMMAND_FLAG, 2 ** 31);
  t.equal(CMDQE_BYTES, 16);
  t.equal(CMDQ_DEPTH, 8192);
  t.equal(CMDQ_COOKIE_MASK, 8191);
  t.equal(CMDQ_COOKIE_BLOCKING, 0x8000);
});

t.test('command units and the producer word', async (t) => {
  t.equal(cmdqUnits(104), 7, 'CREATE_QP');
  t.equal(cmdqUnits(144), 9, 'MODIFY_QP');
  t.equal(cmdqUnits(160), 10, 'QUERY_FUNC side buffer');
  t.equal(cmdqUnits(16), 1);
  t.equal(cmdqUnits(17), 2);
  t.throws(() => cmdqUnits(-1), RangeError);
  t.equal(cmdqProdWord(1, true), 0x8000_0001, 'first command carries bit 31');
  t.equal(cmdqProdWord(1, false), 1);
  t.equal(cmdqProdWord(0x1_2345, false), 0x2345, 'only prod & 0xFFFF reaches the register');
  t.equal(cmdqProdWord(0x1_0000, true), 0x8000_0000);
});
