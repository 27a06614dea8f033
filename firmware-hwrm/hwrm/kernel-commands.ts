/**
 * Layouts of the HWRM commands Linux's bnxt_en sends at probe and open that rig-bnxt's own
 * driver does not (docs/bnxt-en-bringup.md), listed for the command table (requests.ts).
 */
import type { FieldSpec, Layout } from '../layout.ts';
import type { HwrmCommandName } from './types.ts';
import { QueueQportcfgInput, QueueQportcfgOutput, QueuePri2cosQcfgInput, QueuePri2cosQcfgOutput } from './queue.ts';
import { PortPhyQcapsInput, PortPhyQcapsOutput, PortLedQcapsInput, PortLedQcapsOutput } from './port-caps.ts';
import { VnicQcapsInput, VnicQcapsOutput } from './vnic-caps.ts';
import { FuncCfgInput, FuncCfgOutput } from './func-cfg.ts';
import * as L from './l2.ts';
import { FwSetTimeInput, FwSetTimeOutput, NvmGetDevInfoInput, NvmGetDevInfoOutput } from './fw-nvm.ts';

type AnyLayout = Layout<Record<string, FieldSpec>>;

export const KERNEL_COMMANDS: readonly (readonly [HwrmCommandName, AnyLayout, AnyLayout])[] = [
  ['FW_SET_TIME', FwSetTimeInput, FwSetTimeOutput],
  ['NVM_GET_DEV_INFO', NvmGetDevInfoInput, NvmGetDevInfoOutput],
  ['QUEUE_QPORTCFG', QueueQportcfgInput, QueueQportcfgOutput],
  ['QUEUE_PRI2COS_QCFG', QueuePri2cosQcfgInput, QueuePri2cosQcfgOutput],
  ['PORT_PHY_QCAPS', PortPhyQcapsInput, PortPhyQcapsOutput],
  ['PORT_LED_QCAPS', PortLedQcapsInput, PortLedQcapsOutput],
  ['VNIC_QCAPS', VnicQcapsInput, VnicQcapsOutput],
  ['FUNC_CFG', FuncCfgInput, FuncCfgOutput],
  ['VNIC_ALLOC', L.VnicAllocInput, L.VnicAllocOutput],
  ['VNIC_FREE', L.VnicFreeInput, L.VnicFreeOutput],
  ['VNIC_CFG', L.VnicCfgInput, L.VnicCfgOutput],
  ['VNIC_RSS_CFG', L.VnicRssCfgInput, L.VnicRssCfgOutput],
  ['VNIC_RSS_COS_LB_CTX_ALLOC', L.VnicRssCosLbCtxAllocInput, L.VnicRssCosLbCtxAllocOutput],
  ['VNIC_RSS_COS_LB_CTX_FREE', L.VnicRssCosLbCtxFreeInput, L.VnicRssCosLbCtxFreeOutput],
  ['VNIC_PLCMODES_CFG', L.VnicPlcmodesCfgInput, L.VnicPlcmodesCfgOutput],
  ['CFA_L2_FILTER_ALLOC', L.CfaL2FilterAllocInput, L.CfaL2FilterAllocOutput],
  ['CFA_L2_FILTER_FREE', L.CfaL2FilterFreeInput, L.CfaL2FilterFreeOutput],
  ['CFA_L2_SET_RX_MASK', L.CfaL2SetRxMaskInput, L.CfaL2SetRxMaskOutput],
  ['RING_CMPL_RING_CFG_AGGINT_PARAMS', L.RingCmplRingCfgAggintParamsInput, L.RingCmplRingCfgAggintParamsOutput],
  ['RING_AGGINT_QCAPS', L.RingAggintQcapsInput, L.RingAggintQcapsOutput],
  ['PORT_MAC_CFG', L.PortMacCfgInput, L.PortMacCfgOutput],
  ['PORT_PHY_CFG', L.PortPhyCfgInput, L.PortPhyCfgOutput],
  ['PORT_QSTATS', L.PortQstatsInput, L.PortQstatsOutput],
  ['PORT_QSTATS_EXT', L.PortQstatsExtInput, L.PortQstatsExtOutput],
];
