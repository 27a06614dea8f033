/**
 * Function-level RoCE commands: INITIALIZE_FW, DEINITIALIZE_FW, QUERY_FUNC, QUERY_VERSION
 * (roce_hsi.h cmdq_initialize_fw, cmdq_query_func, cmdq_query_version; Linux bnxt_re qplib_rcfw.c
 * bnxt_qplib_init_rcfw, bnxt_qplib_deinit_rcfw, qplib_sp.c bnxt_qplib_get_dev_attr, bnxt_qplib_query_version).
 */
import {
  CmdqInitializeFw, CreqQueryFuncRespSb, CreqQueryVersionResp, DevCapFlags, InitializeFwFlags, RoceStatus,
  isHostMsnTable,
} from '../../../../firmware-hwrm/roce/index.ts';
import { refuse, success, type Answer, type RoceContext } from './roce-answer.ts';
import { queryFuncValues, ROCE_INTF_VERSION } from './roce-limits.ts';
import { HWRM_COMMANDS } from '../../../../firmware-hwrm/hwrm/commands.ts';

const BACKING_STORE_CFG = HWRM_COMMANDS.FUNC_BACKING_STORE_CFG;

const HW_RETX = DevCapFlags.HW_REQUESTER_RETX_ENABLED | DevCapFlags.HW_RESPONDER_RETX_ENABLED;

export function initializeFw(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqInitializeFw.decode(cmd);
  const { state, fn } = ctx;
  if (state.initialized) return refuse(RoceStatus.INVALID_CMD, 'INITIALIZE_FW: the function is already initialized');
  // P5 keeps RoCE contexts in the backing store HWRM configured; without it there is nowhere to put a QP.
  if (!fn.backingStore)
    return refuse(RoceStatus.RESOURCES, `INITIALIZE_FW: no context memory (${BACKING_STORE_CFG.name} first)`);
  const stat = fn.statCtxs.get(c.stat_ctx_id);
  if (!stat || !stat.roce)
    return refuse(
      RoceStatus.INVALID_PARAMETER, `INITIALIZE_FW: stat_ctx_id ${c.stat_ctx_id} is no RoCE statistics context`,
    );
  // Hardware retransmission is the firmware's to offer (QUERY_FUNC dev_cap_flags): a driver may
  // take it (HW_REQUESTER_RETX_SUPPORTED, Linux bnxt_qplib_init_rcfw) or not, as drivers older
  // than the flag do, but may not claim what was not offered.
  const offered = (ctx.firmware.devCapFlags & HW_RETX) !== 0;
  if ((c.flags & InitializeFwFlags.HW_REQUESTER_RETX_SUPPORTED) !== 0 && !offered) {
    return refuse(
      RoceStatus.INVALID_PARAMETER,
      'INITIALIZE_FW: HW_REQUESTER_RETX_SUPPORTED, but no hardware retransmission was offered',
    );
  }
  // The context-table fields are 0 on P5 (context memory comes from HWRM) and are ignored.
  state.initialized = true;
  state.statCtxId = c.stat_ctx_id;
  state.retransmitsFromMsnTable = (c.flags & InitializeFwFlags.HW_REQUESTER_RETX_SUPPORTED) !== 0
    && (ctx.firmware.devCapFlags & DevCapFlags.HW_REQUESTER_RETX_ENABLED) !== 0
    // The SQ's table is the MSN table only where dev_cap_ext_flags_2 says so, as the kernel and
    // rdma-core read it (qplib_res.h _is_host_msn_table): with hardware retransmission but
    // HOST_PSN_TABLE the driver keeps PSN search, and the model retransmits from its own record.
    && isHostMsnTable(ctx.firmware.devCapExtFlags2);
  return success();
}

export function deinitializeFw(ctx: RoceContext): Answer {
  const { state } = ctx;
  // The driver gives every object back first (Linux bnxt_re main.c: ib_unregister_device destroys them
  // before bnxt_re_dev_uninit deinitializes the firmware); refusing otherwise makes a leak visible.
  if (state.objects > 0) {
    return refuse(
      RoceStatus.FAIL,
      `DEINITIALIZE_FW: ${state.qps.size} QPs, ${state.cqs.size} CQs, ${state.keys.size} keys and ${state.gids.size} ` +
        `GIDs still exist`,
    );
  }
  state.initialized = false;
  state.statCtxId = 0;
  return success();
}

export function queryFunc(ctx: RoceContext): Answer {
  const f = ctx.firmware;
  const sideBuffer = CreqQueryFuncRespSb.encode(queryFuncValues(ctx.limits(), f.devCapFlags, f.devCapExtFlags2));
  return success(undefined, sideBuffer);
}

export function queryVersion(ctx: RoceContext): Answer {
  const v = ctx.firmware.roceVersion;
  return success(CreqQueryVersionResp.encode({
    fw_maj: v.maj, fw_minor: v.minor, fw_bld: v.bld, fw_rsvd: v.rsvd,
    intf_maj: ROCE_INTF_VERSION.maj, intf_minor: ROCE_INTF_VERSION.minor, intf_bld: ROCE_INTF_VERSION.bld,
    intf_rsvd: ROCE_INTF_VERSION.rsvd,
  }));
}
