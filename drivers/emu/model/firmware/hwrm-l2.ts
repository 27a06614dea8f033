/**
 * The function's L2 objects and the HWRM commands that make them (VNIC_*, CFA_L2_*): what
 * Linux's bnxt_en sets up for its Ethernet netdev at open (docs/bnxt-en-bringup.md), answered
 * as a BCM57508's firmware would, with the values bnxt_en checks. The L2 rings live here too
 * (RING_ALLOC of a TX, RX, aggregation or completion ring: hwrm-ring.ts); the L2 engine
 * (l2/l2-engine.ts) reads them.
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmCommandName } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { FunctionResources } from './function-resources.ts';
import type { HwrmHandler, HwrmHandlers } from './hwrm-handler.ts';

/** An L2 ring bnxt_en allocated (TX, RX, RX aggregation, completion). */
export interface L2Ring {
  readonly id: number;
  readonly type: number;
  readonly pageTblAddr: number;
  readonly pageTblDepth: number;
  readonly pageSizeLog2: number;
  readonly length: number;
  readonly logicalId: number;
  /** TX: its completion ring; completion ring: its NQ; RX aggregation: its RX ring. */
  readonly peerRingId: number;
  readonly rxBufSize: number;
  /** Completion ring: the 64-bit handle bnxt_en reads back from each NQ entry. */
  readonly cqHandle: number;
}

/** The function's L2 objects: rings, VNICs, RSS contexts, MAC filters. */
export interface L2State {
  readonly rings: Map<number, L2Ring>;
  readonly vnics: Map<number, {
    defaultRxRing: number; defaultCmplRing: number; mru: number; rxMask: number; rssCtx: number | undefined;
    /** VNIC_CFG flags (VNIC_CFG_REQ_FLAGS): a RoCE mode among them. */
    flags: number;
  }>;
  readonly rssCtxs: Set<number>;
  /** `rx`: allocated with CFA_L2_FILTER_ALLOC_REQ_FLAGS_PATH_RX (a receive filter). */
  readonly filters: Map<number, { readonly mac: Uint8Array; readonly vnic: number; readonly rx: boolean }>;
  nextVnic: number;
  nextRssCtx: number;
  nextFilter: number;
}
const l2States = new WeakMap<FunctionResources, L2State>();

export function l2Of(fn: FunctionResources): L2State {
  let s = l2States.get(fn);
  if (!s) {
    s = {
      rings: new Map(), vnics: new Map(), rssCtxs: new Set(), filters: new Map(), nextVnic: 0, nextRssCtx: 0,
      nextFilter: 1,
    };
    l2States.set(fn, s);
  }
  return s;
}

/** FUNC_RESET: the L2 objects go with everything else the function held. */
export function resetL2(fn: FunctionResources): void {
  l2States.delete(fn);
}

const ROCE_VNIC_MODES = H.VNIC_CFG_REQ_FLAGS.ROCE_DUAL_VNIC_MODE | H.VNIC_CFG_REQ_FLAGS.ROCE_ONLY_VNIC_MODE |
  H.VNIC_CFG_REQ_FLAGS.ROCE_MIRRORING_CAPABLE_VNIC_MODE;

/**
 * Whether RoCE frames to `mac` reach the function's RoCE engine: a receive filter for the MAC
 * (CFA_L2_FILTER_ALLOC, PATH_RX) steers to a VNIC configured in a RoCE mode (VNIC_CFG flags
 * ROCE_DUAL_VNIC_MODE, ROCE_ONLY_VNIC_MODE or ROCE_MIRRORING_CAPABLE_VNIC_MODE). Linux bnxt_en
 * always builds one before RoCE traffic flows: bnxt_hwrm_set_vnic_filter for the MAC, and
 * bnxt_hwrm_vnic_cfg sets bnxt_get_roce_vnic_mode's flag on the default VNIC once bnxt_re
 * registered (bnxt_ulp.c bnxt_register_dev configures VNIC 0 again when the netdev is already
 * open); the Thor Ultra driver bnge does the same. Whether real firmware drops RoCE frames
 * without it is not public: the model takes the stricter reading (docs/hardware.md).
 */
export function roceReceivePath(fn: FunctionResources, mac: Uint8Array): boolean {
  const l2 = l2States.get(fn);
  if (!l2) return false;
  for (const f of l2.filters.values()) {
    if (!f.rx || !f.mac.every((b, i) => b === mac[i])) continue;
    if (((l2.vnics.get(f.vnic)?.flags ?? 0) & ROCE_VNIC_MODES) !== 0) return true;
  }
  return false;
}

/** A command that may open or close the RoCE receive path: the firmware looks again after it, done or refused. */
function thenReceivePath<K extends HwrmCommandName>(handler: HwrmHandler<K>): HwrmHandler<K> {
  return (ctx, req) => {
    const answer = handler(ctx, req);
    ctx.receivePathMayChange();
    return answer;
  };
}

const E = H.HWRM_ERR_CODE;

const vnicCfg: HwrmHandler<'VNIC_CFG'> = ({ fn }, req) => {
  const l2 = l2Of(fn);
  const vnic = l2.vnics.get(req.vnic_id);
  if (!vnic) return { error: E.INVALID_PARAMS };
  const en = req.enables;
  const VE = H.VNIC_CFG_REQ_ENABLES;
  if (en & VE.DEFAULT_RX_RING_ID) {
    if (l2.rings.get(req.default_rx_ring_id)?.type !== H.RING_ALLOC_REQ_RING_TYPE.RX)
      return { error: E.INVALID_PARAMS };
    vnic.defaultRxRing = req.default_rx_ring_id;
  }
  if (en & VE.DEFAULT_CMPL_RING_ID) {
    if (l2.rings.get(req.default_cmpl_ring_id)?.type !== H.RING_ALLOC_REQ_RING_TYPE.L2_CMPL)
      return { error: E.INVALID_PARAMS };
    vnic.defaultCmplRing = req.default_cmpl_ring_id;
  }
  // bnxt_en fills mru beside the two rings without the MRU enable (seen from 6.12 over vfio-user).
  if (en & (VE.MRU | VE.DEFAULT_RX_RING_ID)) vnic.mru = req.mru;
  vnic.flags = req.flags;
  return { values: {} };
};

const vnicRssCfg: HwrmHandler<'VNIC_RSS_CFG'> = ({ bus, fn }, req) => {
  const l2 = l2Of(fn);
  const vnic = l2.vnics.get(req.vnic_id);
  if (!vnic) return { error: E.INVALID_PARAMS };
  // A hash type of 0 turns RSS off (bnxt_hwrm_vnic_set_rss with set_rss false); then no tables are read.
  if (req.hash_type !== 0) {
    if (!l2.rssCtxs.has(req.rss_ctx_idx)) return { error: E.INVALID_PARAMS };
    if (!bus.iommu.check(req.ring_grp_tbl_addr, 64) || !bus.iommu.check(req.hash_key_tbl_addr, 40))
      return { error: E.INVALID_PARAMS };
    vnic.rssCtx = req.rss_ctx_idx;
  }
  return { values: {} };
};

const cfaL2FilterAlloc: HwrmHandler<'CFA_L2_FILTER_ALLOC'> = ({ fn }, req) => {
  const l2 = l2Of(fn);
  const vnic = req.dst_id;
  if (!l2.vnics.has(vnic)) return { error: E.INVALID_PARAMS };
  const id = l2.nextFilter++;
  const rx = (req.flags & H.CFA_L2_FILTER_ALLOC.FLAGS_PATH_RX) !== 0;
  l2.filters.set(id, { mac: req.l2_addr.slice(), vnic, rx });
  return { values: { l2_filter_id: id, flow_id: 0 } };
};

export const L2_HANDLERS = {
  VNIC_QCAPS: ({ fn }) => {
    const F = H.VNIC_QCAPS_RESP_FLAGS;
    const flags = F.VLAN_STRIP_CAP | F.ROCE_DUAL_VNIC_CAP;
    return { values: { mru: 9600, flags, max_aggs_supported: fn.tpaV2MaxAggs } };
  },
  VNIC_ALLOC: ({ fn }) => {
    const l2 = l2Of(fn);
    const id = l2.nextVnic++;
    l2.vnics.set(id, {
      defaultRxRing: 0xffff, defaultCmplRing: 0xffff, mru: 0, rxMask: 0, rssCtx: undefined, flags: 0,
    });
    return { values: { vnic_id: id } };
  },
  VNIC_FREE: thenReceivePath<'VNIC_FREE'>(({ fn }, req) =>
    l2Of(fn).vnics.delete(req.vnic_id) ? { values: {} } : { error: E.INVALID_PARAMS }),
  VNIC_CFG: thenReceivePath(vnicCfg),
  VNIC_RSS_COS_LB_CTX_ALLOC: ({ fn }) => {
    const l2 = l2Of(fn);
    const id = l2.nextRssCtx++;
    l2.rssCtxs.add(id);
    return { values: { rss_cos_lb_ctx_id: id } };
  },
  VNIC_RSS_COS_LB_CTX_FREE: ({ fn }, req) =>
    l2Of(fn).rssCtxs.delete(req.rss_cos_lb_ctx_id) ? { values: {} } : { error: E.INVALID_PARAMS },
  VNIC_RSS_CFG: vnicRssCfg,
  VNIC_PLCMODES_CFG: ({ fn }, req) => l2Of(fn).vnics.has(req.vnic_id) ? { values: {} } : { error: E.INVALID_PARAMS },
  CFA_L2_FILTER_ALLOC: thenReceivePath(cfaL2FilterAlloc),
  CFA_L2_FILTER_FREE: thenReceivePath<'CFA_L2_FILTER_FREE'>(({ fn }, req) =>
    l2Of(fn).filters.delete(req.l2_filter_id) ? { values: {} } : { error: E.INVALID_PARAMS }),
  CFA_L2_SET_RX_MASK: ({ bus, fn }, req) => {
    const vnic = l2Of(fn).vnics.get(req.vnic_id);
    if (!vnic) return { error: E.INVALID_PARAMS };
    const n = req.num_mc_entries;
    if (n > 0 && !bus.iommu.check(req.mc_tbl_addr, n * 6)) return { error: E.INVALID_PARAMS };
    vnic.rxMask = req.mask;
    return { values: {} };
  },
} satisfies HwrmHandlers;
