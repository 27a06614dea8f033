// Issue 11 item 7: the L2 receive path RoCE frames arrive through. The driver builds it as Linux
// bnxt_en has it whenever bnxt_re runs (an L2 completion ring and RX ring, VNIC_ALLOC, VNIC_CFG
// with ROCE_DUAL_VNIC_MODE on the default VNIC: bnxt.c bnxt_hwrm_vnic_cfg / bnxt_get_roce_vnic_mode,
// bnxt_ulp.c bnxt_register_dev; CFA_L2_FILTER_ALLOC for its MAC: bnxt_hwrm_set_vnic_filter; iPXE
// and DPDK the same) and tears it down in reverse. The software NIC drops RoCE frames for the
// function (counted: dropNoL2Filter) until a receive filter for its MAC steers to a VNIC in a RoCE
// mode. Request bytes are read at bnxt_hsi.h offsets; response bytes are built by hand.
import t from 'tap';
import { bringUp as driverBringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { bringUpRoce, tearDownRoce } from '../lib/bnxt/roce-device.ts';
import { HwrmChannel } from '../lib/bnxt/hwrm-channel.ts';
import { Nic, Qp, Region } from '../lib/index.ts';
import * as H from '../firmware-hwrm/hwrm/index.ts';
import { emuDevice } from './helpers/emu-device.ts';
import { recordHwrmRequests, type RecordedRequest } from './helpers/hwrm-request-recorder.ts';
import { EmuRig, bringUp as rigBringUp } from './helpers/emu-roce-setup.ts';
import { engineCounters } from './helpers/qp-data.ts';

// bnxt_hsi.h req_type values.
const REQ = {
  RING_ALLOC: 0x50, RING_FREE: 0x51, VNIC_ALLOC: 0x40, VNIC_FREE: 0x41, VNIC_CFG: 0x42, STAT_CTX_ALLOC: 0xb0,
  STAT_CTX_FREE: 0xb1, CFA_L2_FILTER_ALLOC: 0x90, CFA_L2_FILTER_FREE: 0x91, CFA_L2_SET_RX_MASK: 0x93,
  FUNC_DRV_UNRGTR: 0x1a,
} as const;
const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const u64 = (b: Uint8Array, at: number) => u32(b, at) + u32(b, at + 4) * 2 ** 32;

interface Run {
  readonly requests: RecordedRequest[];
  readonly answers: Map<number, Uint8Array[]>;
  readonly atOpen: number;
  readonly mac: Uint8Array;
}

/** The driver's bring-up and teardown on a software NIC, every request's bytes and every answer's. */
function driverRun(): Run {
  const d = emuDevice();
  const rec = recordHwrmRequests(d);
  const answers = new Map<number, Uint8Array[]>();
  const send = HwrmChannel.prototype.send;
  // The answers as the firmware wrote them: the response buffer's bytes after each request.
  HwrmChannel.prototype.send = function (this: HwrmChannel, ...args: Parameters<typeof send>) {
    const r = send.apply(this, args);
    const resp = (this as unknown as { resp: { bytes: Uint8Array } }).resp.bytes;
    const type = args[0].req_type;
    answers.set(type, [...(answers.get(type) ?? []), resp.slice(0, u16(resp, 6))]);
    return r;
  } as typeof send;
  try {
    const fn = driverBringUp(rec.device);
    if (!fn.ok) throw new Error(fn.error);
    const roce = bringUpRoce(fn.value, Uint8Array.from([10, 77, 1, 9]));
    if (!roce.ok) throw new Error(roce.error);
    const atOpen = rec.requests.length;
    tearDownRoce(roce.value);
    tearDown(fn.value);
    return { requests: rec.requests, answers, atOpen, mac: fn.value.info.mac };
  } finally {
    HwrmChannel.prototype.send = send;
    d.close();
  }
}

t.test('bring-up builds the L2 receive path, each request as bnxt_hsi.h lays it out', async (t) => {
  const run = driverRun();
  const open = run.requests.slice(0, run.atOpen);
  const of = (type: number) => open.filter((r) => r.reqType === type).map((r) => r.bytes);
  const answer = (type: number, i = 0) => run.answers.get(type)![i]!;
  // hwrm_ring_alloc_input: ring_type @20, length @40, cmpl_ring_id @46, rx_buf_size @50, nq_ring_id @54,
  // stat_ctx_id @64; hwrm_ring_alloc_output: ring_id @8.
  const rings = of(REQ.RING_ALLOC);
  const ringIds = run.answers.get(REQ.RING_ALLOC)!.map((a) => u16(a, 8));
  t.same(rings.map((b) => b[20]), [0x5, 0x5, 0x0, 0x2], 'the CREQ, the NQ, then L2_CMPL and RX');
  const [, nqId, cmplId, rxId] = ringIds;
  t.equal(u16(rings[2]!, 54), nqId, 'the completion ring names the CQs\' NQ');
  t.equal(u32(rings[2]!, 16) & 0x80, 0x80, 'enables NQ_RING_ID_VALID');
  t.equal(u16(rings[3]!, 46), cmplId, 'the RX ring names its completion ring');
  t.equal(u16(rings[3]!, 50), 2048, 'rx_buf_size');
  t.equal(u32(rings[3]!, 16), 0x100, 'enables RX_BUF_SIZE_VALID (as bnxt_en 6.12 sends it)');
  const l2Stat = u32(answer(REQ.STAT_CTX_ALLOC, 1), 8);
  t.equal(u32(rings[3]!, 64), l2Stat, 'with its own (second, non-RoCE) statistics context');
  t.equal(of(REQ.STAT_CTX_ALLOC)[1]![28], 0, 'stat_ctx_flags: not ROCE');

  // hwrm_vnic_alloc_input: flags @16 (DEFAULT 0x1); _output: vnic_id @8.
  t.equal(u32(of(REQ.VNIC_ALLOC)[0]!, 16), 1, 'VNIC_ALLOC: the default VNIC');
  const vnicId = u32(answer(REQ.VNIC_ALLOC), 8);
  // hwrm_vnic_cfg_input: flags @16, enables @20, vnic_id @24, mru @34, default_rx_ring_id @36,
  // default_cmpl_ring_id @38. ROCE_DUAL_VNIC_MODE 0x8; enables DEFAULT_RX_RING_ID 0x20 |
  // DEFAULT_CMPL_RING_ID 0x40 (bnxt_en fills mru beside them).
  const cfg = of(REQ.VNIC_CFG)[0]!;
  t.equal(u32(cfg, 16), 0x8, 'VNIC_CFG flags: ROCE_DUAL_VNIC_MODE');
  t.equal(u32(cfg, 20), 0x60, 'enables: DEFAULT_RX_RING_ID, DEFAULT_CMPL_RING_ID');
  t.same([u16(cfg, 24), u16(cfg, 36), u16(cfg, 38)], [vnicId, rxId, cmplId], 'the VNIC, its RX and completion ring');
  t.equal(u16(cfg, 34), 9000 + 18, 'mru: the MTU, an Ethernet header and a VLAN tag');
  // hwrm_cfa_l2_filter_alloc_input: flags @16 (PATH_RX 0x1 | OUTERMOST 0x8), enables @20 (L2_ADDR 0x1 | L2_ADDR_MASK
  // 0x2 | DST_ID 0x8000), l2_addr @24, l2_addr_mask @32, dst_id @78; _output: l2_filter_id @8 (u64).
  const filter = of(REQ.CFA_L2_FILTER_ALLOC)[0]!;
  t.equal(u32(filter, 16), 0x9, 'flags: PATH_RX, OUTERMOST');
  t.equal(u32(filter, 20), 0x8003, 'enables: L2_ADDR, L2_ADDR_MASK, DST_ID');
  t.same([...filter.subarray(24, 30)], [...run.mac], 'l2_addr: the function\'s MAC (FUNC_QCAPS)');
  t.same([...filter.subarray(32, 38)], [0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 'l2_addr_mask: every bit');
  t.equal(u16(filter, 78), vnicId, 'dst_id: the VNIC');
  // hwrm_cfa_l2_set_rx_mask_input: vnic_id @16, mask @20 (BCAST 0x8).
  const mask = of(REQ.CFA_L2_SET_RX_MASK)[0]!;
  t.same([u32(mask, 16), u32(mask, 20)], [vnicId, 0x8], 'RX mask: broadcast, on the VNIC');
  const types = open.map((r) => r.reqType);
  t.ok(types.indexOf(REQ.VNIC_ALLOC) < types.indexOf(REQ.VNIC_CFG) &&
    types.indexOf(REQ.VNIC_CFG) < types.indexOf(REQ.CFA_L2_FILTER_ALLOC), 'VNIC_ALLOC, VNIC_CFG, then the filter');

  // Teardown in reverse: filter, VNIC, RX ring, completion ring, L2 statistics context
  // (hwrm_ring_free_input: ring_type @16, ring_id @18).
  const close = run.requests.slice(run.atOpen);
  const freeing = [REQ.CFA_L2_FILTER_FREE, REQ.VNIC_FREE, REQ.STAT_CTX_FREE] as number[];
  const l2Free = close.filter((r) => freeing.includes(r.reqType)
    || (r.reqType === REQ.RING_FREE && (r.bytes[16] === 0x0 || r.bytes[16] === 0x2)));
  t.same(l2Free.map((r) => [r.reqType, r.reqType === REQ.RING_FREE ? r.bytes[16] : -1]), [
    [REQ.CFA_L2_FILTER_FREE, -1], [REQ.VNIC_FREE, -1], [REQ.RING_FREE, 0x2], [REQ.RING_FREE, 0x0],
    [REQ.STAT_CTX_FREE, -1], [REQ.STAT_CTX_FREE, -1],
  ], 'FILTER_FREE, VNIC_FREE, RING_FREE RX, RING_FREE L2_CMPL, the L2 then the RoCE statistics context');
  t.same(close.filter((r) => r.reqType === REQ.RING_FREE && r.bytes[16] !== 0x5).map((r) => u16(r.bytes, 18)),
    [rxId, cmplId], 'each L2 ring freed by its id');
  const filterId = u64(answer(REQ.CFA_L2_FILTER_ALLOC), 8);
  t.equal(u64(close.find((r) => r.reqType === REQ.CFA_L2_FILTER_FREE)!.bytes, 16), filterId, 'FILTER_FREE names it');
});

// The model's answers to the L2 commands, at bnxt_hsi.h offsets, and when its RoCE receive path opens.
t.test('the software NIC answers the L2 commands in their hsi.h forms; only they open RoCE receive', async (t) => {
  const rig = new EmuRig();
  const setup = rigBringUp(rig);
  const engine = rig.model.engine;
  const EN = H.FUNC_CFG_REQ_ENABLES;
  rig.hwrm(H.HWRM_COMMANDS.FUNC_CFG, {
    fid: H.HWRM_FID_SELF, enables: EN.NUM_MSIX | EN.NUM_STAT_CTXS | EN.NUM_CMPL_RINGS | EN.NUM_RX_RINGS,
    num_msix: 4, num_stat_ctxs: 2, num_cmpl_rings: 1, num_rx_rings: 1,
  });
  const ring = (type: number, fields: Record<string, number>) => {
    const mem = rig.alloc(4096);
    const out = rig.hwrm(H.HWRM_COMMANDS.RING_ALLOC, {
      ring_type: type, page_tbl_addr: mem.iova, page_tbl_depth: 0, page_size: 12, length: 64, ...fields,
    });
    t.equal(u16(out, 0), 0, `RING_ALLOC type ${type}: error_code 0`);
    return u16(out, 8);
  };
  const cmpl = ring(0x0, { nq_ring_id: setup.nqRingId, enables: 0x80 });
  const rx = ring(0x2, { cmpl_ring_id: cmpl, rx_buf_size: 2048, stat_ctx_id: setup.statCtxId, enables: 0x108 });
  // hwrm_vnic_alloc_output (16 B): error_code @0, req_type @2 (0x40), resp_len @6 (16), vnic_id @8, valid @15.
  const va = rig.hwrm(H.HWRM_COMMANDS.VNIC_ALLOC, { flags: 1 });
  t.same([u16(va, 0), u16(va, 2), u16(va, 6), va[15]], [0, 0x40, 16, 1], 'VNIC_ALLOC answered, 16 bytes, valid');
  const vnic = u32(va, 8);
  const mac = rig.model.bus.config.mac;
  const filterAlloc = () => {
    const out = rig.hwrm(H.HWRM_COMMANDS.CFA_L2_FILTER_ALLOC, {
      flags: 1, enables: 0x8003, l2_addr: mac, l2_addr_mask: Uint8Array.from([255, 255, 255, 255, 255, 255]),
      dst_id: vnic,
    });
    // hwrm_cfa_l2_filter_alloc_output (24 B): resp_len @6 (24), l2_filter_id @8 (u64), flow_id @16, valid @23.
    t.same([u16(out, 0), u16(out, 2), u16(out, 6), out[23]], [0, 0x90, 24, 1], 'FILTER_ALLOC answered, 24 bytes');
    return u64(out, 8);
  };
  const cfg = (flags: number) => {
    const out = rig.hwrm(H.HWRM_COMMANDS.VNIC_CFG, {
      vnic_id: vnic, flags, enables: 0x70, mru: 1518, default_rx_ring_id: rx, default_cmpl_ring_id: cmpl,
    });
    t.same([u16(out, 0), u16(out, 6)], [0, 16], `VNIC_CFG flags 0x${flags.toString(16)} answered`);
  };
  t.equal(engine.roceReceivePath, false, 'no VNIC, no filter: closed');
  cfg(0);
  const first = filterAlloc();
  t.equal(engine.roceReceivePath, false, 'a filter to a VNIC in no RoCE mode (an L2-only netdev): closed');
  cfg(0x8);
  t.equal(engine.roceReceivePath, true, 'the VNIC in ROCE_DUAL_VNIC_MODE: open');
  const free = rig.hwrm(H.HWRM_COMMANDS.CFA_L2_FILTER_FREE, { l2_filter_id: first });
  t.same([u16(free, 0), u16(free, 6)], [0, 16], 'FILTER_FREE answered');
  t.equal(engine.roceReceivePath, false, 'the filter freed: closed again');
  const other = rig.hwrm(H.HWRM_COMMANDS.CFA_L2_FILTER_ALLOC, {
    flags: 1, enables: 0x8003, l2_addr: Uint8Array.from([2, 0, 0, 0, 0, 0x99]), dst_id: vnic,
  });
  t.equal(u16(other, 0), 0, 'a filter for another MAC is taken');
  t.equal(engine.roceReceivePath, false, 'but does not open the port\'s MAC');
  filterAlloc();
  t.equal(engine.roceReceivePath, true, 'the MAC again: open');
  rig.hwrm(H.HWRM_COMMANDS.VNIC_FREE, { vnic_id: vnic });
  t.equal(engine.roceReceivePath, false, 'the VNIC freed: closed');
  rig.hwrm(H.HWRM_COMMANDS.FUNC_RESET, {});
  t.equal(engine.roceReceivePath, false, 'FUNC_RESET: closed');
});

t.test('without a VNIC in RoCE mode (the old driver built none) every RoCE frame is dropped, counted', async (t) => {
  const send = HwrmChannel.prototype.send;
  // The old driver: no VNIC in RoCE mode (its VNIC_CFG without the flag stands for none at all).
  HwrmChannel.prototype.send = function (this: HwrmChannel, ...args: Parameters<typeof send>) {
    const body = args[1] as Record<string, unknown>;
    if (args[0].req_type === REQ.VNIC_CFG) body['flags'] = 0;
    return send.apply(this, args);
  } as typeof send;
  const nic = Nic.open('emu', { stepped: true });
  HwrmChannel.prototype.send = send;
  if (!nic.ok) return void t.fail(nic.error);
  t.teardown(() => nic.value.close());
  const a = Qp.make(nic.value), b = Qp.make(nic.value);
  const ra = Region.alloc(nic.value, 4096), rb = Region.alloc(nic.value, 4096);
  if (!a.ok || !b.ok || !ra.ok || !rb.ok) return void t.fail('setup');
  t.ok(a.value.connect(b.value.endpoint).ok && b.value.connect(a.value.endpoint).ok, 'connected');
  b.value.receive(rb.value, 0, 64);
  a.value.send(ra.value, 0, 64);
  const r = a.value.wait('send', 60e6);
  t.ok(r !== undefined && !r.ok, 'the send fails: nothing the port received reached a QP');
  if (r && !r.ok) t.match(r.error, /retry/i, 'its retries ran out');
  const c = engineCounters(nic.value);
  t.ok(c['dropNoL2Filter']! > 0, `RoCE frames dropped for want of a receive path (${c['dropNoL2Filter']})`);
  t.equal(c['messagesReceived'], 0, 'and none taken');
});

t.test('with the driver\'s L2 receive path no RoCE frame is dropped for want of one', async (t) => {
  const nic = Nic.open('emu', { stepped: true });
  if (!nic.ok) return void t.fail(nic.error);
  t.teardown(() => nic.value.close());
  const a = Qp.make(nic.value), b = Qp.make(nic.value);
  const ra = Region.alloc(nic.value, 4096), rb = Region.alloc(nic.value, 4096);
  if (!a.ok || !b.ok || !ra.ok || !rb.ok) return void t.fail('setup');
  t.ok(a.value.connect(b.value.endpoint).ok && b.value.connect(a.value.endpoint).ok, 'connected');
  b.value.receive(rb.value, 0, 64);
  a.value.send(ra.value, 0, 64);
  t.equal(a.value.wait('send', 5e6)?.ok, true, 'the send completed');
  t.equal(engineCounters(nic.value)['dropNoL2Filter'], 0);
});
