// Issue 12: the statistics context length, as bnxt_en sizes it and bnxt_re sends it. Linux bnxt.c
// keeps hw_ring_stats_size at sizeof(ctx_hw_stats), 160 bytes, unless HWRM_VNIC_QCAPS reports
// TPA v2 (max_aggs_supported), then BNXT_RING_STATS_SIZE_P5 (168) or _P7 (176)
// (bnxt_hwrm_vnic_qcaps); bnxt_re's RoCE context takes that size (qplib_res.c
// bnxt_qplib_alloc_stat_mem, main.c bnxt_re_net_stats_ctx_alloc). The driver asks VNIC_QCAPS and
// does the same; the model takes only those lengths (the strict reading). Request bytes are read
// at hsi.h hwrm_stat_ctx_alloc_input offsets: stat_ctx_flags byte 28 (ROCE 0x1), stats_dma_length
// bytes 30-31.
import t from 'tap';
import { bringUp, tearDown } from '../lib/bnxt/bringup.ts';
import { bringUpRoce, tearDownRoce } from '../lib/bnxt/roce-device.ts';
import * as H from '../firmware-hwrm/hwrm/index.ts';
import { emuDevice } from './helpers/emu-device.ts';
import { recordHwrmRequests } from './helpers/hwrm-request-recorder.ts';
import { EmuRig, bringUp as rigBringUp } from './helpers/emu-roce-setup.ts';

const REQ_VNIC_QCAPS = 0x4a;
const REQ_STAT_CTX_ALLOC = 0xb0;
const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8);

/** The driver's STAT_CTX_ALLOC requests on a software NIC of `chip` offering `maxAggs` TPA v2 aggregations. */
function statRequests(chip: string, maxAggs: number): { lengths: number[]; flags: number[]; qcapsFirst: boolean } {
  const d = emuDevice('stepped', 1, chip);
  d.emu.hwrm.offerTpaV2(maxAggs);
  const rec = recordHwrmRequests(d);
  try {
    const fn = bringUp(rec.device);
    if (!fn.ok) throw new Error(fn.error);
    const roce = bringUpRoce(fn.value, Uint8Array.from([10, 77, 4, 1]));
    if (!roce.ok) throw new Error(roce.error);
    tearDownRoce(roce.value);
    tearDown(fn.value);
    const types = rec.requests.map((r) => r.reqType);
    const stats = rec.requests.filter((r) => r.reqType === REQ_STAT_CTX_ALLOC).map((r) => r.bytes);
    return {
      lengths: stats.map((b) => u16(b, 30)), flags: stats.map((b) => b[28]!),
      qcapsFirst: types.includes(REQ_VNIC_QCAPS) && types.indexOf(REQ_VNIC_QCAPS) < types.indexOf(REQ_STAT_CTX_ALLOC),
    };
  } finally {
    d.close();
  }
}

for (const [chip, extended] of [['BCM57508', 168], ['BCM57608', 176]] as const) {
  t.test(`${chip}: 160 bytes without TPA v2, ${extended} with it, for the RoCE and the L2 contexts`, async (t) => {
    const plain = statRequests(chip, 0);
    t.ok(plain.qcapsFirst, 'VNIC_QCAPS before the first STAT_CTX_ALLOC');
    t.same(plain.flags, [0x1, 0x0], 'the RoCE context, then the L2 receive path\'s');
    t.same(plain.lengths, [160, 160], 'sizeof(ctx_hw_stats)');
    const tpa = statRequests(chip, 64);
    t.same(tpa.lengths, [extended, extended], `BNXT_RING_STATS_SIZE_${chip === 'BCM57508' ? 'P5' : 'P7'}`);
  });
}

t.test('model: STAT_CTX_ALLOC takes 160 bytes, or the chip\'s extended block where TPA v2 is offered', async (t) => {
  for (const [chip, extended, other] of [['BCM57508', 168, 176], ['BCM57608', 176, 168]] as const) {
    const rig = new EmuRig({ chip });
    // The rig speaks P5's context memory by hand: only the statistics command is asked here, with
    // room reserved for every context it makes (FUNC_CFG num_stat_ctxs).
    if (chip === 'BCM57508') rigBringUp(rig);
    else rig.hwrm(H.HWRM_COMMANDS.FUNC_DRV_RGTR, { os_type: 0 });
    rig.hwrm(H.HWRM_COMMANDS.FUNC_CFG, {
      fid: H.HWRM_FID_SELF, enables: H.FUNC_CFG_REQ_ENABLES.NUM_STAT_CTXS, num_stat_ctxs: 16,
    });
    const alloc = (length: number) => () => rig.hwrm(H.HWRM_COMMANDS.STAT_CTX_ALLOC, {
      stats_dma_addr: rig.alloc(4096).iova, stats_dma_length: length,
    });
    t.doesNotThrow(alloc(160), `${chip}: 160`);
    t.throws(alloc(extended), /error 2/, `${chip}: ${extended} without TPA v2: INVALID_PARAMS`);
    rig.model.controls.hwrm.offerTpaV2(64);
    t.doesNotThrow(alloc(extended), `${chip}: ${extended} with TPA v2`);
    t.doesNotThrow(alloc(160), `${chip}: 160 still (kernels before the extended block sent it)`);
    t.throws(alloc(other), /error 2/, `${chip}: ${other}, another chip's block`);
    t.throws(alloc(4096), /error 2/, `${chip}: a page`);
  }
});
