/** HWRM_VNIC_QCAPS (0x4a): what the function's VNICs can do (`bnxt_hwrm_vnic_qcaps`). */
import { layout, u16, u32, u8 } from '../layout.ts';
import { REQUEST_HEADER_FIELDS, RESPONSE_HEADER_FIELDS } from './header.ts';

// hsi.h: struct hwrm_vnic_qcaps_input (size:192b/24B)
export const VnicQcapsInput = layout('hwrm_vnic_qcaps_input', 24, {
  ...REQUEST_HEADER_FIELDS,
  enables: u32(16),
});

/** VNIC_QCAPS_RESP_FLAGS bits the software NIC may report. */
export const VNIC_QCAPS_RESP_FLAGS = {
  VLAN_STRIP_CAP: 0x2, ROCE_DUAL_VNIC_CAP: 0x8, ROCE_ONLY_VNIC_CAP: 0x10, RSS_HASH_TYPE_DELTA_CAP: 0x4000,
} as const;

// hsi.h: struct hwrm_vnic_qcaps_output (size:192b/24B)
export const VnicQcapsOutput = layout('hwrm_vnic_qcaps_output', 24, {
  ...RESPONSE_HEADER_FIELDS,
  mru: u16(8),
  flags: u32(12),
  /** TPA v2 aggregations; 0: no TPA (hardware GRO/LRO) offered. */
  max_aggs_supported: u16(16),
  valid: u8(23),
});
