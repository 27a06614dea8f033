/**
 * The HWRM command table: one row per command, and the only place a command is named. A row
 * holds the command's request type (`req_type`, hsi.h `struct cmd_nums`) and, where this
 * project speaks it, its request and response layouts. Everything else is keyed from a row:
 * the driver sends `HWRM_COMMANDS.FUNC_QCAPS` and gets its response fields typed
 * (lib/bnxt/hwrm-channel.ts), the software NIC registers one typed handler per row with
 * layouts (drivers/emu/model/firmware/hwrm-*.ts), traces and logs print `name`.
 *
 * A row without layouts names a command a driver may send (Linux bnxt_en does, at probe or
 * open) that the software NIC does not have: it answers CMD_NOT_SUPPORTED, and a trace still
 * shows its name. Rows follow the order of the request types.
 */
import type { FieldSpec, Layout, Values } from '../layout.ts';
import { VerGetInput, VerGetOutput } from './ver-get.ts';
import {
  FuncResetInput, FuncResetOutput, FuncQcapsInput, FuncQcapsOutput, FuncQcfgInput, FuncQcfgOutput,
  FuncResourceQcapsInput, FuncResourceQcapsOutput,
} from './func.ts';
import {
  FuncDrvRgtrInput, FuncDrvRgtrOutput, FuncDrvUnrgtrInput, FuncDrvUnrgtrOutput, FuncDrvIfChangeInput,
  FuncDrvIfChangeOutput,
} from './func-drv.ts';
import { FuncCfgInput, FuncCfgOutput } from './func-cfg.ts';
import { PortPhyQcfgInput, PortPhyQcfgOutput } from './port.ts';
import { PortPhyQcapsInput, PortPhyQcapsOutput, PortLedQcapsInput, PortLedQcapsOutput } from './port-caps.ts';
import { QueueQportcfgInput, QueueQportcfgOutput, QueuePri2cosQcfgInput, QueuePri2cosQcfgOutput } from './queue.ts';
import { VnicQcapsInput, VnicQcapsOutput } from './vnic-caps.ts';
import * as L from './l2.ts';
import { RingAllocInput, RingAllocOutput, RingFreeInput, RingFreeOutput } from './ring.ts';
import { StatCtxAllocInput, StatCtxAllocOutput, StatCtxFreeInput, StatCtxFreeOutput } from './stat-ctx.ts';
import { FwSetTimeInput, FwSetTimeOutput, NvmGetDevInfoInput, NvmGetDevInfoOutput } from './fw-nvm.ts';
import {
  FuncBackingStoreQcapsInput, FuncBackingStoreQcapsOutput, FuncBackingStoreCfgInput, FuncBackingStoreCfgOutput,
  FuncBackingStoreQcapsV2Input, FuncBackingStoreQcapsV2Output, FuncBackingStoreCfgV2Input, FuncBackingStoreCfgV2Output,
} from './backing-store.ts';

type Fields = Record<string, FieldSpec>;

/** What a row may note beside its layouts. */
export interface HwrmCommandNotes {
  /**
   * Sent for the Ethernet netdev (bnxt_en's open: VNICs, filters, L2 statistics), not for the
   * function's bring-up or its RoCE side: scripts/bnxt-guest/compare-trace.ts puts it in its l2
   * step. (RING_* and STAT_CTX_* serve both and are sorted there by their fields.)
   */
  readonly netdev?: true;
}

/** A command with its two layouts: what a driver can send and the software NIC answers. */
export interface HwrmCommand<Q extends Fields = Fields, S extends Fields = Fields> extends HwrmCommandNotes {
  readonly req_type: number;
  /** The header's name, e.g. "HWRM_FUNC_QCAPS" (the row's key after "HWRM_"). */
  readonly name: string;
  readonly request: Layout<Q>;
  readonly response: Layout<S>;
}

/** A command named (for traces and logs) but without layouts here. */
export interface HwrmNamedCommand extends HwrmCommandNotes {
  readonly req_type: number;
  readonly name: string;
  readonly request?: undefined;
  readonly response?: undefined;
}

type Row = Omit<HwrmCommand, 'name'> | Omit<HwrmNamedCommand, 'name'>;

function command<Q extends Fields, S extends Fields>(
  req_type: number, request: Layout<Q>, response: Layout<S>, notes: HwrmCommandNotes = {},
): Omit<HwrmCommand<Q, S>, 'name'> {
  return { req_type, request, response, ...notes };
}

function named(req_type: number, notes: HwrmCommandNotes = {}): Omit<HwrmNamedCommand, 'name'> {
  return { req_type, ...notes };
}

type Named<T> = { readonly [K in keyof T]: T[K] & { readonly name: string } };

/** Each row gets its header name from its key. */
function withNames<T extends Record<string, Row>>(rows: T): Named<T> {
  const out: Record<string, Row & { name: string }> = {};
  for (const [key, row] of Object.entries(rows)) out[key] = { ...row, name: `HWRM_${key}` };
  // The keys are T's, each row given its name: the mapped type says just that.
  return out as Named<T>;
}

const NETDEV = { netdev: true } as const;

export const HWRM_COMMANDS = withNames({
  VER_GET: command(0x0000, VerGetInput, VerGetOutput),
  ERROR_RECOVERY_QCFG: named(0x000c),
  FUNC_DRV_IF_CHANGE: command(0x000d, FuncDrvIfChangeInput, FuncDrvIfChangeOutput),
  FUNC_VF_CFG: named(0x000f),
  FUNC_RESET: command(0x0011, FuncResetInput, FuncResetOutput),
  FUNC_GETFID: named(0x0012),
  FUNC_QCAPS: command(0x0015, FuncQcapsInput, FuncQcapsOutput),
  FUNC_QCFG: command(0x0016, FuncQcfgInput, FuncQcfgOutput),
  FUNC_CFG: command(0x0017, FuncCfgInput, FuncCfgOutput),
  FUNC_DRV_UNRGTR: command(0x001a, FuncDrvUnrgtrInput, FuncDrvUnrgtrOutput),
  FUNC_DRV_RGTR: command(0x001d, FuncDrvRgtrInput, FuncDrvRgtrOutput),
  PORT_PHY_CFG: command(0x0020, L.PortPhyCfgInput, L.PortPhyCfgOutput, NETDEV),
  PORT_MAC_CFG: command(0x0021, L.PortMacCfgInput, L.PortMacCfgOutput),
  PORT_QSTATS: command(0x0023, L.PortQstatsInput, L.PortQstatsOutput, NETDEV),
  PORT_PHY_QCFG: command(0x0027, PortPhyQcfgInput, PortPhyQcfgOutput),
  PORT_MAC_QCFG: named(0x0028),
  PORT_MAC_PTP_QCFG: named(0x0029),
  PORT_PHY_QCAPS: command(0x002a, PortPhyQcapsInput, PortPhyQcapsOutput),
  PORT_LED_QCAPS: command(0x002f, PortLedQcapsInput, PortLedQcapsOutput, NETDEV),
  QUEUE_QPORTCFG: command(0x0030, QueueQportcfgInput, QueueQportcfgOutput),
  QUEUE_PRI2COS_QCFG: command(0x0037, QueuePri2cosQcfgInput, QueuePri2cosQcfgOutput, NETDEV),
  QUEUE_DSCP_QCAPS: named(0x003b, NETDEV),
  VNIC_ALLOC: command(0x0040, L.VnicAllocInput, L.VnicAllocOutput, NETDEV),
  VNIC_FREE: command(0x0041, L.VnicFreeInput, L.VnicFreeOutput, NETDEV),
  VNIC_CFG: command(0x0042, L.VnicCfgInput, L.VnicCfgOutput, NETDEV),
  VNIC_RSS_CFG: command(0x0046, L.VnicRssCfgInput, L.VnicRssCfgOutput, NETDEV),
  VNIC_PLCMODES_CFG: command(0x0048, L.VnicPlcmodesCfgInput, L.VnicPlcmodesCfgOutput),
  VNIC_QCAPS: command(0x004a, VnicQcapsInput, VnicQcapsOutput, NETDEV),
  RING_ALLOC: command(0x0050, RingAllocInput, RingAllocOutput),
  RING_FREE: command(0x0051, RingFreeInput, RingFreeOutput),
  RING_CMPL_RING_CFG_AGGINT_PARAMS: command(
    0x0053, L.RingCmplRingCfgAggintParamsInput, L.RingCmplRingCfgAggintParamsOutput, NETDEV,
  ),
  RING_AGGINT_QCAPS: command(0x0054, L.RingAggintQcapsInput, L.RingAggintQcapsOutput, NETDEV),
  RING_GRP_ALLOC: named(0x0060),
  RING_GRP_FREE: named(0x0061),
  VNIC_RSS_COS_LB_CTX_ALLOC: command(0x0070, L.VnicRssCosLbCtxAllocInput, L.VnicRssCosLbCtxAllocOutput, NETDEV),
  VNIC_RSS_COS_LB_CTX_FREE: command(0x0071, L.VnicRssCosLbCtxFreeInput, L.VnicRssCosLbCtxFreeOutput, NETDEV),
  CFA_L2_FILTER_ALLOC: command(0x0090, L.CfaL2FilterAllocInput, L.CfaL2FilterAllocOutput, NETDEV),
  CFA_L2_FILTER_FREE: command(0x0091, L.CfaL2FilterFreeInput, L.CfaL2FilterFreeOutput, NETDEV),
  CFA_L2_SET_RX_MASK: command(0x0093, L.CfaL2SetRxMaskInput, L.CfaL2SetRxMaskOutput, NETDEV),
  STAT_CTX_ALLOC: command(0x00b0, StatCtxAllocInput, StatCtxAllocOutput),
  STAT_CTX_FREE: command(0x00b1, StatCtxFreeInput, StatCtxFreeOutput),
  STAT_CTX_QUERY: named(0x00b2),
  PORT_QSTATS_EXT: command(0x00b4, L.PortQstatsExtInput, L.PortQstatsExtOutput, NETDEV),
  FW_RESET: named(0x00c0),
  FW_SET_TIME: command(0x00c8, FwSetTimeInput, FwSetTimeOutput),
  TEMP_MONITOR_QUERY: named(0x00e0, NETDEV),
  WOL_FILTER_QCFG: named(0x00f2),
  FUNC_RESOURCE_QCAPS: command(0x0190, FuncResourceQcapsInput, FuncResourceQcapsOutput),
  FUNC_BACKING_STORE_QCAPS: command(0x0192, FuncBackingStoreQcapsInput, FuncBackingStoreQcapsOutput),
  FUNC_BACKING_STORE_CFG: command(0x0193, FuncBackingStoreCfgInput, FuncBackingStoreCfgOutput),
  FUNC_BACKING_STORE_QCFG: named(0x0194),
  FUNC_BACKING_STORE_CFG_V2: command(0x01a3, FuncBackingStoreCfgV2Input, FuncBackingStoreCfgV2Output),
  FUNC_BACKING_STORE_QCFG_V2: named(0x01a4),
  FUNC_DBR_PACING_QCFG: named(0x01a6),
  FUNC_BACKING_STORE_QCAPS_V2: command(0x01a8, FuncBackingStoreQcapsV2Input, FuncBackingStoreQcapsV2Output),
  SELFTEST_QLIST: named(0x0200, NETDEV),
  DBG_QCAPS: named(0xff20),
  NVM_GET_DEV_INFO: command(0xfff6, NvmGetDevInfoInput, NvmGetDevInfoOutput),
});

type Rows = typeof HWRM_COMMANDS;

/** The rows with layouts: the commands a driver can send here and the software NIC answers. */
export type HwrmCommandName = { [K in keyof Rows]: Rows[K] extends HwrmCommand ? K : never }[keyof Rows];

/** A command's request as decoded (every field, with its layout's type). */
export type HwrmRequest<K extends HwrmCommandName> =
  Rows[K] extends HwrmCommand<infer Q, Fields> ? Values<Q> : never;

/** A command's response fields (the header's error_code, req_type, seq_id, resp_len, valid among them). */
export type HwrmResponse<K extends HwrmCommandName> =
  Rows[K] extends HwrmCommand<Fields, infer S> ? Values<S> : never;

const ROWS: readonly (HwrmCommand | HwrmNamedCommand)[] = Object.values(HWRM_COMMANDS);
const BY_TYPE = new Map<number, HwrmCommand | HwrmNamedCommand>(ROWS.map((row) => [row.req_type, row]));

/** Every row, in request-type order (tests and scripts walk the table through this). */
export function hwrmRows(): readonly (HwrmCommand | HwrmNamedCommand)[] {
  return ROWS;
}

/** The command with layouts for a req_type, or undefined (a named command without layouts too; never throws). */
export function hwrmCommand(reqType: number): HwrmCommand | undefined {
  const row = BY_TYPE.get(reqType);
  return row?.request === undefined ? undefined : row;
}

/**
 * The header's name of a request type ("HWRM_FUNC_QCAPS"), or its number in hex ("0x01ff")
 * for one the table does not name. Never throws: meant for log and error messages.
 */
export function hwrmRequestName(reqType: number): string {
  const row = BY_TYPE.get(reqType);
  if (row !== undefined) return row.name;
  return Number.isInteger(reqType) && reqType >= 0 ? `0x${reqType.toString(16).padStart(4, '0')}` : String(reqType);
}
