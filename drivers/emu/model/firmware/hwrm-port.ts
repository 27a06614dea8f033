/**
 * The port's HWRM commands: its link (PORT_PHY_*), MAC settings, counters (PORT_QSTATS*) and
 * CoS queues (QUEUE_*). One port, port_id 0; any other is refused. The link is up at 200G on
 * DAC and never changes.
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { ModelBus } from '../bus.ts';
import type { HwrmHandlers } from './hwrm-handler.ts';
import { PORT_QUEUES as QUEUES } from './port-queues.ts';

const E = H.HWRM_ERR_CODE;

/**
 * Port counters are not modelled yet: the blocks are written as zeros (docs/bnxt-en-bringup.md),
 * `tx` and `rx` bytes of them. False (nothing written) when either block is not mapped.
 */
function writeZeroStats(bus: ModelBus, txAddr: number, tx: number, rxAddr: number, rx: number): boolean {
  if ((tx > 0 && !bus.iommu.check(txAddr, tx)) || (rx > 0 && !bus.iommu.check(rxAddr, rx))) return false;
  bus.iommu.writeFrom(txAddr, new Uint8Array(tx), 0, tx);
  bus.iommu.writeFrom(rxAddr, new Uint8Array(rx), 0, rx);
  return true;
}

function queuePairsAndNames(): { pairs: Uint8Array; names: Uint8Array } {
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
  return { pairs, names };
}

export const PORT_HANDLERS = {
  PORT_PHY_QCFG: () => ({ values: {
    link: H.PORT_PHY_QCFG_RESP_LINK.LINK, link_speed: H.PORT_PHY_QCFG_RESP_LINK_SPEED['200GB'], duplex_cfg: 1,
    duplex_state: 1, media_type: H.PORT_PHY_QCFG_RESP_MEDIA_TYPE.DAC, active_lanes: 4,
  } }),
  PORT_PHY_QCAPS: (_ctx, req) => {
    if (req.port_id !== 0) return { error: E.INVALID_PARAMS };
    const S = H.PHY_QCAPS_SPEEDS;
    const P4 = H.PHY_QCAPS_PAM4_SPEEDS;
    const nrz = S['25GB'] | S['40GB'] | S['50GB'] | S['100GB'];
    const pam4 = P4['50G'] | P4['100G'] | P4['200G'];
    return { values: {
      flags: 0, port_cnt: 1, supported_speeds_force_mode: nrz, supported_speeds_auto_mode: nrz,
      supported_pam4_speeds_auto_mode: pam4, supported_pam4_speeds_force_mode: pam4,
    } };
  },
  PORT_LED_QCAPS: (_ctx, req) => req.port_id !== 0 ? { error: E.INVALID_PARAMS } : { values: { num_leds: 0 } },
  PORT_MAC_CFG: ({ bus }, req) => req.port_id !== 0 ? { error: E.INVALID_PARAMS }
    : { values: { mru: bus.config.mtu + 22, mtu: bus.config.mtu + 22, ipg: 12, lpbk: 0 } },
  PORT_PHY_CFG: (_ctx, req) => req.port_id !== 0 ? { error: E.INVALID_PARAMS } : { values: {} },
  PORT_QSTATS: ({ bus }, req) => {
    if (req.port_id !== 0) return { error: E.INVALID_PARAMS };
    const { tx, rx } = H.PORT_STATS_BYTES;
    if (!writeZeroStats(bus, req.tx_stat_host_addr, tx, req.rx_stat_host_addr, rx)) return { error: E.INVALID_PARAMS };
    return { values: { tx_stat_size: tx, rx_stat_size: rx } };
  },
  PORT_QSTATS_EXT: ({ bus }, req) => {
    if (req.port_id !== 0) return { error: E.INVALID_PARAMS };
    const S = H.PORT_STATS_BYTES;
    const tx = Math.min(req.tx_stat_size, S.txExt);
    const rx = Math.min(req.rx_stat_size, S.rxExt);
    if (!writeZeroStats(bus, req.tx_stat_host_addr, tx, req.rx_stat_host_addr, rx)) return { error: E.INVALID_PARAMS };
    return { values: { tx_stat_size: tx, rx_stat_size: rx, total_active_cos_queues: QUEUES.length } };
  },
  QUEUE_QPORTCFG: (_ctx, req) => {
    if (req.port_id !== 0) return { error: E.INVALID_PARAMS };
    const { pairs, names } = queuePairsAndNames();
    return { values: {
      max_configurable_queues: QUEUES.length, max_configurable_lossless_queues: 1, queue_pairs: pairs,
      qid_names: names,
    } };
  },
  QUEUE_PRI2COS_QCFG: (_ctx, req) => {
    // Every priority on the NIC queue: no DCB mapping is configured (the RoCE queue waits for one).
    if (req.port_id !== 0) return { error: E.INVALID_PARAMS };
    return { values: { pri_cos_queue_ids: new Uint8Array(8).fill(QUEUES[0]![0]), queue_cfg_info: 0 } };
  },
} satisfies HwrmHandlers;
