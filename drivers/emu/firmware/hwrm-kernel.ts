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
    default:
      return undefined;
  }
}
