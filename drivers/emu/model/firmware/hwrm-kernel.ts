/**
 * HWRM commands Linux's bnxt_en sends at probe and open (seen over vfio-user,
 * docs/bnxt-en-bringup.md) that rig-bnxt's own driver does not: answered as a BCM57508's
 * firmware would, with the values bnxt_en checks. Called by HwrmFirmware for any command it
 * does not handle itself; undefined means "not a command of this file".
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { ModelBus } from '../bus.ts';
import type { FunctionResources } from './function-resources.ts';
import { PORT_QUEUES as QUEUES } from './port-queues.ts';

type Req = Record<string, number | bigint | Uint8Array>;
export type KernelAnswer = { error: number } | { values: Record<string, unknown> };


/** The function's limits: FUNC_QCAPS's maxima and the MSI-X table the PCI function has. */
const LIMITS = { msix: 64, rsscos: 64, cmpl: 128, tx: 128, rx: 128, l2: 128, vnics: 64, stat: 128 } as const;

/** What FUNC_CFG reserved for the function (new resource manager), read back by FUNC_QCFG. */
interface Reservation {
  msix: number; rsscos: number; cmpl: number; tx: number; rx: number; l2: number; vnics: number; stat: number;
  asyncEventCr: number | undefined;
  adminMtu: number | undefined;
}
const reservations = new WeakMap<FunctionResources, Reservation>();

function reservationOf(fn: FunctionResources): Reservation {
  let r = reservations.get(fn);
  if (!r) {
    r = {
      msix: 0, rsscos: 0, cmpl: 0, tx: 0, rx: 0, l2: 0, vnics: 0, stat: 0, asyncEventCr: undefined, adminMtu: undefined,
    };
    reservations.set(fn, r);
  }
  return r;
}

/**
 * Whether the function may take one more of `what`: the new resource manager hands out only
 * what FUNC_CFG reserved (a PF starts with nothing; Linux bnxt_en reserves before it allocates:
 * bnxt.c __bnxt_hwrm_reserve_pf_rings, then bnxt_hwrm_get_rings reads the grant back). On P5
 * NQ-type rings (bnxt_en's NQs, bnxt_re's CREQ and NQs) count against the MSI-X vectors,
 * completion rings against num_cmpl_rings, RX and RX aggregation rings together against
 * num_rx_rings (bnxt_en doubles its RX reservation for aggregation rings). Undefined when
 * there is room, else why not.
 */
export function beyondReservation(fn: FunctionResources, what: 'nq' | 'stat' | number): string | undefined {
  const r = reservationOf(fn);
  const T = H.RING_ALLOC_REQ_RING_TYPE;
  let used: number;
  let reserved: number;
  let name: string;
  if (what === 'nq') [used, reserved, name] = [fn.rings.size, r.msix, 'NQ-type rings (MSI-X vectors)'];
  else if (what === 'stat') [used, reserved, name] = [fn.statCtxs.size, r.stat, 'statistics contexts'];
  else {
    const rings = [...l2Of(fn).rings.values()];
    const count = (...types: number[]) => rings.filter((ring) => types.includes(ring.type)).length;
    if (what === T.TX) [used, reserved, name] = [count(T.TX), r.tx, 'TX rings'];
    else if (what === T.L2_CMPL) [used, reserved, name] = [count(T.L2_CMPL), r.cmpl, 'completion rings'];
    else [used, reserved, name] = [count(T.RX, T.RX_AGG), r.rx, 'RX and aggregation rings'];
  }
  return used < reserved ? undefined : `${used} of the ${reserved} ${name} FUNC_CFG reserved are in use`;
}

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

/** FUNC_RESET: the reservations and L2 objects go with everything else the function held. */
export function resetKernelState(fn: FunctionResources): void {
  reservations.delete(fn);
  l2States.delete(fn);
}

const MAX_L2_RING = 1 << 16;

/**
 * RING_ALLOC of an L2 ring: its memory must be mapped (16-byte elements on every L2 ring), its
 * partner must exist (a TX ring's completion ring, a completion ring's NQ, an aggregation
 * ring's RX ring), and its statistics context must have been allocated.
 */
export function kernelRingAlloc(bus: ModelBus, fn: FunctionResources, req: Req, nextId: () => number): KernelAnswer {
  const E = H.HWRM_ERR_CODE;
  const T = H.RING_ALLOC_REQ_RING_TYPE;
  const l2 = l2Of(fn);
  const type = req.ring_type as number;
  const length = req.length as number;
  const depth = req.page_tbl_depth as number;
  const pageSizeLog2 = req.page_size as number;
  const addr = req.page_tbl_addr as number;
  if (type !== T.L2_CMPL && type !== T.TX && type !== T.RX && type !== T.RX_AGG) return { error: E.INVALID_PARAMS };
  if (length < 1 || length > MAX_L2_RING || (length & (length - 1)) !== 0 || depth > 1)
    return { error: E.INVALID_PARAMS };
  const bytes = length * 16;
  if (depth === 0 && !bus.iommu.check(addr, bytes)) return { error: E.INVALID_PARAMS };
  if (depth === 1 &&
    (pageSizeLog2 < 12 || pageSizeLog2 > 30 || !bus.iommu.check(addr, Math.ceil(bytes / 2 ** pageSizeLog2) * 8)))
      return { error: E.INVALID_PARAMS };
  let peer = 0;
  if (type === T.TX) {
    peer = req.cmpl_ring_id as number;
    if (l2.rings.get(peer)?.type !== T.L2_CMPL) return { error: E.INVALID_PARAMS };
  } else if (type === T.L2_CMPL) {
    peer = req.nq_ring_id as number;
    if (!fn.rings.has(peer)) return { error: E.INVALID_PARAMS };
  } else if (type === T.RX_AGG) {
    peer = req.rx_ring_id as number;
    if (l2.rings.get(peer)?.type !== T.RX) return { error: E.INVALID_PARAMS };
  }
  if (type !== T.L2_CMPL && !fn.statCtxs.has(req.stat_ctx_id as number)) return { error: E.INVALID_PARAMS };
  if (beyondReservation(fn, type) !== undefined) return { error: E.RESOURCE_ALLOC_ERROR };
  const id = nextId();
  l2.rings.set(id, {
    id, type, pageTblAddr: addr, pageTblDepth: depth, pageSizeLog2, length, logicalId: req.logical_id as number,
    peerRingId: peer, rxBufSize: req.rx_buf_size as number, cqHandle: req.cq_handle as number,
  });
  return { values: { ring_id: id, logical_ring_id: req.logical_id } };
}

/** RING_FREE of an L2 ring: by id and the type it was allocated with. */
export function kernelRingFree(fn: FunctionResources, req: Req): KernelAnswer {
  const l2 = l2Of(fn);
  const ring = l2.rings.get(req.ring_id as number);
  if (!ring || ring.type !== (req.ring_type as number)) return { error: H.HWRM_ERR_CODE.INVALID_PARAMS };
  l2.rings.delete(ring.id);
  return { values: {} };
}

/** FUNC_QCFG's alloc_* fields: what is reserved now (a real PF starts with nothing reserved). */
export function reservedQcfgFields(fn: FunctionResources): Record<string, number> {
  const r = reservationOf(fn);
  return {
    alloc_rsscos_ctx: r.rsscos, alloc_cmpl_rings: r.cmpl, alloc_tx_rings: r.tx, alloc_rx_rings: r.rx,
    alloc_l2_ctx: r.l2, alloc_vnics: r.vnics, alloc_stat_ctx: r.stat, alloc_msix: r.msix, alloc_hw_ring_grps: r.rx,
    ...(r.adminMtu !== undefined ? { admin_mtu: r.adminMtu } : {}),
  };
}

export function answerKernelCommand(
  bus: ModelBus, fn: FunctionResources, reqType: number, req: Req,
): KernelAnswer | undefined {
  const E = H.HWRM_ERR_CODE;
  switch (reqType) {
    case H.HWRM.QUEUE_QPORTCFG: {
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      const pairs = new Uint8Array(16);
      const names = new Uint8Array(128);
      QUEUES.forEach(([id, profile, name], i) => {
        pairs[2 * i] = id;
        pairs[2 * i + 1] = profile;
        names.set(new TextEncoder().encode(name), 16 * i);
      });
      for (let i = QUEUES.length; i < 8; i++) {
        pairs[2 * i] = 0xff;
        pairs[2 * i + 1] = H.QUEUE_SERVICE_PROFILE.UNKNOWN;
      }
      void bus; void fn;
      return { values: {
        max_configurable_queues: QUEUES.length, max_configurable_lossless_queues: 1, queue_pairs: pairs,
        qid_names: names,
      } };
    }
    case H.HWRM.FW_SET_TIME: {
      // Taken when it is a date (the firmware keeps time for its logs; the model keeps none).
      const ok = (req.month as number) >= 1 && (req.month as number) <= 12 && (req.day as number) >= 1 &&
        (req.day as number) <= 31 && (req.hour as number) < 24 && (req.minute as number) < 60 &&
        (req.second as number) < 61 && (req.millisecond as number) < 1000;
      return ok ? { values: {} } : { error: E.INVALID_PARAMS };
    }
    case H.HWRM.NVM_GET_DEV_INFO: {
      const name = new Uint8Array(16);
      name.set(new TextEncoder().encode('230.2.52.0'));
      return { values: {
        manufacturer_id: 0, device_id: 0, sector_size: 4096, nvram_size: 16 << 20, reserved_size: 0, available_size: 0,
        nvm_cfg_ver_maj: 1, nvm_cfg_ver_min: 0, nvm_cfg_ver_upd: 0, flags: 0, pkg_name: name,
        hwrm_fw_major: 230, hwrm_fw_minor: 2, hwrm_fw_build: 52, hwrm_fw_patch: 0, mgmt_fw_major: 230, mgmt_fw_minor: 2,
        mgmt_fw_build: 52, mgmt_fw_patch: 0, roce_fw_major: 230, roce_fw_minor: 2, roce_fw_build: 52, roce_fw_patch: 0,
        netctrl_fw_major: 230, netctrl_fw_minor: 2, netctrl_fw_build: 52, netctrl_fw_patch: 0,
      } };
    }
    case H.HWRM.QUEUE_PRI2COS_QCFG:
      // Every priority on the NIC queue: no DCB mapping is configured (the RoCE queue waits for one).
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      return { values: { pri_cos_queue_ids: new Uint8Array(8).fill(QUEUES[0]![0]), queue_cfg_info: 0 } };
    case H.HWRM.PORT_PHY_QCAPS: {
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      const S = H.PHY_QCAPS_SPEEDS;
      const P4 = H.PHY_QCAPS_PAM4_SPEEDS;
      const nrz = S['25GB'] | S['40GB'] | S['50GB'] | S['100GB'];
      const pam4 = P4['50G'] | P4['100G'] | P4['200G'];
      return { values: {
        flags: 0, port_cnt: 1, supported_speeds_force_mode: nrz, supported_speeds_auto_mode: nrz,
        supported_pam4_speeds_auto_mode: pam4, supported_pam4_speeds_force_mode: pam4,
      } };
    }
    case H.HWRM.PORT_LED_QCAPS:
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      return { values: { num_leds: 0 } };
    case H.HWRM.VNIC_QCAPS: {
      const F = H.VNIC_QCAPS_RESP_FLAGS;
      const flags = F.VLAN_STRIP_CAP | F.ROCE_DUAL_VNIC_CAP;
      return { values: { mru: 9600, flags, max_aggs_supported: fn.tpaV2MaxAggs } };
    }
    case H.HWRM.FUNC_RESOURCE_QCAPS: {
      if (req.fid !== H.HWRM_FID_SELF) return { error: E.INVALID_PARAMS };
      const L = LIMITS;
      return { values: {
        max_vfs: 0, max_msix: L.msix, vf_reservation_strategy: 0,
        min_rsscos_ctx: 0, max_rsscos_ctx: L.rsscos, min_cmpl_rings: 0, max_cmpl_rings: L.cmpl, min_tx_rings: 0,
        max_tx_rings: L.tx, min_rx_rings: 0, max_rx_rings: L.rx, min_l2_ctxs: 0, max_l2_ctxs: L.l2, min_vnics: 0,
        max_vnics: L.vnics, min_stat_ctx: 0, max_stat_ctx: L.stat, min_hw_ring_grps: 0, max_hw_ring_grps: L.rx,
        max_tx_scheduler_inputs: 0, flags: 0, min_msix: 0,
      } };
    }
    case H.HWRM.FUNC_CFG:
      return funcCfg(fn, req);
    case H.HWRM.VNIC_ALLOC: {
      const l2 = l2Of(fn);
      const id = l2.nextVnic++;
      l2.vnics.set(id, {
        defaultRxRing: 0xffff, defaultCmplRing: 0xffff, mru: 0, rxMask: 0, rssCtx: undefined, flags: 0,
      });
      return { values: { vnic_id: id } };
    }
    case H.HWRM.VNIC_FREE:
      return l2Of(fn).vnics.delete(req.vnic_id as number) ? { values: {} } : { error: E.INVALID_PARAMS };
    case H.HWRM.VNIC_CFG: {
      const l2 = l2Of(fn);
      const vnic = l2.vnics.get(req.vnic_id as number);
      if (!vnic) return { error: E.INVALID_PARAMS };
      const en = req.enables as number;
      const VE = H.VNIC_CFG_REQ_ENABLES;
      if (en & VE.DEFAULT_RX_RING_ID) {
        if (l2.rings.get(req.default_rx_ring_id as number)?.type !== H.RING_ALLOC_REQ_RING_TYPE.RX)
          return { error: E.INVALID_PARAMS };
        vnic.defaultRxRing = req.default_rx_ring_id as number;
      }
      if (en & VE.DEFAULT_CMPL_RING_ID) {
        if (l2.rings.get(req.default_cmpl_ring_id as number)?.type !== H.RING_ALLOC_REQ_RING_TYPE.L2_CMPL)
          return { error: E.INVALID_PARAMS };
        vnic.defaultCmplRing = req.default_cmpl_ring_id as number;
      }
      // bnxt_en fills mru beside the two rings without the MRU enable (seen from 6.12 over vfio-user).
      if (en & (VE.MRU | VE.DEFAULT_RX_RING_ID)) vnic.mru = req.mru as number;
      vnic.flags = req.flags as number;
      return { values: {} };
    }
    case H.HWRM.VNIC_RSS_COS_LB_CTX_ALLOC: {
      const l2 = l2Of(fn);
      const id = l2.nextRssCtx++;
      l2.rssCtxs.add(id);
      return { values: { rss_cos_lb_ctx_id: id } };
    }
    case H.HWRM.VNIC_RSS_COS_LB_CTX_FREE:
      return l2Of(fn).rssCtxs.delete(req.rss_cos_lb_ctx_id as number) ? { values: {} } : { error: E.INVALID_PARAMS };
    case H.HWRM.VNIC_RSS_CFG: {
      const l2 = l2Of(fn);
      const vnic = l2.vnics.get(req.vnic_id as number);
      if (!vnic) return { error: E.INVALID_PARAMS };
      // A hash type of 0 turns RSS off (bnxt_hwrm_vnic_set_rss with set_rss false); then no tables are read.
      if ((req.hash_type as number) !== 0) {
        if (!l2.rssCtxs.has(req.rss_ctx_idx as number)) return { error: E.INVALID_PARAMS };
        if (!bus.iommu.check(req.ring_grp_tbl_addr as number, 64) ||
          !bus.iommu.check(req.hash_key_tbl_addr as number, 40)) return { error: E.INVALID_PARAMS };
        vnic.rssCtx = req.rss_ctx_idx as number;
      }
      return { values: {} };
    }
    case H.HWRM.VNIC_PLCMODES_CFG:
      return l2Of(fn).vnics.has(req.vnic_id as number) ? { values: {} } : { error: E.INVALID_PARAMS };
    case H.HWRM.CFA_L2_FILTER_ALLOC: {
      const l2 = l2Of(fn);
      const vnic = req.dst_id as number;
      if (!l2.vnics.has(vnic)) return { error: E.INVALID_PARAMS };
      const id = l2.nextFilter++;
      const rx = ((req.flags as number) & H.CFA_L2_FILTER_ALLOC.FLAGS_PATH_RX) !== 0;
      l2.filters.set(id, { mac: (req.l2_addr as Uint8Array).slice(), vnic, rx });
      return { values: { l2_filter_id: id, flow_id: 0 } };
    }
    case H.HWRM.CFA_L2_FILTER_FREE:
      return l2Of(fn).filters.delete(req.l2_filter_id as number) ? { values: {} } : { error: E.INVALID_PARAMS };
    case H.HWRM.CFA_L2_SET_RX_MASK: {
      const vnic = l2Of(fn).vnics.get(req.vnic_id as number);
      if (!vnic) return { error: E.INVALID_PARAMS };
      const n = req.num_mc_entries as number;
      if (n > 0 && !bus.iommu.check(req.mc_tbl_addr as number, n * 6)) return { error: E.INVALID_PARAMS };
      vnic.rxMask = req.mask as number;
      return { values: {} };
    }
    case H.HWRM.RING_CMPL_RING_CFG_AGGINT_PARAMS:
      return l2Of(fn).rings.has(req.ring_id as number) || fn.rings.has(req.ring_id as number) ? { values: {} }
        : { error: E.INVALID_PARAMS };
    case H.HWRM.RING_AGGINT_QCAPS:
      // Limits as bnxt_en's defaults assume them (bnxt_hwrm_coal_params_qcaps), timer units of 80 ns.
      return { values: {
        cmpl_params: 0x3f, nq_params: 0x1, num_cmpl_dma_aggr_min: 1, num_cmpl_dma_aggr_max: 63,
        num_cmpl_dma_aggr_during_int_min: 0, num_cmpl_dma_aggr_during_int_max: 63, cmpl_aggr_dma_tmr_min: 1,
        cmpl_aggr_dma_tmr_max: 65535, cmpl_aggr_dma_tmr_during_int_min: 0, cmpl_aggr_dma_tmr_during_int_max: 65535,
        int_lat_tmr_min_min: 0, int_lat_tmr_min_max: 65535, int_lat_tmr_max_min: 1, int_lat_tmr_max_max: 65535,
        num_cmpl_aggr_int_min: 1, num_cmpl_aggr_int_max: 65535, timer_units: 80,
      } };
    case H.HWRM.PORT_MAC_CFG:
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      return { values: { mru: bus.config.mtu + 22, mtu: bus.config.mtu + 22, ipg: 12, lpbk: 0 } };
    case H.HWRM.PORT_QSTATS:
    case H.HWRM.PORT_QSTATS_EXT: {
      // Port counters are not modelled yet: the blocks are written as zeros (docs/bnxt-en-bringup.md).
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      const ext = reqType === H.HWRM.PORT_QSTATS_EXT;
      const S = H.PORT_STATS_BYTES;
      const tx = ext ? Math.min(req.tx_stat_size as number, S.txExt) : S.tx;
      const rx = ext ? Math.min(req.rx_stat_size as number, S.rxExt) : S.rx;
      const txAddr = req.tx_stat_host_addr as number;
      const rxAddr = req.rx_stat_host_addr as number;
      if ((tx > 0 && !bus.iommu.check(txAddr, tx)) || (rx > 0 && !bus.iommu.check(rxAddr, rx)))
        return { error: E.INVALID_PARAMS };
      bus.iommu.writeFrom(txAddr, new Uint8Array(tx), 0, tx);
      bus.iommu.writeFrom(rxAddr, new Uint8Array(rx), 0, rx);
      return { values: ext ? { tx_stat_size: tx, rx_stat_size: rx, total_active_cos_queues: QUEUES.length } : {
        tx_stat_size: tx, rx_stat_size: rx,
      } };
    }
    case H.HWRM.PORT_PHY_CFG:
      if ((req.port_id as number) !== 0) return { error: E.INVALID_PARAMS };
      return { values: {} };
    default:
      return undefined;
  }
}

/**
 * FUNC_CFG for the function itself: each enabled count becomes the reservation, granted up to
 * the function's maximum (as a PF's firmware grants within its pool); the async event ring,
 * MTU and cache line settings are kept. Other functions (VFs) do not exist here.
 */
function funcCfg(fn: FunctionResources, req: Req): KernelAnswer {
  const E = H.HWRM_ERR_CODE;
  const EN = H.FUNC_CFG_REQ_ENABLES;
  if (req.fid !== H.HWRM_FID_SELF) return { error: E.INVALID_PARAMS };
  const enables = req.enables as number;
  const r = reservationOf(fn);
  const take = (bit: number, field: string, max: number, set: (n: number) => void) => {
    if ((enables & bit) !== 0) set(Math.min(req[field] as number, max));
  };
  const L = LIMITS;
  take(EN.NUM_MSIX, 'num_msix', L.msix, (n) => { r.msix = n; });
  take(EN.NUM_RSSCOS_CTXS, 'num_rsscos_ctxs', L.rsscos, (n) => { r.rsscos = n; });
  take(EN.NUM_CMPL_RINGS, 'num_cmpl_rings', L.cmpl, (n) => { r.cmpl = n; });
  take(EN.NUM_TX_RINGS, 'num_tx_rings', L.tx, (n) => { r.tx = n; });
  take(EN.NUM_RX_RINGS, 'num_rx_rings', L.rx, (n) => { r.rx = n; });
  take(EN.NUM_L2_CTXS, 'num_l2_ctxs', L.l2, (n) => { r.l2 = n; });
  take(EN.NUM_VNICS, 'num_vnics', L.vnics, (n) => { r.vnics = n; });
  take(EN.NUM_STAT_CTXS, 'num_stat_ctxs', L.stat, (n) => { r.stat = n; });
  if ((enables & EN.ASYNC_EVENT_CR) !== 0) r.asyncEventCr = req.async_event_cr as number;
  if ((enables & EN.ADMIN_MTU) !== 0) r.adminMtu = req.admin_mtu as number;
  return { values: {} };
}
