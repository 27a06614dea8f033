/**
 * MODIFY_ROCE_CC (0x8c): congestion-control settings. bnxt_re sends it when the device
 * registers (Linux bnxt_re main.c bnxt_re_setup_cc, qplib_sp.c bnxt_qplib_modify_cc: on P5 and P7
 * TLV-encapsulated, the base cmdq_modify_roce_cc then the gen1 extension). The software NIC
 * runs no congestion control (no ECN marks, no CNPs): it takes a well-formed command and
 * keeps nothing, as a firmware with CC disabled by policy would.
 */
import { RoceStatus } from '../../../../firmware-hwrm/roce/index.ts';
import { refuse, success, type Answer, type RoceContext } from './roce-answer.ts';

/** roce_hsi.h: cmdq_modify_roce_cc is 56 bytes. */
const MODIFY_ROCE_CC_BYTES = 56;

export function modifyRoceCc(_ctx: RoceContext, cmd: Uint8Array): Answer {
  if (cmd.length < MODIFY_ROCE_CC_BYTES)
    return refuse(
      RoceStatus.INVALID_PARAMETER,
      `MODIFY_ROCE_CC of ${cmd.length} bytes: the base command is ${MODIFY_ROCE_CC_BYTES}`,
    );
  return success();
}
