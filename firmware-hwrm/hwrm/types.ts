/**
 * HWRM request type numbers (`req_type`), from hsi.h `struct cmd_nums` in the order bnxt.c's
 * probe sends them (bnxt_fw_init_one). Only the commands a driver or the software NIC may meet are
 * named; any other number still travels as a plain number and prints as hex.
 */

export const HWRM = {
  VER_GET: 0x0000,
  ERROR_RECOVERY_QCFG: 0x000c,
  FUNC_DRV_IF_CHANGE: 0x000d,
  FUNC_VF_CFG: 0x000f,
  FUNC_RESET: 0x0011,
  FUNC_GETFID: 0x0012,
  FUNC_QCAPS: 0x0015,
  FUNC_QCFG: 0x0016,
  FUNC_CFG: 0x0017,
  FUNC_DRV_UNRGTR: 0x001a,
  FUNC_DRV_RGTR: 0x001d,
  PORT_PHY_CFG: 0x0020,
  PORT_MAC_CFG: 0x0021,
  PORT_QSTATS: 0x0023,
  PORT_PHY_QCFG: 0x0027,
  PORT_MAC_QCFG: 0x0028,
  PORT_MAC_PTP_QCFG: 0x0029,
  PORT_PHY_QCAPS: 0x002a,
  PORT_LED_QCAPS: 0x002f,
  QUEUE_QPORTCFG: 0x0030,
  QUEUE_PRI2COS_QCFG: 0x0037,
  QUEUE_DSCP_QCAPS: 0x003b,
  VNIC_ALLOC: 0x0040,
  VNIC_FREE: 0x0041,
  VNIC_CFG: 0x0042,
  VNIC_RSS_CFG: 0x0046,
  VNIC_PLCMODES_CFG: 0x0048,
  VNIC_QCAPS: 0x004a,
  RING_ALLOC: 0x0050,
  RING_FREE: 0x0051,
  RING_CMPL_RING_CFG_AGGINT_PARAMS: 0x0053,
  RING_AGGINT_QCAPS: 0x0054,
  RING_GRP_ALLOC: 0x0060,
  RING_GRP_FREE: 0x0061,
  VNIC_RSS_COS_LB_CTX_ALLOC: 0x0070,
  VNIC_RSS_COS_LB_CTX_FREE: 0x0071,
  CFA_L2_FILTER_ALLOC: 0x0090,
  CFA_L2_FILTER_FREE: 0x0091,
  CFA_L2_SET_RX_MASK: 0x0093,
  STAT_CTX_ALLOC: 0x00b0,
  STAT_CTX_FREE: 0x00b1,
  STAT_CTX_QUERY: 0x00b2,
  PORT_QSTATS_EXT: 0x00b4,
  FW_RESET: 0x00c0,
  FW_SET_TIME: 0x00c8,
  TEMP_MONITOR_QUERY: 0x00e0,
  WOL_FILTER_QCFG: 0x00f2,
  FUNC_RESOURCE_QCAPS: 0x0190,
  FUNC_BACKING_STORE_QCAPS: 0x0192,
  FUNC_BACKING_STORE_CFG: 0x0193,
  FUNC_BACKING_STORE_QCFG: 0x0194,
  FUNC_BACKING_STORE_CFG_V2: 0x01a3,
  FUNC_BACKING_STORE_QCFG_V2: 0x01a4,
  FUNC_DBR_PACING_QCFG: 0x01a6,
  FUNC_BACKING_STORE_QCAPS_V2: 0x01a8,
  SELFTEST_QLIST: 0x0200,
  DBG_QCAPS: 0xff20,
  NVM_GET_DEV_INFO: 0xfff6,
} as const;

export type HwrmCommandName = keyof typeof HWRM;

const NAME_BY_TYPE = new Map<number, string>(Object.entries(HWRM).map(([name, type]) => [type, `HWRM_${name}`]));

/**
 * The header's name of a request type ("HWRM_FUNC_QCAPS"), or its number in hex ("0x01ff")
 * for one this table does not name. Never throws: meant for log and error messages.
 */
export function hwrmRequestName(reqType: number): string {
  const name = NAME_BY_TYPE.get(reqType);
  if (name !== undefined) return name;
  return Number.isInteger(reqType) && reqType >= 0 ? `0x${reqType.toString(16).padStart(4, '0')}` : String(reqType);
}
