/**
 * The HWRM commands the driver sends, each typed with its request and response layout
 * (firmware-hwrm/hwrm's REQUESTS table is the untyped twin the firmware model decodes with).
 */
import type { FieldSpec, Layout } from '../../firmware-hwrm/layout.ts';
import * as H from '../../firmware-hwrm/hwrm/index.ts';
import type { HwrmCommand } from './hwrm-channel.ts';

function command<Q extends Record<string, FieldSpec>, S extends Record<string, FieldSpec>>(
  reqType: number, request: Layout<Q>, response: Layout<S>,
): HwrmCommand<Q, S> {
  return { reqType, name: H.hwrmCommand(reqType)?.name ?? `HWRM 0x${reqType.toString(16)}`, request, response };
}

export const VER_GET = command(H.HWRM.VER_GET, H.VerGetInput, H.VerGetOutput);
export const FUNC_RESET = command(H.HWRM.FUNC_RESET, H.FuncResetInput, H.FuncResetOutput);
export const FUNC_QCAPS = command(H.HWRM.FUNC_QCAPS, H.FuncQcapsInput, H.FuncQcapsOutput);
export const FUNC_QCFG = command(H.HWRM.FUNC_QCFG, H.FuncQcfgInput, H.FuncQcfgOutput);
export const FUNC_CFG = command(H.HWRM.FUNC_CFG, H.FuncCfgInput, H.FuncCfgOutput);
export const FUNC_RESOURCE_QCAPS = command(
  H.HWRM.FUNC_RESOURCE_QCAPS, H.FuncResourceQcapsInput, H.FuncResourceQcapsOutput,
);
export const FUNC_DRV_RGTR = command(H.HWRM.FUNC_DRV_RGTR, H.FuncDrvRgtrInput, H.FuncDrvRgtrOutput);
export const FUNC_DRV_UNRGTR = command(H.HWRM.FUNC_DRV_UNRGTR, H.FuncDrvUnrgtrInput, H.FuncDrvUnrgtrOutput);
export const FUNC_DRV_IF_CHANGE = command(
  H.HWRM.FUNC_DRV_IF_CHANGE, H.FuncDrvIfChangeInput, H.FuncDrvIfChangeOutput,
);
export const PORT_PHY_QCFG = command(H.HWRM.PORT_PHY_QCFG, H.PortPhyQcfgInput, H.PortPhyQcfgOutput);
export const BACKING_STORE_QCAPS = command(
  H.HWRM.FUNC_BACKING_STORE_QCAPS, H.FuncBackingStoreQcapsInput, H.FuncBackingStoreQcapsOutput,
);
export const BACKING_STORE_CFG = command(
  H.HWRM.FUNC_BACKING_STORE_CFG, H.FuncBackingStoreCfgInput, H.FuncBackingStoreCfgOutput,
);
export const BACKING_STORE_QCAPS_V2 = command(
  H.HWRM.FUNC_BACKING_STORE_QCAPS_V2, H.FuncBackingStoreQcapsV2Input, H.FuncBackingStoreQcapsV2Output,
);
export const BACKING_STORE_CFG_V2 = command(
  H.HWRM.FUNC_BACKING_STORE_CFG_V2, H.FuncBackingStoreCfgV2Input, H.FuncBackingStoreCfgV2Output,
);
export const QUEUE_QPORTCFG = command(H.HWRM.QUEUE_QPORTCFG, H.QueueQportcfgInput, H.QueueQportcfgOutput);
export const STAT_CTX_ALLOC = command(H.HWRM.STAT_CTX_ALLOC, H.StatCtxAllocInput, H.StatCtxAllocOutput);
export const STAT_CTX_FREE = command(H.HWRM.STAT_CTX_FREE, H.StatCtxFreeInput, H.StatCtxFreeOutput);
export const RING_ALLOC = command(H.HWRM.RING_ALLOC, H.RingAllocInput, H.RingAllocOutput);
export const RING_FREE = command(H.HWRM.RING_FREE, H.RingFreeInput, H.RingFreeOutput);
export const VNIC_ALLOC = command(H.HWRM.VNIC_ALLOC, H.VnicAllocInput, H.VnicAllocOutput);
export const VNIC_FREE = command(H.HWRM.VNIC_FREE, H.VnicFreeInput, H.VnicFreeOutput);
export const VNIC_CFG = command(H.HWRM.VNIC_CFG, H.VnicCfgInput, H.VnicCfgOutput);
export const VNIC_QCAPS = command(H.HWRM.VNIC_QCAPS, H.VnicQcapsInput, H.VnicQcapsOutput);
export const CFA_L2_FILTER_ALLOC = command(
  H.HWRM.CFA_L2_FILTER_ALLOC, H.CfaL2FilterAllocInput, H.CfaL2FilterAllocOutput,
);
export const CFA_L2_FILTER_FREE = command(
  H.HWRM.CFA_L2_FILTER_FREE, H.CfaL2FilterFreeInput, H.CfaL2FilterFreeOutput,
);
export const CFA_L2_SET_RX_MASK = command(
  H.HWRM.CFA_L2_SET_RX_MASK, H.CfaL2SetRxMaskInput, H.CfaL2SetRxMaskOutput,
);
