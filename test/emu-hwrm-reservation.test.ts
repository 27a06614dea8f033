/**
 * Issue 11 item 5. The new resource manager: the software NIC hands out rings and statistics
 * contexts only within what FUNC_CFG reserved (Linux bnxt.c __bnxt_hwrm_reserve_pf_rings
 * reserves before bnxt_hwrm_ring_alloc allocates; on P5 NQ-type rings count against num_msix),
 * answering RESOURCE_ALLOC_ERROR (bnxt_hsi.h HWRM_ERR_CODE_RESOURCE_ALLOC_ERROR, 0x4) beyond it.
 * rig-bnxt's driver reserves before it allocates, as bnxt_en and iPXE do, allocates the NQs it
 * polls in POLL mode (iPXE bnxt.c bnxt_hwrm_ring_alloc on a Thor PF), and says its interface
 * is up at open and down at close (bnxt.c bnxt_hwrm_if_change). Its requests are read as the
 * firmware takes them and checked at bnxt_hsi.h's offsets, by hand.
 */
import t from 'tap';
import * as H from '../firmware-hwrm/hwrm/index.ts';
import { EmuRig, bringUp } from './helpers/emu-roce-setup.ts';
import { emuDevice } from './helpers/emu-device.ts';
import { recordHwrmRequests, type RecordedRequest } from './helpers/hwrm-request-recorder.ts';
import { bringUp as driverBringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { bringUpRoce, tearDownRoce } from '../lib/bnxt/roce-device.ts';

function nq(rig: EmuRig): () => Uint8Array {
  return () => rig.hwrm(H.HWRM_COMMANDS.RING_ALLOC, {
    ring_type: H.RING_ALLOC_REQ_RING_TYPE.NQ, page_tbl_addr: rig.alloc(64 * 16).iova, page_size: 12, page_tbl_depth: 0,
    length: 64,
    logical_id: 2, int_mode: H.RING_ALLOC_REQ_INT_MODE.MSIX,
  });
}

function stat(rig: EmuRig, flags = 0): () => Uint8Array {
  return () => rig.hwrm(H.HWRM_COMMANDS.STAT_CTX_ALLOC, {
    stats_dma_addr: rig.alloc(4096).iova, stats_dma_length: 160, stat_ctx_flags: flags,
  });
}

t.test('NQ-type rings and statistics contexts beyond the FUNC_CFG reservation are refused', async (t) => {
  const rig = new EmuRig();
  bringUp(rig); // reserves 4 MSI-X vectors and 2 statistics contexts, takes 2 NQ rings and 1 context
  t.doesNotThrow(nq(rig), 'the third NQ ring');
  t.doesNotThrow(nq(rig), 'the fourth');
  t.throws(nq(rig), /error 4/, 'the fifth: RESOURCE_ALLOC_ERROR (0x4)');
  t.doesNotThrow(stat(rig), 'the second statistics context');
  t.throws(stat(rig), /error 4/, 'the third: RESOURCE_ALLOC_ERROR');
  const EN = H.FUNC_CFG_REQ_ENABLES;
  rig.hwrm(H.HWRM_COMMANDS.FUNC_CFG, { fid: H.HWRM_FID_SELF, enables: EN.NUM_MSIX, num_msix: 5 });
  t.doesNotThrow(nq(rig), 'a larger reservation makes room');
  const qcfg = H.FuncQcfgOutput.decode(rig.hwrm(H.HWRM_COMMANDS.FUNC_QCFG, { fid: H.HWRM_FID_SELF }));
  t.same([qcfg.alloc_msix, qcfg.alloc_stat_ctx], [5, 2], 'FUNC_QCFG reads the reservation back');
});

t.test('a function reset drops the reservation: nothing is handed out until FUNC_CFG reserves again', async (t) => {
  const rig = new EmuRig();
  bringUp(rig);
  rig.hwrm(H.HWRM_COMMANDS.FUNC_RESET, {});
  rig.hwrm(H.HWRM_COMMANDS.FUNC_DRV_RGTR, { os_type: 0 });
  t.throws(stat(rig, 1), /error 4/, 'a statistics context with nothing reserved');
});

// Offsets from Linux include/linux/bnxt/hsi.h, by hand.
const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);
const u32 = (b: Uint8Array, at: number) => (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
// bnxt_hsi.h HWRM_* request types.
const REQ = {
  FUNC_QCFG: 0x16, FUNC_CFG: 0x17, FUNC_DRV_IF_CHANGE: 0x0d, FUNC_DRV_RGTR: 0x1d, FUNC_DRV_UNRGTR: 0x1a,
  RING_ALLOC: 0x50, RING_FREE: 0x51, STAT_CTX_ALLOC: 0xb0, STAT_CTX_FREE: 0xb1,
};

function driverRun(): { requests: RecordedRequest[]; atOpen: number } {
  const d = emuDevice();
  const rec = recordHwrmRequests(d);
  const fn = driverBringUp(rec.device);
  if (!fn.ok) throw new Error(fn.error);
  const roce = bringUpRoce(fn.value, Uint8Array.from([10, 77, 1, 9]));
  if (!roce.ok) throw new Error(roce.error);
  const atOpen = rec.requests.length;
  tearDownRoce(roce.value);
  tearDown(fn.value);
  d.close();
  return { requests: rec.requests, atOpen };
}

t.test("rig-bnxt's FUNC_CFG reserves RoCE's NQs and statistics context and its L2 receive path, then takes them",
  async (t) => {
    const { requests } = driverRun();
    const types = requests.map((r) => r.reqType);
    const at = types.indexOf(REQ.FUNC_CFG);
    t.ok(at >= 0, 'FUNC_CFG is sent');
    t.ok(at < types.indexOf(REQ.RING_ALLOC) && at < types.indexOf(REQ.STAT_CTX_ALLOC),
      'before the first RING_ALLOC and STAT_CTX_ALLOC');
    t.equal(types[at + 1], REQ.FUNC_QCFG, 'and the grant is read back with FUNC_QCFG (bnxt_hwrm_get_rings)');
    const b = requests[at]!.bytes;
    // hwrm_func_cfg_input: fid @16, num_msix @18, flags @20, enables @24, num_rsscos_ctxs @32,
    // num_cmpl_rings @34, num_tx_rings @36, num_rx_rings @38, num_l2_ctxs @40, num_vnics @42,
    // num_stat_ctxs @44. FUNC_CFG_REQ_ENABLES_NUM_CMPL_RINGS 0x8, _NUM_RX_RINGS 0x20, _NUM_L2_CTXS
    // 0x40, _NUM_VNICS 0x80, _NUM_STAT_CTXS 0x100, _NUM_MSIX 0x200000.
    t.equal(u16(b, 16), 0xffff, 'fid: the function itself');
    t.equal(u16(b, 18), 2, 'num_msix: the CREQ and the CQs\' NQ');
    t.equal(u32(b, 20), 0, 'flags: none');
    t.equal(u32(b, 24), 0x2001e8,
      'enables: NUM_MSIX | NUM_STAT_CTXS | NUM_CMPL_RINGS | NUM_RX_RINGS | NUM_L2_CTXS | NUM_VNICS');
    t.equal(u16(b, 44), 2, 'num_stat_ctxs: the RoCE statistics context and the L2 rings\'');
    t.same([u16(b, 32), u16(b, 34), u16(b, 36), u16(b, 38), u16(b, 40), u16(b, 42)], [0, 1, 0, 1, 1, 1],
      'the L2 receive path: one completion ring, one RX ring, one L2 context, one VNIC; no TX ring, no RSS');
  });

t.test("rig-bnxt's NQs are polled: RING_ALLOC int_mode POLL", async (t) => {
  const { requests } = driverRun();
  const allocs = requests.filter((r) => r.reqType === REQ.RING_ALLOC);
  // hwrm_ring_alloc_input: ring_type @20 (L2_CMPL 0x0, RX 0x2, NQ 0x5), int_mode @76 (INT_MODE_POLL 0x3).
  t.same(allocs.map((r) => r.bytes[20]), [0x5, 0x5, 0x0, 0x2], 'the CREQ, the NQ, the L2 completion ring, the RX ring');
  for (const r of allocs) t.equal(r.bytes[76], 0x3, 'int_mode POLL');
});

t.test('FUNC_DRV_IF_CHANGE: up after registering, before any ring; down at close, before unregistering', async (t) => {
  const { requests, atOpen } = driverRun();
  const types = requests.map((r) => r.reqType);
  const changes = requests.map((r, i) => [r, i] as const).filter(([r]) => r.reqType === REQ.FUNC_DRV_IF_CHANGE);
  t.equal(changes.length, 2, 'one up, one down');
  const [[up, upAt], [down, downAt]] = changes as unknown as [[RecordedRequest, number], [RecordedRequest, number]];
  // hwrm_func_drv_if_change_input: flags @16, FUNC_DRV_IF_CHANGE_REQ_FLAGS_UP 0x1.
  t.equal(u32(up.bytes, 16), 1, 'flags UP at open');
  t.ok(upAt > types.indexOf(REQ.FUNC_DRV_RGTR) && upAt < types.indexOf(REQ.RING_ALLOC) && upAt < atOpen,
    'after FUNC_DRV_RGTR, before the first RING_ALLOC');
  t.equal(u32(down.bytes, 16), 0, 'flags 0 at close');
  t.ok(downAt >= atOpen && downAt > types.lastIndexOf(REQ.RING_FREE) && downAt > types.lastIndexOf(REQ.STAT_CTX_FREE),
    'at close, after the rings and contexts are freed');
  t.ok(downAt < types.indexOf(REQ.FUNC_DRV_UNRGTR), 'before FUNC_DRV_UNRGTR');
});

t.test('firmware without the new resource manager (FUNC_RESOURCE_QCAPS not supported): no reservation', async (t) => {
  const d = emuDevice();
  d.emu.hwrm.refuseType(H.HWRM_COMMANDS.FUNC_RESOURCE_QCAPS.req_type, H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED);
  const fn = driverBringUp(d);
  if (!fn.ok) return void t.fail(fn.error);
  // bnxt.c bnxt_hwrm_func_resc_qcaps leaves BNXT_FW_CAP_NEW_RM clear: older firmware gives rings out without FUNC_CFG.
  t.equal(fn.value.reservesResources, false, 'no reservation on older firmware');
  tearDown(fn.value);
  d.close();
  const refused = emuDevice();
  refused.emu.hwrm.refuseType(H.HWRM_COMMANDS.FUNC_RESOURCE_QCAPS.req_type, H.HWRM_ERR_CODE.RESOURCE_ACCESS_DENIED);
  const r = driverBringUp(refused);
  t.notOk(r.ok, 'any other refusal stops bring-up');
  if (!r.ok) t.match(r.error, /HWRM_FUNC_RESOURCE_QCAPS.*RESOURCE_ACCESS_DENIED/);
  refused.close();
});

t.test('the old driver behaviour, rings taken with nothing reserved, is refused by the model', async (t) => {
  const d = emuDevice();
  const fn = driverBringUp(d);
  if (!fn.ok) return void t.fail(fn.error);
  const roce = bringUpRoce({ ...fn.value, reservesResources: false }, Uint8Array.from([10, 77, 1, 9]));
  t.notOk(roce.ok, 'RoCE bring-up without FUNC_CFG fails');
  if (!roce.ok) {
    t.match(roce.error, /HWRM_RING_ALLOC \(CREQ\).*RESOURCE_ALLOC_ERROR/, 'refused at the CREQ\'s RING_ALLOC');
  }
  t.equal(d.emu.hwrm.resources().rings, 0, 'no ring handed out');
  t.equal(d.emu.hwrm.resources().interfaceUp, true, 'the interface is up (FUNC_DRV_IF_CHANGE)');
  tearDown(fn.value);
  t.equal(d.emu.hwrm.resources().interfaceUp, false, 'and down after close');
  d.close();
});
