/**
 * The function's resources under the new resource manager: FUNC_RESOURCE_QCAPS reports the
 * limits, FUNC_CFG reserves within them, FUNC_QCFG reads the reservation back, and RING_ALLOC
 * and STAT_CTX_ALLOC take only what was reserved (a PF starts with nothing; Linux bnxt_en
 * reserves before it allocates: bnxt.c __bnxt_hwrm_reserve_pf_rings, then bnxt_hwrm_get_rings
 * reads the grant back).
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmResponse } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { FunctionResources } from './function-resources.ts';
import type { HwrmHandler, HwrmHandlers } from './hwrm-handler.ts';
import { l2Of } from './hwrm-l2.ts';

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

/** FUNC_RESET: the reservations go with everything else the function held. */
export function resetReservation(fn: FunctionResources): void {
  reservations.delete(fn);
}

/**
 * Whether the function may take one more of `what`: the new resource manager hands out only
 * what FUNC_CFG reserved. On P5 NQ-type rings (bnxt_en's NQs, bnxt_re's CREQ and NQs) count
 * against the MSI-X vectors, completion rings against num_cmpl_rings, RX and RX aggregation
 * rings together against num_rx_rings (bnxt_en doubles its RX reservation for aggregation
 * rings). Undefined when there is room, else why not.
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

/** FUNC_QCFG's alloc_* fields: what is reserved now (a real PF starts with nothing reserved). */
export function reservedQcfgFields(fn: FunctionResources): Partial<HwrmResponse<'FUNC_QCFG'>> {
  const r = reservationOf(fn);
  return {
    alloc_rsscos_ctx: r.rsscos, alloc_cmpl_rings: r.cmpl, alloc_tx_rings: r.tx, alloc_rx_rings: r.rx,
    alloc_l2_ctx: r.l2, alloc_vnics: r.vnics, alloc_stat_ctx: r.stat, alloc_msix: r.msix, alloc_hw_ring_grps: r.rx,
    ...(r.adminMtu !== undefined ? { admin_mtu: r.adminMtu } : {}),
  };
}

/**
 * FUNC_CFG for the function itself: each enabled count becomes the reservation, granted up to
 * the function's maximum (as a PF's firmware grants within its pool); the async event ring,
 * MTU and cache line settings are kept. Other functions (VFs) do not exist here.
 */
const funcCfg: HwrmHandler<'FUNC_CFG'> = ({ fn }, req) => {
  const E = H.HWRM_ERR_CODE;
  const EN = H.FUNC_CFG_REQ_ENABLES;
  if (req.fid !== H.HWRM_FID_SELF) return { error: E.INVALID_PARAMS };
  const enables = req.enables;
  const r = reservationOf(fn);
  const take = (bit: number, asked: number, max: number, set: (n: number) => void) => {
    if ((enables & bit) !== 0) set(Math.min(asked, max));
  };
  const L = LIMITS;
  take(EN.NUM_MSIX, req.num_msix, L.msix, (n) => { r.msix = n; });
  take(EN.NUM_RSSCOS_CTXS, req.num_rsscos_ctxs, L.rsscos, (n) => { r.rsscos = n; });
  take(EN.NUM_CMPL_RINGS, req.num_cmpl_rings, L.cmpl, (n) => { r.cmpl = n; });
  take(EN.NUM_TX_RINGS, req.num_tx_rings, L.tx, (n) => { r.tx = n; });
  take(EN.NUM_RX_RINGS, req.num_rx_rings, L.rx, (n) => { r.rx = n; });
  take(EN.NUM_L2_CTXS, req.num_l2_ctxs, L.l2, (n) => { r.l2 = n; });
  take(EN.NUM_VNICS, req.num_vnics, L.vnics, (n) => { r.vnics = n; });
  take(EN.NUM_STAT_CTXS, req.num_stat_ctxs, L.stat, (n) => { r.stat = n; });
  if ((enables & EN.ASYNC_EVENT_CR) !== 0) r.asyncEventCr = req.async_event_cr;
  if ((enables & EN.ADMIN_MTU) !== 0) r.adminMtu = req.admin_mtu;
  return { values: {} };
};

export const RESERVATION_HANDLERS = {
  FUNC_RESOURCE_QCAPS: (_ctx, req) => {
    if (req.fid !== H.HWRM_FID_SELF) return { error: H.HWRM_ERR_CODE.INVALID_PARAMS };
    const L = LIMITS;
    return { values: {
      max_vfs: 0, max_msix: L.msix, vf_reservation_strategy: 0,
      min_rsscos_ctx: 0, max_rsscos_ctx: L.rsscos, min_cmpl_rings: 0, max_cmpl_rings: L.cmpl, min_tx_rings: 0,
      max_tx_rings: L.tx, min_rx_rings: 0, max_rx_rings: L.rx, min_l2_ctxs: 0, max_l2_ctxs: L.l2, min_vnics: 0,
      max_vnics: L.vnics, min_stat_ctx: 0, max_stat_ctx: L.stat, min_hw_ring_grps: 0, max_hw_ring_grps: L.rx,
      max_tx_scheduler_inputs: 0, flags: 0, min_msix: 0,
    } };
  },
  FUNC_CFG: funcCfg,
} satisfies HwrmHandlers;
