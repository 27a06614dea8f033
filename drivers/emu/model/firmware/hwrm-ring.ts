/**
 * Rings and statistics contexts: RING_ALLOC / RING_FREE, STAT_CTX_ALLOC / STAT_CTX_FREE, and
 * the completion rings' interrupt coalescing (RING_CMPL_RING_CFG_AGGINT_PARAMS, RING_AGGINT_QCAPS).
 *
 * Rules: rings and statistics contexts need a registered driver, and rings also context memory
 * (P5 keeps ring contexts there); each takes room in what FUNC_CFG reserved (hwrm-reservation.ts);
 * a ring's memory must be mapped; a ring or context is freed by id (and a ring by its type); a
 * ring RoCE still uses is not freed. NQ-type rings (the CREQ, the RoCE NQs and bnxt_en's NQs)
 * are the function's (FunctionResources.rings, which the RoCE firmware reads); TX, RX,
 * aggregation and completion rings are L2 rings (hwrm-l2.ts).
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmContext, HwrmHandler, HwrmHandlers } from './hwrm-handler.ts';
import { l2Of } from './hwrm-l2.ts';
import { beyondReservation } from './hwrm-reservation.ts';

const E = H.HWRM_ERR_CODE;
const T = H.RING_ALLOC_REQ_RING_TYPE;
const MAX_NQ_LENGTH = 1 << 20;
const MAX_L2_RING = 1 << 16;

type RingAlloc = HwrmHandler<'RING_ALLOC'>;

/** An NQ-type ring: the CREQ, a RoCE NQ or one of bnxt_en's NQs. */
const nqRingAlloc: RingAlloc = (ctx, req) => {
  const { bus, fn } = ctx;
  const { length, page_tbl_depth: depth, page_size: pageSizeLog2, page_tbl_addr: addr } = req;
  if (length < H.RING_ALLOC_MIN_LENGTH || length > MAX_NQ_LENGTH || depth > 1) return { error: E.INVALID_PARAMS };
  if (depth === 0 && !bus.iommu.check(addr, length * 16)) return { error: E.INVALID_PARAMS };
  if (depth === 1) {
    const pages = Math.ceil((length * 16) / 2 ** pageSizeLog2);
    if (pageSizeLog2 < 12 || pageSizeLog2 > 30 || !bus.iommu.check(addr, pages * 8)) {
      return { error: E.INVALID_PARAMS };
    }
  }
  if (beyondReservation(fn, 'nq') !== undefined) return { error: E.RESOURCE_ALLOC_ERROR };
  const id = ctx.nextRingId++;
  fn.rings.set(id, {
    id, pageTblAddr: addr, pageTblDepth: depth, pageSizeLog2, length, logicalId: req.logical_id, intMode: req.int_mode,
  });
  return { values: { ring_id: id, logical_ring_id: req.logical_id } };
};

/** The ring an L2 ring names and must find (0 for an RX ring): a TX ring's completion ring, and so on. */
function l2Peer({ fn }: HwrmContext, req: Parameters<RingAlloc>[1]): number | undefined {
  const l2 = l2Of(fn);
  const type = req.ring_type;
  if (type === T.TX) return l2.rings.get(req.cmpl_ring_id)?.type === T.L2_CMPL ? req.cmpl_ring_id : undefined;
  if (type === T.L2_CMPL) return fn.rings.has(req.nq_ring_id) ? req.nq_ring_id : undefined;
  if (type === T.RX_AGG) return l2.rings.get(req.rx_ring_id)?.type === T.RX ? req.rx_ring_id : undefined;
  return 0;
}

/**
 * An L2 ring: its memory must be mapped (16-byte elements on every L2 ring), its partner must
 * exist (a TX ring's completion ring, a completion ring's NQ, an aggregation ring's RX ring),
 * and its statistics context must have been allocated.
 */
const l2RingAlloc: RingAlloc = (ctx, req) => {
  const { bus, fn } = ctx;
  const { ring_type: type, length, page_tbl_depth: depth, page_size: pageSizeLog2, page_tbl_addr: addr } = req;
  if (type !== T.L2_CMPL && type !== T.TX && type !== T.RX && type !== T.RX_AGG) return { error: E.INVALID_PARAMS };
  if (length < 1 || length > MAX_L2_RING || (length & (length - 1)) !== 0 || depth > 1)
    return { error: E.INVALID_PARAMS };
  const bytes = length * 16;
  if (depth === 0 && !bus.iommu.check(addr, bytes)) return { error: E.INVALID_PARAMS };
  if (depth === 1 &&
    (pageSizeLog2 < 12 || pageSizeLog2 > 30 || !bus.iommu.check(addr, Math.ceil(bytes / 2 ** pageSizeLog2) * 8)))
      return { error: E.INVALID_PARAMS };
  const peer = l2Peer(ctx, req);
  if (peer === undefined) return { error: E.INVALID_PARAMS };
  if (type !== T.L2_CMPL && !fn.statCtxs.has(req.stat_ctx_id)) return { error: E.INVALID_PARAMS };
  if (beyondReservation(fn, type) !== undefined) return { error: E.RESOURCE_ALLOC_ERROR };
  const id = ctx.nextRingId++;
  l2Of(fn).rings.set(id, {
    id, type, pageTblAddr: addr, pageTblDepth: depth, pageSizeLog2, length, logicalId: req.logical_id,
    peerRingId: peer, rxBufSize: req.rx_buf_size, cqHandle: req.cq_handle,
  });
  return { values: { ring_id: id, logical_ring_id: req.logical_id } };
};

/**
 * The statistics blocks the firmware writes: sizeof(ctx_hw_stats), 160 bytes, and where
 * VNIC_QCAPS offers TPA v2 also the chip's extended block (168 on P5, 176 on P7), the sizes
 * bnxt_en asks for (bnxt.c bnxt_hwrm_vnic_qcaps sets hw_ring_stats_size; kernels before the
 * extended block sent 160 to TPA v2 firmware). Any other length would have the firmware write
 * past the driver's buffer or leave part of it stale: refused (the strict reading).
 */
function statsLengths({ bus, fn }: HwrmContext): readonly number[] {
  return fn.tpaV2MaxAggs > 0 ? [H.CTX_HW_STATS_BYTES, bus.chip.ringStatsBytes] : [H.CTX_HW_STATS_BYTES];
}

export const RING_HANDLERS = {
  RING_ALLOC: (ctx, req) => {
    if (!ctx.fn.registered) return { error: E.RESOURCE_ACCESS_DENIED };
    if (!ctx.fn.backingStore) return { error: E.RESOURCE_ACCESS_DENIED }; // P5 keeps ring contexts in context memory
    return req.ring_type === T.NQ ? nqRingAlloc(ctx, req) : l2RingAlloc(ctx, req);
  },
  RING_FREE: ({ fn, roce }, req) => {
    const id = req.ring_id;
    if (req.ring_type !== T.NQ) {
      const l2 = l2Of(fn);
      const ring = l2.rings.get(id);
      if (!ring || ring.type !== req.ring_type) return { error: E.INVALID_PARAMS };
      l2.rings.delete(ring.id);
      return { values: {} };
    }
    if (!fn.rings.has(id)) return { error: E.INVALID_PARAMS };
    if (roce.usesRing(id)) return { error: E.RESOURCE_ACCESS_DENIED };
    fn.rings.delete(id);
    return { values: {} };
  },
  STAT_CTX_ALLOC: (ctx, req) => {
    const { bus, fn } = ctx;
    if (!fn.registered) return { error: E.RESOURCE_ACCESS_DENIED };
    const addr = req.stats_dma_addr;
    const len = req.stats_dma_length;
    if (!statsLengths(ctx).includes(len) || !bus.iommu.check(addr, len)) return { error: E.INVALID_PARAMS };
    if (beyondReservation(fn, 'stat') !== undefined) return { error: E.RESOURCE_ALLOC_ERROR };
    const id = ctx.nextStatId++;
    fn.statCtxs.set(id, { dmaAddr: addr, roce: (req.stat_ctx_flags & 1) !== 0 });
    return { values: { stat_ctx_id: id } };
  },
  STAT_CTX_FREE: ({ fn }, req) => {
    const id = req.stat_ctx_id;
    if (!fn.statCtxs.delete(id)) return { error: E.INVALID_PARAMS };
    return { values: { stat_ctx_id: id } };
  },
  RING_CMPL_RING_CFG_AGGINT_PARAMS: ({ fn }, req) =>
    l2Of(fn).rings.has(req.ring_id) || fn.rings.has(req.ring_id) ? { values: {} } : { error: E.INVALID_PARAMS },
  RING_AGGINT_QCAPS: () => ({ values: {
    // Limits as bnxt_en's defaults assume them (bnxt_hwrm_coal_params_qcaps), timer units of 80 ns.
    cmpl_params: 0x3f, nq_params: 0x1, num_cmpl_dma_aggr_min: 1, num_cmpl_dma_aggr_max: 63,
    num_cmpl_dma_aggr_during_int_min: 0, num_cmpl_dma_aggr_during_int_max: 63, cmpl_aggr_dma_tmr_min: 1,
    cmpl_aggr_dma_tmr_max: 65535, cmpl_aggr_dma_tmr_during_int_min: 0, cmpl_aggr_dma_tmr_during_int_max: 65535,
    int_lat_tmr_min_min: 0, int_lat_tmr_min_max: 65535, int_lat_tmr_max_min: 1, int_lat_tmr_max_max: 65535,
    num_cmpl_aggr_int_min: 1, num_cmpl_aggr_int_max: 65535, timer_units: 80,
  } }),
} satisfies HwrmHandlers;
