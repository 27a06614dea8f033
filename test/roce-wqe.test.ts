import t from 'tap';
import {
  SqSendHdr, SqRdmaHdr, SqSge, RqWqeHdr, SqPsnSearchExt, WqeType, WqeFlags, RQ_WQE_TYPE_RCV, wqeTypeName,
  SLOT_BYTES, WQE_HEADER_BYTES, STATIC_WQE_BYTES, STATIC_WQE_SLOTS, STATIC_MAX_SGE, STATIC_MAX_INLINE_BYTES,
  SQ_WQE_TYPE_OFFSET, SQ_WQE_FLAGS_OFFSET, SQ_WQE_SIZE_OFFSET, SQ_SEND_INV_KEY_OR_IMM_DATA_OFFSET, SQ_WQE_LENGTH_OFFSET,
  SQ_RDMA_IMM_DATA_OFFSET, SQ_RDMA_REMOTE_VA_OFFSET, SQ_RDMA_REMOTE_KEY_OFFSET, WQE_SGE_OFFSET,
  SGE_BYTES, SGE_VA_OFFSET, SGE_L_KEY_OFFSET, SGE_SIZE_OFFSET, RQ_WQE_WR_ID_OFFSET, RQ_WQE_WR_ID_MASK,
  PSN_SEARCH_EXT_BYTES, PSN_SEARCH_OPCODE_START_PSN_OFFSET, PSN_SEARCH_FLAGS_NEXT_PSN_OFFSET, PSN_SEARCH_START_SLOT_IDX_OFFSET,
  PSN_SEARCH_OPCODE_SHIFT,
  sqWqeWord0, rqWqeWord0, psnSearchWord0, psnSearchWord1, sqWqeSizeForSges, sqWqeSizeForInline,
} from '../firmware-hwrm/roce/wqe.ts';
import { PSN_MASK, psnPackets, psnAdd } from '../firmware-hwrm/roce/ib-transport.ts';
import { wire, seq } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from the offsets of roce_hsi.h's structs.

t.test('SEND header: type, flags, wqe_size in slots, immediate, length, UD fields, timestamp', async (t) => {
  const values = {
    wqe_type: WqeType.SEND, flags: WqeFlags.SIGNAL_COMP | WqeFlags.SE, wqe_size: 4,
    inv_key_or_imm_data: 0x0706_0504, length: 0x0b0a_0908, q_key: 0x0f0e_0d0c,
    dst_qp: 0x12_3456, avid: 0x0a_bcde, timestamp: 0x1e_1d1c,
  };
  const fixture = wire(32,
    [0, 0x00, 0x09, 0x04],
    [4, ...seq(0x04, 12)],
    [16, 0x56, 0x34, 0x12, 0x00],
    [20, 0xde, 0xbc, 0x0a, 0x00],
    [28, 0x1c, 0x1d, 0x1e, 0x00],
  );
  t.strictSame([...SqSendHdr.encode(values)], fixture);
  t.strictSame(SqSendHdr.decode(Uint8Array.from(fixture)), values);
});

t.test('RDMA_READ header: remote va and key at bytes 16-27', async (t) => {
  const values = {
    wqe_type: WqeType.READ_WQE, flags: WqeFlags.SIGNAL_COMP, wqe_size: 3,
    imm_data: 0x0706_0504, length: 0x0b0a_0908, remote_va: 0x1716_1514_1312_1110n, remote_key: 0x1b1a_1918, timestamp: 0x1e_1d1c,
  };
  const fixture = wire(32,
    [0, 0x06, 0x01, 0x03],
    [4, ...seq(0x04, 8)],
    [16, ...seq(0x10, 12)],
    [28, 0x1c, 0x1d, 0x1e, 0x00],
  );
  t.strictSame([...SqRdmaHdr.encode(values)], fixture);
  t.strictSame(SqRdmaHdr.decode(Uint8Array.from(fixture)), values);
});

t.test('SGE: va u64, lkey u32, size u32', async (t) => {
  const values = { va_or_pa: 0x0f_1514_1312_1110, l_key: 0x1b1a_1918, size: 0x1f1e_1d1c };
  const fixture = wire(16, [0, ...seq(0x10, 6), 0x0f, 0x00], [8, ...seq(0x18, 8)]);
  t.strictSame([...SqSge.encode(values)], fixture);
  t.strictSame(SqSge.decode(Uint8Array.from(fixture)), values);
});

t.test('RQ WQE header: RCV, wqe_size, 20-bit wr_id at 8', async (t) => {
  const values = { wqe_type: RQ_WQE_TYPE_RCV, flags: 0, wqe_size: 3, wr_id: 0xa_bcde };
  const fixture = wire(32, [0, 0x80, 0x00, 0x03], [8, 0xde, 0xbc, 0x0a, 0x00]);
  t.strictSame([...RqWqeHdr.encode(values)], fixture);
  t.strictSame(RqWqeHdr.decode(Uint8Array.from(fixture)), values);
});

t.test('psn_search_ext: opcode/start_psn, flags/next_psn, start_slot_idx', async (t) => {
  const values = { start_psn: 0x12_3456, opcode: WqeType.READ_WQE, next_psn: 0x12_3459, flags: 0xa5, start_slot_idx: 24 };
  const fixture = wire(16, [0, 0x56, 0x34, 0x12, 0x06], [4, 0x59, 0x34, 0x12, 0xa5], [8, 0x18, 0x00]);
  t.equal(SqPsnSearchExt.size, 16);
  t.strictSame([...SqPsnSearchExt.encode(values)], fixture);
  t.strictSame(SqPsnSearchExt.decode(Uint8Array.from(fixture)), values);
});

t.test('hot path: a static-mode READ WQE + PSN entry written with the numeric constants matches the hand fixture', async (t) => {
  // ring of 4 WQEs followed by its PSN area; WQE 1, 2 SGEs
  const ring = new ArrayBuffer(4 * STATIC_WQE_BYTES + 4 * PSN_SEARCH_EXT_BYTES);
  const u32 = new Uint32Array(ring);
  const view = new DataView(ring);
  const wqe = 1 * STATIC_WQE_BYTES;
  u32[(wqe + SQ_WQE_TYPE_OFFSET) / 4] = sqWqeWord0(WqeType.READ_WQE, WqeFlags.SIGNAL_COMP, sqWqeSizeForSges(2));
  u32[(wqe + SQ_WQE_LENGTH_OFFSET) / 4] = 0x3000;
  u32[(wqe + SQ_RDMA_REMOTE_VA_OFFSET) / 4] = 0x8765_4000;
  u32[(wqe + SQ_RDMA_REMOTE_VA_OFFSET) / 4 + 1] = 0x7f;
  u32[(wqe + SQ_RDMA_REMOTE_KEY_OFFSET) / 4] = 0x0000_1234;
  for (let s = 0; s < 2; s++) {
    const sge = wqe + WQE_SGE_OFFSET + s * SGE_BYTES;
    u32[(sge + SGE_VA_OFFSET) / 4] = 0x1000_0000 + s * 0x2000;
    u32[(sge + SGE_L_KEY_OFFSET) / 4] = 0x0000_0201;
    u32[(sge + SGE_SIZE_OFFSET) / 4] = s === 0 ? 0x2000 : 0x1000;
  }
  const psn = 4 * STATIC_WQE_BYTES + 1 * PSN_SEARCH_EXT_BYTES;
  u32[(psn + PSN_SEARCH_OPCODE_START_PSN_OFFSET) / 4] = psnSearchWord0(WqeType.READ_WQE, 0xff_fffe);
  u32[(psn + PSN_SEARCH_FLAGS_NEXT_PSN_OFFSET) / 4] = psnSearchWord1(0, psnAdd(0xff_fffe, psnPackets(0x3000, 4096)));
  view.setUint16(psn + PSN_SEARCH_START_SLOT_IDX_OFFSET, 1 * STATIC_WQE_SLOTS, true);

  const bytes = new Uint8Array(ring);
  t.strictSame([...bytes.subarray(wqe, wqe + 64)], wire(64,
    [0, 0x06, 0x01, 0x04],                  // READ, SIGNAL_COMP, 4 slots
    [8, 0x00, 0x30, 0x00, 0x00],            // length 0x3000
    [16, 0x00, 0x40, 0x65, 0x87, 0x7f, 0, 0, 0], // remote va 0x7F_8765_4000
    [24, 0x34, 0x12, 0x00, 0x00],           // rkey
    [32, 0x00, 0x00, 0x00, 0x10, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0x00, 0x20, 0, 0],
    [48, 0x00, 0x20, 0x00, 0x10, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0x00, 0x10, 0, 0],
  ));
  t.strictSame([...bytes.subarray(psn, psn + 16)], wire(16,
    [0, 0xfe, 0xff, 0xff, 0x06], // start PSN 0xFFFFFE, opcode READ
    [4, 0x01, 0x00, 0x00, 0x00], // 3 packets later, wrapped: 0x000001
    [8, 0x08, 0x00],             // slot 8 = WQE 1
  ));
  t.same(bytes.subarray(0, wqe).every((b) => b === 0), true, 'WQE 0 untouched');
});

t.test('hot path: RQ WQE word 0 and wr_id', async (t) => {
  const w = new Uint32Array(8);
  w[0] = rqWqeWord0(3);
  w[RQ_WQE_WR_ID_OFFSET / 4] = 0xa_bcde & RQ_WQE_WR_ID_MASK;
  t.strictSame([...new Uint8Array(w.buffer)], wire(32, [0, 0x80, 0x00, 0x03], [8, 0xde, 0xbc, 0x0a]));
});

t.test('word helpers refuse values that do not fit', async (t) => {
  t.throws(() => sqWqeWord0(0x100, 0, 2), RangeError);
  t.throws(() => sqWqeWord0(0, 0, -1), RangeError);
  t.throws(() => rqWqeWord0(256), RangeError);
  t.throws(() => psnSearchWord0(6, 0x100_0000), RangeError);
  t.throws(() => psnSearchWord1(0, 1.5), RangeError);
});

t.test('static-mode sizes, type values and PSN arithmetic', async (t) => {
  t.equal(SLOT_BYTES, 16);
  t.equal(WQE_HEADER_BYTES, 32);
  t.equal(STATIC_WQE_BYTES, 128);
  t.equal(STATIC_WQE_SLOTS, 8);
  t.equal(STATIC_MAX_SGE, 6);
  t.equal(STATIC_MAX_INLINE_BYTES, 96);
  t.equal(SQ_WQE_FLAGS_OFFSET, 1);
  t.equal(SQ_WQE_SIZE_OFFSET, 2);
  t.equal(SQ_SEND_INV_KEY_OR_IMM_DATA_OFFSET, 4);
  t.equal(SQ_RDMA_IMM_DATA_OFFSET, 4);
  t.strictSame(WqeType, {
    SEND: 0x00, SEND_W_IMMEAD: 0x01, SEND_W_INVALID: 0x02, WRITE_WQE: 0x04, WRITE_W_IMMEAD: 0x05, READ_WQE: 0x06,
    ATOMIC_CS: 0x08, ATOMIC_FA: 0x0b, LOCAL_INVALID: 0x0c, FR_PMR: 0x0d, BIND: 0x0e, FR_PPMR: 0x0f,
  });
  t.strictSame(WqeFlags, { SIGNAL_COMP: 1, RD_OR_ATOMIC_FENCE: 2, UC_FENCE: 4, SE: 8, INLINE: 0x10, WQE_TS_EN: 0x20, DEBUG_TRACE: 0x40 });
  t.equal(wqeTypeName(6), 'READ_WQE');
  t.equal(sqWqeSizeForSges(0), 2);
  t.equal(sqWqeSizeForSges(6), 8);
  t.equal(sqWqeSizeForInline(17), 4);
  t.equal(sqWqeSizeForInline(96), 8);
  t.equal(psnPackets(0, 1024), 1, 'a zero-length message is one packet');
  t.equal(psnPackets(4096, 1024), 4);
  t.equal(psnPackets(4097, 1024), 5);
  t.equal(psnAdd(0xff_ffff, 1), 0);
  t.equal(PSN_MASK, 0xff_ffff);
  t.equal(PSN_SEARCH_OPCODE_SHIFT, 24);
});
