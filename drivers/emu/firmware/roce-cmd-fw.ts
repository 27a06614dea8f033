/**
 * Function-level RoCE commands: INITIALIZE_FW, DEINITIALIZE_FW, QUERY_FUNC, QUERY_VERSION
 * (roce_hsi.h cmdq_initialize_fw, cmdq_query_func, cmdq_query_version; Linux bnxt_re qplib_rcfw.c
 * bnxt_qplib_init_rcfw, bnxt_qplib_deinit_rcfw, qplib_sp.c bnxt_qplib_get_dev_attr, bnxt_qplib_query_version).
 */
import {
  CmdqInitializeFw, CreqQueryFuncRespSb, CreqQueryVersionResp, RoceStatus,
} from '../../../firmware-hwrm/roce/index.ts';
import { refuse, success, type Answer, type RoceContext } from './roce-answer.ts';
import { queryFuncValues, ROCE_FW_VERSION, ROCE_INTF_VERSION } from './roce-limits.ts';

export function initializeFw(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqInitializeFw.decode(cmd);
  const { state, fn } = ctx;
  if (state.initialized) return refuse(RoceStatus.INVALID_CMD, 'INITIALIZE_FW: the function is already initialized');
  // P5 keeps RoCE contexts in the backing store HWRM configured; without it there is nowhere to put a QP.
  if (!fn.backingStore) return refuse(RoceStatus.RESOURCES, 'INITIALIZE_FW: no context memory (HWRM_FUNC_BACKING_STORE_CFG first)');
  const stat = fn.statCtxs.get(c.stat_ctx_id);
  if (!stat || !stat.roce) return refuse(RoceStatus.INVALID_PARAMETER, `INITIALIZE_FW: stat_ctx_id ${c.stat_ctx_id} is no RoCE statistics context`);
  // The context-table fields are 0 on P5 (context memory comes from HWRM) and are ignored.
  state.initialized = true;
  state.statCtxId = c.stat_ctx_id;
  return success();
}

export function deinitializeFw(ctx: RoceContext): Answer {
  const { state } = ctx;
  // The driver gives every object back first (Linux bnxt_re main.c: ib_unregister_device destroys them
  // before bnxt_re_dev_uninit deinitializes the firmware); refusing otherwise makes a leak visible.
  if (state.objects > 0) {
    return refuse(RoceStatus.FAIL, `DEINITIALIZE_FW: ${state.qps.size} QPs, ${state.cqs.size} CQs, ${state.keys.size} keys and ${state.gids.size} GIDs still exist`);
  }
  state.initialized = false;
  state.statCtxId = 0;
  return success();
}

export function queryFunc(ctx: RoceContext): Answer {
  return success(undefined, CreqQueryFuncRespSb.encode(queryFuncValues(ctx.limits())));
}

export function queryVersion(): Answer {
  return success(CreqQueryVersionResp.encode({
    fw_maj: ROCE_FW_VERSION.maj, fw_minor: ROCE_FW_VERSION.minor, fw_bld: ROCE_FW_VERSION.bld, fw_rsvd: ROCE_FW_VERSION.rsvd,
    intf_maj: ROCE_INTF_VERSION.maj, intf_minor: ROCE_INTF_VERSION.minor, intf_bld: ROCE_INTF_VERSION.bld, intf_rsvd: ROCE_INTF_VERSION.rsvd,
  }));
}
