import t from 'tap';
import {
  StatCtxAllocInput, StatCtxAllocOutput, StatCtxFreeInput, StatCtxFreeOutput, STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS,
  RingAllocInput, RingAllocOutput, RingFreeInput, RingFreeOutput,
  RING_ALLOC_REQ_RING_TYPE, RING_ALLOC_REQ_INT_MODE, RING_ALLOC_REQ_PAGE_SIZE, RING_ALLOC_REQ_ENABLES,
} from '../firmware-hwrm/hwrm/index.ts';
import { seq, zeros, u64pat, REQ_HDR, REQ_HDR_BYTES, RESP_HDR } from './helpers/hwrm-fixtures.ts';

// Fixtures follow hsi.h hwrm_ring_alloc/free, hwrm_stat_ctx_alloc/free in the offset-per-byte pattern of
// helpers/hwrm-fixtures.ts.

t.test('hwrm_stat_ctx_alloc_input (40): every field at its documented offset', async (t) => {
  const values = {
    ...REQ_HDR,
    stats_dma_addr: 0x151413121110, update_period_ms: 0x1b1a1918, stat_ctx_flags: 0x1c,
    stats_dma_length: 0x1f1e, flags: 0x2120, steering_tag: 0x2322,
  };
  const want = [...REQ_HDR_BYTES, ...u64pat(0x10), ...seq(0x18, 0x1c), 0, ...seq(0x1e, 0x23), 0, 0, 0, 0];
  t.equal(StatCtxAllocInput.size, 40);
  t.same([...StatCtxAllocInput.encode(values)], want);
  t.strictSame(StatCtxAllocInput.decode(Uint8Array.from(want)), values);
});

t.test('the RoCE statistics context bnxt_re allocates', async (t) => {
  const got = StatCtxAllocInput.encode({
    req_type: 0xb0, cmpl_ring: 0xffff, seq_id: 9, target_id: 0xffff, resp_addr: 0x3000,
    stats_dma_addr: 0x4_0000, update_period_ms: 1000, stat_ctx_flags: STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS.ROCE,
    stats_dma_length: 176,
  });
  t.same([...got], [
    0xb0, 0x00, 0xff, 0xff, 0x09, 0x00, 0xff, 0xff, 0x00, 0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, // stats_dma_addr
    0xe8, 0x03, 0x00, 0x00, // update_period_ms 1000
    0x01, 0x00, 0xb0, 0x00, // ROCE, unused, stats_dma_length 176
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  ]);
});

t.test('stat ctx responses and free: stat_ctx_id @8 / @16', async (t) => {
  const outValues = { ...RESP_HDR, stat_ctx_id: 0x0b0a0908, valid: 0x0f };
  const outWant = [...seq(0, 11), 0, 0, 0, 0x0f];
  for (const L of [StatCtxAllocOutput, StatCtxFreeOutput]) {
    t.same([...L.encode(outValues)], outWant, L.name);
    t.strictSame(L.decode(Uint8Array.from(outWant)), outValues, L.name);
  }
  const values = { ...REQ_HDR, stat_ctx_id: 0x13121110 };
  const want = [...REQ_HDR_BYTES, 0x10, 0x11, 0x12, 0x13, 0, 0, 0, 0];
  t.same([...StatCtxFreeInput.encode(values)], want);
  t.strictSame(StatCtxFreeInput.decode(Uint8Array.from(want)), values);
});

t.test('hwrm_ring_alloc_input (96): every field at its documented offset', async (t) => {
  const values = {
    ...REQ_HDR,
    enables: 0x13121110, ring_type: 0x14, cmpl_coal_cnt: 0x15, flags: 0x1716, page_tbl_addr: 0x1d1c1b1a1918,
    fbo: 0x23222120, page_size: 0x24, page_tbl_depth: 0x25, schq_id: 0x2726, length: 0x2b2a2928,
    logical_id: 0x2d2c, cmpl_ring_id: 0x2f2e, queue_id: 0x3130, rx_buf_size: 0x3332, rx_ring_id: 0x3534,
    nq_ring_id: 0x3736, ring_arb_cfg: 0x3938, steering_tag: 0x3b3a, stat_ctx_id: 0x43424140,
    max_bw: 0x4b4a4948, int_mode: 0x4c, mpc_chnls_type: 0x4d, rx_rate_profile_sel: 0x4e,
    cq_handle: 0x555453525150, dpi: 0x5958,
  };
  // reserved3 @60..63, reserved4 @68..71, unused_4 @79, unused_5 @90..95.
  const want = [
    ...REQ_HDR_BYTES, ...seq(0x10, 0x17), ...u64pat(0x18), ...seq(0x20, 0x3b), 0, 0, 0, 0,
    ...seq(0x40, 0x43), 0, 0, 0, 0, ...seq(0x48, 0x4e), 0, ...u64pat(0x50), 0x58, 0x59, ...zeros(6),
  ];
  t.equal(RingAllocInput.size, 96);
  t.equal(want.length, 96);
  t.same([...RingAllocInput.encode(values)], want);
  t.strictSame(RingAllocInput.decode(Uint8Array.from(want)), values);
});

t.test('an NQ allocation as the kernel sends it: type 5, MSIX, 4 KB pages, one page table', async (t) => {
  const got = RingAllocInput.encode({
    req_type: 0x50, cmpl_ring: 0xffff, seq_id: 0x21, target_id: 0xffff, resp_addr: 0x1_0000_0000,
    enables: 0, ring_type: RING_ALLOC_REQ_RING_TYPE.NQ, page_tbl_addr: 0x1_2345_6000,
    page_size: RING_ALLOC_REQ_PAGE_SIZE['4KB'], page_tbl_depth: 1, length: 65536, logical_id: 1,
    int_mode: RING_ALLOC_REQ_INT_MODE.MSIX,
  });
  t.same([...got], [
    0x50, 0x00, 0xff, 0xff, 0x21, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, // enables 0, ring_type NQ
    0x00, 0x60, 0x45, 0x23, 0x01, 0x00, 0x00, 0x00, // page_tbl_addr
    0x00, 0x00, 0x00, 0x00, 0x0c, 0x01, 0x00, 0x00, // fbo, page_size 12, depth 1
    0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, // length 65536, logical_id 1
    ...zeros(28),
    0x02, 0x00, 0x00, 0x00, // int_mode MSIX @76
    ...zeros(16),
  ]);
});

t.test('hwrm_ring_alloc_output (16): ring_id @8, logical_ring_id @10, push_buffer_index @12', async (t) => {
  const values = { ...RESP_HDR, ring_id: 0x0908, logical_ring_id: 0x0b0a, push_buffer_index: 0x0c, valid: 0x0f };
  const want = [...seq(0, 12), 0, 0, 0x0f];
  t.same([...RingAllocOutput.encode(values)], want);
  t.strictSame(RingAllocOutput.decode(Uint8Array.from(want)), values);
  const r =
    RingAllocOutput.decode(Uint8Array.from([0, 0, 0x50, 0, 0x21, 0, 16, 0, 0x40, 0x02, 0x01, 0x00, 0, 0, 0, 1]));
  t.equal(r.ring_id, 0x240);
  t.equal(r.logical_ring_id, 1);
  t.equal(r.valid, 1);
});

t.test('hwrm_ring_free_input (32) and output (16)', async (t) => {
  const values =
    { ...REQ_HDR, ring_type: 0x10, flags: 0x11, ring_id: 0x1312, prod_idx: 0x17161514, opaque: 0x1b1a1918 };
  const want = [...REQ_HDR_BYTES, ...seq(0x10, 0x1b), 0, 0, 0, 0];
  t.equal(RingFreeInput.size, 32);
  t.same([...RingFreeInput.encode(values)], want);
  t.strictSame(RingFreeInput.decode(Uint8Array.from(want)), values);
  const outWant = [...seq(0, 7), ...zeros(7), 0x0f];
  t.same([...RingFreeOutput.encode({ ...RESP_HDR, valid: 0x0f })], outWant);
  t.strictSame(RingFreeOutput.decode(Uint8Array.from(outWant)), { ...RESP_HDR, valid: 0x0f });
});

t.test('ring types and modes of 3.10', async (t) => {
  t.same(RING_ALLOC_REQ_RING_TYPE, { L2_CMPL: 0, TX: 1, RX: 2, ROCE_CMPL: 3, RX_AGG: 4, NQ: 5 });
  t.same(RING_ALLOC_REQ_INT_MODE, { LEGACY: 0, RSVD: 1, MSIX: 2, POLL: 3 });
  t.equal(RING_ALLOC_REQ_ENABLES.NQ_RING_ID_VALID, 0x80);
  t.equal(RING_ALLOC_REQ_ENABLES.DPI_VALID, 0x2000);
  t.equal(RING_ALLOC_REQ_PAGE_SIZE['2MB'], 21);
});
