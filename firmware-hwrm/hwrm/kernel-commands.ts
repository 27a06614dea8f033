/**
 * Layouts of the HWRM commands Linux's bnxt_en sends at probe and open that rig-bnxt's own
 * driver does not (docs/bnxt-en-bringup.md), listed for the command table (requests.ts).
 */
import type { FieldSpec, Layout } from '../layout.ts';
import type { HwrmCommandName } from './types.ts';
import { QueueQportcfgInput, QueueQportcfgOutput } from './queue.ts';
import { PortPhyQcapsInput, PortPhyQcapsOutput, PortLedQcapsInput, PortLedQcapsOutput } from './port-caps.ts';
import { VnicQcapsInput, VnicQcapsOutput } from './vnic-caps.ts';
import { FuncCfgInput, FuncCfgOutput } from './func-cfg.ts';

type AnyLayout = Layout<Record<string, FieldSpec>>;

export const KERNEL_COMMANDS: readonly (readonly [HwrmCommandName, AnyLayout, AnyLayout])[] = [
  ['QUEUE_QPORTCFG', QueueQportcfgInput, QueueQportcfgOutput],
  ['PORT_PHY_QCAPS', PortPhyQcapsInput, PortPhyQcapsOutput],
  ['PORT_LED_QCAPS', PortLedQcapsInput, PortLedQcapsOutput],
  ['VNIC_QCAPS', VnicQcapsInput, VnicQcapsOutput],
  ['FUNC_CFG', FuncCfgInput, FuncCfgOutput],
];
