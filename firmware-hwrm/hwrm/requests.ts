/**
 * The command table: req_type -> its name and its request and response layouts, so the
 * software NIC can decode whatever request arrives and a driver can find the response
 * layout of what it sent.
 */
import type { FieldSpec, Layout } from '../layout.ts';
import { HWRM } from './types.ts';
import type { HwrmCommandName } from './types.ts';
import { VerGetInput, VerGetOutput } from './ver-get.ts';
import {
  FuncResetInput, FuncResetOutput, FuncQcapsInput, FuncQcapsOutput, FuncQcfgInput, FuncQcfgOutput,
  FuncResourceQcapsInput, FuncResourceQcapsOutput,
} from './func.ts';
import {
  FuncDrvRgtrInput, FuncDrvRgtrOutput, FuncDrvUnrgtrInput, FuncDrvUnrgtrOutput, FuncDrvIfChangeInput,
  FuncDrvIfChangeOutput,
} from './func-drv.ts';
import { PortPhyQcfgInput, PortPhyQcfgOutput } from './port.ts';
import {
  FuncBackingStoreQcapsInput, FuncBackingStoreQcapsOutput, FuncBackingStoreCfgInput, FuncBackingStoreCfgOutput,
  FuncBackingStoreQcapsV2Input, FuncBackingStoreQcapsV2Output, FuncBackingStoreCfgV2Input, FuncBackingStoreCfgV2Output,
} from './backing-store.ts';
import { StatCtxAllocInput, StatCtxAllocOutput, StatCtxFreeInput, StatCtxFreeOutput } from './stat-ctx.ts';
import { RingAllocInput, RingAllocOutput, RingFreeInput, RingFreeOutput } from './ring.ts';
import { KERNEL_COMMANDS } from './kernel-commands.ts';

/** Any layout, seen through its common surface (field names known only at run time). */
export type AnyLayout = Layout<Record<string, FieldSpec>>;

export interface HwrmCommandSpec {
  readonly req_type: number;
  /** The header's name, e.g. "HWRM_FUNC_QCAPS". */
  readonly name: string;
  readonly request: AnyLayout;
  readonly response: AnyLayout;
}

function command(name: HwrmCommandName, request: AnyLayout, response: AnyLayout): HwrmCommandSpec {
  return { req_type: HWRM[name], name: `HWRM_${name}`, request, response };
}

const COMMANDS: readonly HwrmCommandSpec[] = [
  command('VER_GET', VerGetInput, VerGetOutput),
  command('FUNC_RESET', FuncResetInput, FuncResetOutput),
  command('FUNC_QCAPS', FuncQcapsInput, FuncQcapsOutput),
  command('FUNC_QCFG', FuncQcfgInput, FuncQcfgOutput),
  command('FUNC_DRV_RGTR', FuncDrvRgtrInput, FuncDrvRgtrOutput),
  command('FUNC_DRV_UNRGTR', FuncDrvUnrgtrInput, FuncDrvUnrgtrOutput),
  command('FUNC_DRV_IF_CHANGE', FuncDrvIfChangeInput, FuncDrvIfChangeOutput),
  command('FUNC_RESOURCE_QCAPS', FuncResourceQcapsInput, FuncResourceQcapsOutput),
  command('PORT_PHY_QCFG', PortPhyQcfgInput, PortPhyQcfgOutput),
  command('FUNC_BACKING_STORE_QCAPS', FuncBackingStoreQcapsInput, FuncBackingStoreQcapsOutput),
  command('FUNC_BACKING_STORE_CFG', FuncBackingStoreCfgInput, FuncBackingStoreCfgOutput),
  command('FUNC_BACKING_STORE_QCAPS_V2', FuncBackingStoreQcapsV2Input, FuncBackingStoreQcapsV2Output),
  command('FUNC_BACKING_STORE_CFG_V2', FuncBackingStoreCfgV2Input, FuncBackingStoreCfgV2Output),
  command('STAT_CTX_ALLOC', StatCtxAllocInput, StatCtxAllocOutput),
  command('STAT_CTX_FREE', StatCtxFreeInput, StatCtxFreeOutput),
  command('RING_ALLOC', RingAllocInput, RingAllocOutput),
  command('RING_FREE', RingFreeInput, RingFreeOutput),
  // What Linux's bnxt_en sends beyond the commands above (the vfio-user bring-up).
  ...KERNEL_COMMANDS.map(([name, request, response]) => command(name, request, response)),
];

/** Every command with layouts here, by req_type. A req_type not in it has no layout (yet). */
export const REQUESTS: ReadonlyMap<number, HwrmCommandSpec> = new Map(COMMANDS.map((c) => [c.req_type, c]));

/** The command spec for a req_type, or undefined (never throws). */
export function hwrmCommand(reqType: number): HwrmCommandSpec | undefined {
  return REQUESTS.get(reqType);
}
