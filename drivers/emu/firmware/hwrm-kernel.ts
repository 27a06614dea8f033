/**
 * HWRM commands Linux's bnxt_en sends at probe and open (seen over vfio-user,
 * docs/bnxt-en-bringup.md) that rig-bnxt's own driver does not: answered as a BCM57508's
 * firmware would, with the values bnxt_en checks. Called by HwrmFirmware for any command it
 * does not handle itself; undefined means "not a command of this file".
 */
import * as H from '../../../firmware-hwrm/hwrm/index.ts';
import type { ModelBus } from '../bus.ts';
import type { FunctionResources } from './function-resources.ts';

type Req = Record<string, number | bigint | Uint8Array>;
export type KernelAnswer = { error: number } | { values: Record<string, unknown> };

/** The port's CoS queues: one lossy NIC queue and one lossless RoCE queue, as a RoCE-enabled Thor port has. */
const QUEUES: readonly (readonly [id: number, profile: number, name: string])[] = [
  [0, H.QUEUE_SERVICE_PROFILE.LOSSY, 'nic'],
  [1, H.QUEUE_SERVICE_PROFILE.LOSSLESS_ROCE, 'roce'],
];

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
    r = { msix: 0, rsscos: 0, cmpl: 0, tx: 0, rx: 0, l2: 0, vnics: 0, stat: 0, asyncEventCr: undefined, adminMtu: undefined };
    reservations.set(fn, r);
  }
  return r;
}

/** FUNC_RESET: the reservations go with everything else the function held. */
export function resetKernelState(fn: FunctionResources): void {
  reservations.delete(fn);
}

/** FUNC_QCFG's alloc_* fields: what is reserved now (a real PF starts with nothing reserved). */
export function reservedQcfgFields(fn: FunctionResources): Record<string, number> {
  const r = reservationOf(fn);
  return {
    alloc_rsscos_ctx: r.rsscos, alloc_cmpl_rings: r.cmpl, alloc_tx_rings: r.tx, alloc_rx_rings: r.rx, alloc_l2_ctx: r.l2,
    alloc_vnics: r.vnics, alloc_stat_ctx: r.stat, alloc_msix: r.msix, alloc_hw_ring_grps: r.rx,
    ...(r.adminMtu !== undefined ? { admin_mtu: r.adminMtu } : {}),
  };
}

export function answerKernelCommand(bus: ModelBus, fn: FunctionResources, reqType: number, req: Req): KernelAnswer | undefined {
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
      for (let i = QUEUES.length; i < 8; i++) { pairs[2 * i] = 0xff; pairs[2 * i + 1] = H.QUEUE_SERVICE_PROFILE.UNKNOWN; }
      void bus; void fn;
      return { values: { max_configurable_queues: QUEUES.length, max_configurable_lossless_queues: 1, queue_pairs: pairs, qid_names: names } };
    }
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
      return { values: { mru: 9600, flags: F.VLAN_STRIP_CAP | F.ROCE_DUAL_VNIC_CAP, max_aggs_supported: 0 } };
    }
    case H.HWRM.FUNC_RESOURCE_QCAPS: {
      if (req.fid !== H.HWRM_FID_SELF) return { error: E.INVALID_PARAMS };
      const L = LIMITS;
      return { values: {
        max_vfs: 0, max_msix: L.msix, vf_reservation_strategy: 0,
        min_rsscos_ctx: 0, max_rsscos_ctx: L.rsscos, min_cmpl_rings: 0, max_cmpl_rings: L.cmpl, min_tx_rings: 0, max_tx_rings: L.tx,
        min_rx_rings: 0, max_rx_rings: L.rx, min_l2_ctxs: 0, max_l2_ctxs: L.l2, min_vnics: 0, max_vnics: L.vnics,
        min_stat_ctx: 0, max_stat_ctx: L.stat, min_hw_ring_grps: 0, max_hw_ring_grps: L.rx, max_tx_scheduler_inputs: 0, flags: 0, min_msix: 0,
      } };
    }
    case H.HWRM.FUNC_CFG:
      return funcCfg(fn, req);
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
