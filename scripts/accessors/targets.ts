/**
 * Which Layout tables get word accessors, and the generated file each set goes to. Every
 * format the driver or the software NIC reads or writes on a hot path is here.
 */
import type { FieldSpec, Layout } from '../../firmware-hwrm/layout.ts';
import { SqSendHdr, SqRdmaHdr, SqSge, RqWqeHdr, SqPsnSearchExt, SqMsnSearch } from '../../firmware-hwrm/roce/wqe.ts';
import { CqBase, CqReq, CqResRc, CqTerminal, CqCutoff } from '../../firmware-hwrm/roce/cqe.ts';
import { NqBase, NqCn, NqSrqEvent } from '../../firmware-hwrm/roce/nqe.ts';
import {
  CreqBase, CreqQpEvent, CreqQpErrorNotification, CreqCqErrorNotification, CreqFuncEvent,
} from '../../firmware-hwrm/roce/creq.ts';
import { CmdqInit, CmdqBase } from '../../firmware-hwrm/roce/cmdq.ts';
import { DbcDbc } from '../../firmware-hwrm/roce/doorbell.ts';
import { HwrmOutput, HwrmErrOutput, HwrmShortInput } from '../../firmware-hwrm/hwrm/header.ts';

export interface AccessorTarget {
  /** Repository path of the generated file. */
  readonly path: string;
  /** The module holding the tables (named in the file's header). */
  readonly tables: string;
  readonly layouts: readonly (readonly [Layout<Record<string, FieldSpec>>, string])[];
}

export const ACCESSOR_TARGETS: readonly AccessorTarget[] = [
  {
    path: 'firmware-hwrm/roce/wqe.g.ts', tables: 'wqe.ts', layouts: [
      [SqSendHdr, 'roce_hsi.h: struct sq_send_hdr'], [SqRdmaHdr, 'roce_hsi.h: struct sq_rdma_hdr'],
      [SqSge, 'roce_hsi.h: struct sq_sge'], [RqWqeHdr, 'roce_hsi.h: struct rq_wqe_hdr'],
      [SqPsnSearchExt, 'roce_hsi.h: struct sq_psn_search_ext'], [SqMsnSearch, 'roce_hsi.h: struct sq_msn_search'],
    ],
  },
  {
    path: 'firmware-hwrm/roce/cqe.g.ts', tables: 'cqe.ts', layouts: [
      [CqBase, 'roce_hsi.h: struct cq_base'], [CqReq, 'roce_hsi.h: struct cq_req'],
      [CqResRc, 'roce_hsi.h: struct cq_res_rc'],
      [CqTerminal, 'roce_hsi.h: struct cq_terminal'], [CqCutoff, 'roce_hsi.h: struct cq_cutoff'],
    ],
  },
  {
    path: 'firmware-hwrm/roce/nqe.g.ts', tables: 'nqe.ts', layouts: [
      [NqBase, 'roce_hsi.h: struct nq_base'], [NqCn, 'roce_hsi.h: struct nq_cn'],
      [NqSrqEvent, 'roce_hsi.h: struct nq_srq_event'],
    ],
  },
  {
    path: 'firmware-hwrm/roce/creq.g.ts', tables: 'creq.ts', layouts: [
      [CreqBase, 'roce_hsi.h: struct creq_base'], [CreqQpEvent, 'roce_hsi.h: struct creq_qp_event'],
      [CreqQpErrorNotification, 'roce_hsi.h: struct creq_qp_error_notification'],
      [CreqCqErrorNotification, 'roce_hsi.h: struct creq_cq_error_notification'],
      [CreqFuncEvent, 'roce_hsi.h: struct creq_func_event'],
    ],
  },
  {
    path: 'firmware-hwrm/roce/cmdq.g.ts', tables: 'cmdq.ts', layouts: [
      [CmdqInit, 'roce_hsi.h: struct cmdq_init'], [CmdqBase, 'roce_hsi.h: struct cmdq_base'],
    ],
  },
  {
    path: 'firmware-hwrm/roce/doorbell.g.ts', tables: 'doorbell.ts', layouts: [[DbcDbc, 'bnxt_hsi.h: struct dbc_dbc']],
  },
  {
    path: 'firmware-hwrm/hwrm/header.g.ts', tables: 'header.ts', layouts: [
      [HwrmOutput, 'bnxt_hsi.h: struct output'], [HwrmErrOutput, 'bnxt_hsi.h: struct hwrm_err_output'],
      [HwrmShortInput, 'bnxt_hsi.h: struct hwrm_short_input'],
    ],
  },
];
