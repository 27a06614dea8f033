import t from 'tap';
import {
  SqSendHdr, SqRdmaHdr, SqSge, RqWqeHdr, SqPsnSearchExt, SqMsnSearch, WqeType, WqeFlags, RQ_WQE_TYPE_RCV, wqeTypeName,
  SLOT_BYTES, WQE_HEADER_BYTES, STATIC_WQE_BYTES, STATIC_WQE_SLOTS, STATIC_MAX_SGE, STATIC_MAX_INLINE_BYTES, SGE_BYTES,
  sqWqeWord0, rqWqeWord0, sqWqeSizeForSges, sqWqeSizeForInline,
} from '../firmware-hwrm/roce/wqe.ts';
import {
  SQ_SEND_HDR_FLAGS_SHIFT, SQ_SEND_HDR_FLAGS_WORD, SQ_SEND_HDR_WQE_SIZE_SHIFT, SQ_SEND_HDR_WQE_SIZE_WORD,
  SQ_SEND_HDR_INV_KEY_OR_IMM_DATA_WORD, SQ_RDMA_HDR_IMM_DATA_WORD, SQ_PSN_SEARCH_EXT_OPCODE_SHIFT,
  SQ_PSN_SEARCH_EXT_WORDS, SQ_MSN_SEARCH_WORDS, SQ_SGE_WORDS,
  setSqRdmaHdrWord0, setSqRdmaHdrLength, setSqRdmaHdrRemoteVa, setSqRdmaHdrRemoteKey, setSqSgeVaOrPa, setSqSgeLKey,
  setSqSgeSize,
  setSqPsnSearchExtWord0, setSqPsnSearchExtWord1, setSqPsnSearchExtWord2, sqPsnSearchExtWord0, sqPsnSearchExtWord1,
  sqPsnSearchExtWord2, setRqWqeHdrWord0, setRqWqeHdrWord2, rqWqeHdrWord2, rqWqeHdrWrId, sqMsnSearchStartPsn,
  sqMsnSearchNextPsn, sqMsnSearchStartIdx, sqMsnSearchWord0, sqMsnSearchWord1, setSqMsnSearchNextPsn,
} from '../firmware-hwrm/roce/wqe.g.ts';
import { PSN_MASK, psnPackets, psnPacketsByShift, psnAdd } from '../firmware-hwrm/roce/ib-transport.ts';
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
    imm_data: 0x0706_0504, length: 0x0b0a_0908, remote_va: 0x1716_1514_1312_1110n, remote_key: 0x1b1a_1918,
    timestamp: 0x1e_1d1c,
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
  const values = {
    start_psn: 0x12_3456, opcode: WqeType.READ_WQE, next_psn: 0x12_3459, flags: 0xa5, start_slot_idx: 24,
  };
  const fixture = wire(16, [0, 0x56, 0x34, 0x12, 0x06], [4, 0x59, 0x34, 0x12, 0xa5], [8, 0x18, 0x00]);
  t.equal(SqPsnSearchExt.size, 16);
  t.strictSame([...SqPsnSearchExt.encode(values)], fixture);
  t.strictSame(SqPsnSearchExt.decode(Uint8Array.from(fixture)), values);
});

t.test('sq_msn_search (P7): start_psn bits 0-23, next_psn 24-47, start_idx 48-63 of one u64', async (t) => {
  // rdma-core bnxt_re_update_msn_tbl / the kernel's SQ_MSN_SEARCH_* masks: 0xFFFFFF,
  // 0xFFFFFF000000 (shift 24), 0xFFFF000000000000 (shift 48).
  const values = { start_psn: 0x12_3456, next_psn: 0xab_cdef, start_idx: 0x0f18 };
  const fixture = wire(8, [0, 0x56, 0x34, 0x12, 0xef, 0xcd, 0xab, 0x18, 0x0f]);
  t.equal(SqMsnSearch.size, 8);
  t.equal(SQ_MSN_SEARCH_WORDS, 2);
  t.strictSame([...SqMsnSearch.encode(values)], fixture);
  t.strictSame(SqMsnSearch.decode(Uint8Array.from(fixture)), values);
  const u = new Uint32Array(Uint8Array.from(fixture).buffer);
  t.equal(sqMsnSearchStartPsn(u, 0), 0x12_3456);
  t.equal(sqMsnSearchNextPsn(u, 0), 0xab_cdef, 'next_psn crosses the two 32-bit halves');
  t.equal(sqMsnSearchStartIdx(u, 0), 0x0f18);
  const packed = new Uint32Array([sqMsnSearchWord0(0x12_3456, 0xab_cdef), sqMsnSearchWord1(0xab_cdef, 0x0f18)]);
  t.strictSame([...new Uint8Array(packed.buffer)], fixture, 'the word packers write the same bytes');
  setSqMsnSearchNextPsn(u, 0, 0x00_0001);
  t.strictSame([...new Uint8Array(u.buffer)], wire(8, [0, 0x56, 0x34, 0x12, 0x01, 0x00, 0x00, 0x18, 0x0f]),
    'set next_psn keeps its neighbours');
});

t.test('hot path: a static-mode READ WQE + PSN entry written with the word accessors matches the hand fixture',
  async (t) => {
  // ring of 4 WQEs followed by its PSN area; WQE 1, 2 SGEs
  const ring = new ArrayBuffer(4 * STATIC_WQE_BYTES + 4 * SqPsnSearchExt.size);
  const u32 = new Uint32Array(ring);
  const wqe = (1 * STATIC_WQE_BYTES) / 4;
  setSqRdmaHdrWord0(u32, wqe, sqWqeWord0(WqeType.READ_WQE, WqeFlags.SIGNAL_COMP, sqWqeSizeForSges(2)));
  setSqRdmaHdrLength(u32, wqe, 0x3000);
  setSqRdmaHdrRemoteVa(u32, wqe, 0x8765_4000, 0x7f);
  setSqRdmaHdrRemoteKey(u32, wqe, 0x0000_1234);
  for (let s = 0; s < 2; s++) {
    const sge = wqe + WQE_HEADER_BYTES / 4 + s * SQ_SGE_WORDS;
    setSqSgeVaOrPa(u32, sge, 0x1000_0000 + s * 0x2000, 0);
    setSqSgeLKey(u32, sge, 0x0000_0201);
    setSqSgeSize(u32, sge, s === 0 ? 0x2000 : 0x1000);
  }
  const psn = (4 * STATIC_WQE_BYTES) / 4 + 1 * SQ_PSN_SEARCH_EXT_WORDS;
  setSqPsnSearchExtWord0(u32, psn, sqPsnSearchExtWord0(0xff_fffe, WqeType.READ_WQE));
  setSqPsnSearchExtWord1(u32, psn, sqPsnSearchExtWord1(psnAdd(0xff_fffe, psnPackets(0x3000, 4096)), 0));
  setSqPsnSearchExtWord2(u32, psn, sqPsnSearchExtWord2(1 * STATIC_WQE_SLOTS));

  const bytes = new Uint8Array(ring);
  t.strictSame([...bytes.subarray(wqe * 4, wqe * 4 + 64)], wire(64,
    [0, 0x06, 0x01, 0x04],                  // READ, SIGNAL_COMP, 4 slots
    [8, 0x00, 0x30, 0x00, 0x00],            // length 0x3000
    [16, 0x00, 0x40, 0x65, 0x87, 0x7f, 0, 0, 0], // remote va 0x7F_8765_4000
    [24, 0x34, 0x12, 0x00, 0x00],           // rkey
    [32, 0x00, 0x00, 0x00, 0x10, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0x00, 0x20, 0, 0],
    [48, 0x00, 0x20, 0x00, 0x10, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0x00, 0x10, 0, 0],
  ));
  t.strictSame([...bytes.subarray(psn * 4, psn * 4 + 16)], wire(16,
    [0, 0xfe, 0xff, 0xff, 0x06], // start PSN 0xFFFFFE, opcode READ
    [4, 0x01, 0x00, 0x00, 0x00], // 3 packets later, wrapped: 0x000001
    [8, 0x08, 0x00],             // slot 8 = WQE 1
  ));
  t.same(bytes.subarray(0, wqe * 4).every((b) => b === 0), true, 'WQE 0 untouched');
});

t.test('hot path: RQ WQE word 0 and wr_id', async (t) => {
  const w = new Uint32Array(8);
  setRqWqeHdrWord0(w, 0, rqWqeWord0(3));
  setRqWqeHdrWord2(w, 0, rqWqeHdrWord2(0xa_bcde));
  t.strictSame([...new Uint8Array(w.buffer)], wire(32, [0, 0x80, 0x00, 0x03], [8, 0xde, 0xbc, 0x0a]));
  t.equal(rqWqeHdrWrId(w, 0), 0xa_bcde);
});

t.test('word helpers refuse values that do not fit', async (t) => {
  t.throws(() => sqWqeWord0(0x100, 0, 2), RangeError);
  t.throws(() => sqWqeWord0(0, 0, -1), RangeError);
  t.throws(() => rqWqeWord0(256), RangeError);
  t.throws(() => SqPsnSearchExt.encode({ opcode: 6, start_psn: 0x100_0000 }), RangeError);
  t.throws(() => SqPsnSearchExt.encode({ flags: 0, next_psn: 1.5 }), RangeError);
});

t.test('static-mode sizes, type values and PSN arithmetic', async (t) => {
  t.equal(SLOT_BYTES, 16);
  t.equal(WQE_HEADER_BYTES, 32);
  t.equal(STATIC_WQE_BYTES, 128);
  t.equal(STATIC_WQE_SLOTS, 8);
  t.equal(STATIC_MAX_SGE, 6);
  t.equal(STATIC_MAX_INLINE_BYTES, 96);
  t.equal(SQ_SEND_HDR_FLAGS_WORD * 4 + SQ_SEND_HDR_FLAGS_SHIFT / 8, 1, 'flags at byte 1');
  t.equal(SQ_SEND_HDR_WQE_SIZE_WORD * 4 + SQ_SEND_HDR_WQE_SIZE_SHIFT / 8, 2, 'wqe_size at byte 2');
  t.equal(SQ_SEND_HDR_INV_KEY_OR_IMM_DATA_WORD * 4, 4);
  t.equal(SQ_RDMA_HDR_IMM_DATA_WORD * 4, 4);
  t.equal(SGE_BYTES, 16);
  t.strictSame(WqeType, {
    SEND: 0x00, SEND_W_IMMEAD: 0x01, SEND_W_INVALID: 0x02, WRITE_WQE: 0x04, WRITE_W_IMMEAD: 0x05, READ_WQE: 0x06,
    ATOMIC_CS: 0x08, ATOMIC_FA: 0x0b, LOCAL_INVALID: 0x0c, FR_PMR: 0x0d, BIND: 0x0e, FR_PPMR: 0x0f,
  });
  t.strictSame(WqeFlags, {
    SIGNAL_COMP: 1, RD_OR_ATOMIC_FENCE: 2, UC_FENCE: 4, SE: 8, INLINE: 0x10, WQE_TS_EN: 0x20, DEBUG_TRACE: 0x40,
  });
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
  t.equal(SQ_PSN_SEARCH_EXT_OPCODE_SHIFT, 24);
});

t.test('psnPackets by shift is ceil(length / MTU), at least 1, for every 32-bit length and IB MTU', async (t) => {
  const wrong: string[] = [];
  for (let shift = 8; shift <= 12; shift++) {
    const mtu = 1 << shift;
    const lengths = [0, 1, 2, mtu - 1, mtu, mtu + 1, 2 * mtu, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 32 - mtu,
      2 ** 32 - mtu + 1, 2 ** 32 - 1];
    for (let k = 0; k < 2000; k++) lengths.push((Math.imul(k, 0x9e3779b1) >>> 0) % 2 ** 32);
    for (const n of lengths) {
      const want = n === 0 ? 1 : Math.ceil(n / mtu);
      if (psnPacketsByShift(n, shift) !== want || psnPackets(n, mtu) !== want) wrong.push(`${n} at ${mtu}`);
    }
  }
  t.same(wrong, []);
});
