// A TLV-encapsulated command, as Linux's bnxt_re sends MODIFY_ROCE_CC on P5 (qplib_sp.c
// bnxt_qplib_modify_cc, qplib_tlv.h): a 16-byte roce_tlv header (cmd_discr 0x8000 at 0,
// tlv_type at 4, length at 6, total_size in 16-byte units at 8), then the command itself. The
// firmware answers with the inner command's opcode and cookie; the framing of what follows
// is kept. Bytes are laid out by hand from those headers.
import t from 'tap';
import { openRoce } from './helpers/emu-roce-setup.ts';

const MODIFY_ROCE_CC = 0x8c;

function tlvModifyCc(cookie: number, totalUnits: number, baseBytes = 56): Uint8Array {
  const b = new Uint8Array(totalUnits * 16);
  const dv = new DataView(b.buffer);
  dv.setUint16(0, 0x8000, true); // CMD_DISCR_TLV_ENCAP
  b[3] = 0x1; // TLV_FLAGS_REQUIRED (| MORE when an extension follows)
  dv.setUint16(4, 0x3, true); // TLV_TYPE_ROCE_SP_COMMAND
  dv.setUint16(6, baseBytes, true);
  b[8] = totalUnits;
  b[16] = MODIFY_ROCE_CC; // cmdq_base.opcode
  b[17] = Math.ceil(baseBytes / 16); // cmd_size (units), as bnxt_qplib_rcfw_cmd_prep leaves it
  dv.setUint16(20, cookie, true); // cmdq_base.cookie
  return b;
}

t.test('MODIFY_ROCE_CC in a TLV: answered with its own opcode and cookie, and the next command is found', async (t) => {
  const { q } = openRoce();
  q.place(tlvModifyCc(0x4321, 8)); // header + 56-byte base + gen1 extension, 8 units in all
  const raw = new Uint8Array(16);
  raw.set([0x77, 1, 0, 0, 0x22, 0x11]); // then an unknown opcode, one unit
  q.place(raw);
  q.ring();
  const a = q.take()!;
  t.equal(a[0]! & 0x3f, 0x38, 'a QP-event CREQ entry');
  t.equal(a[1], 0, 'status SUCCESS');
  t.equal(a[2]! | (a[3]! << 8), 0x4321, 'the inner cookie');
  t.equal(a[9], MODIFY_ROCE_CC, 'event = the inner opcode');
  const b = q.take()!;
  t.equal(b[1], 3, 'the command after it: INVALID_CMD');
  t.equal(b[2]! | (b[3]! << 8), 0x1122, 'framed right after the 8 units');
});

t.test('a TLV MODIFY_ROCE_CC shorter than the base command is refused INVALID_PARAMETER', async (t) => {
  const { q } = openRoce();
  q.place(tlvModifyCc(0x4444, 3, 32));
  q.ring();
  const a = q.take()!;
  t.equal(a[1], 5, 'INVALID_PARAMETER');
  t.equal(a[2]! | (a[3]! << 8), 0x4444);
});
