/**
 * CREATE_QP, DESTROY_QP and QUERY_QP (roce_hsi.h cmdq_create_qp, cmdq_destroy_qp, cmdq_query_qp,
 * sq_psn_search_ext; Linux bnxt_re qplib_fp.c bnxt_qplib_create_qp, bnxt_qplib_query_qp). Only RC
 * QPs are run, in static WQE mode or (Thor2) variable-size mode; the GSI QP (QP1) is kept but
 * not run (createGsiQp):
 *
 *   SQ memory: [ sq_size WQEs x 128 B ][ sq_size PSN-search entries x 16 B ]   (one PBL)
 *              or, with hardware retransmission, [ roundup_pow_of_two(sq_size) MSN entries x 8 B ]
 *              variable mode: sq_size counts 16-byte slots, and the MSN table has half as many
 *              (entry sizes: the chip profile's, firmware-hwrm/chips.ts)
 *   RQ memory: [ rq_size WQEs x 128 B ], or in variable mode x (2 + rq_sge) x 16 B: rdma-core's
 *              bnxt_re_get_rq_slots and Linux's bnxt_re_get_rwqe_size size a receive WQE for
 *              its SGEs there (the 32-byte header and rq_sge SGEs), and post them back to back
 *   ORRQ (max_qp_init_rd_atom + 1) x 32 B, IRRQ (2 x max_qp_rd_atom + 2) x 32 B, contiguous
 */
import {
  CmdqCreateQp, CmdqDestroyQp, CmdqQueryQp, CreateQpFlags, CreqCreateQpResp, CreqDestroyQpResp, CreqQueryQpRespSb,
  QpType, RoceStatus, XRRQ_ENTRY_BYTES,
} from '../../../../firmware-hwrm/roce/index.ts';
import { SLOT_BYTES, VAR_SQ_SLOT_ALIGN, WQE_HEADER_SLOTS } from '../../../../firmware-hwrm/roce/wqe.ts';
import { EmuQp, type EmuCq } from '../objects.ts';
import { handleHalves, refuse, success, type Answer, type RoceContext } from './roce-answer.ts';
import { resolveRing } from './roce-memory.ts';
import { internalQueueMemory } from './roce-cmd-modify-qp.ts';
import { msnTableEntries } from '../../../../firmware-hwrm/roce/msn-table.ts';
import type { FwQp } from './roce-tables.ts';
import type { RoceLimits } from './roce-limits.ts';

/** Static WQE mode: every SQ and RQ WQE occupies 128 bytes. */
export const WQE_BYTES = 128;
/** The most 16-byte slots a variable-mode SQ may have (qplib_sp.h: "FW is capping sq_size at 65535"). */
const MAX_VAR_SQ_SLOTS = 0xffff;
/** The GSI QP's number. */
export const GSI_QPN = 1;

const KNOWN_UNMODELLED_TYPES: readonly number[] = [QpType.UD, QpType.RAW_ETHERTYPE];

type CreateQp = ReturnType<typeof CmdqCreateQp.decode>;
interface QpQueues {
  readonly sq: NonNullable<ReturnType<typeof resolveRing>>;
  readonly rq: NonNullable<ReturnType<typeof resolveRing>>;
  readonly scq: EmuCq;
  readonly rcq: EmuCq;
}

/** The ORRQ's and IRRQ's alignment: a page (bnxt_qplib_create_qp). */
const XRRQ_ALIGN = 4096;

export function createQp(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqCreateQp.decode(cmd);
  if (c.type === QpType.GSI) return createGsiQp(ctx, c);
  if (c.type !== QpType.RC) {
    return KNOWN_UNMODELLED_TYPES.includes(c.type)
      ? refuse(RoceStatus.NOT_IMPLEMENTED, `CREATE_QP: QP type ${c.type} is not modelled (RC and GSI only)`)
      : refuse(RoceStatus.INVALID_PARAMETER, `CREATE_QP: QP type ${c.type} is unknown`);
  }
  // After the WQEs (sq_size of them, or of 16-byte slots in variable mode): PSN search, one
  // entry per sq_size, or with hardware retransmission the MSN table of roundup_pow_of_two(sq_size)
  // entries, half that in variable mode (qplib_fp.c bnxt_qplib_create_qp).
  const variable = (c.qp_flags & CreateQpFlags.VARIABLE_SIZED_WQE_ENABLED) !== 0;
  const msnEntries = ctx.state.retransmitsFromMsnTable ? msnTableEntries(c.sq_size, variable) : 0;
  const chip = ctx.bus.chip;
  const tableBytes = msnEntries ? msnEntries * chip.msnEntryBytes : c.sq_size * chip.psnSearchEntryBytes;
  const queues = checkQueues(ctx, c, tableBytes);
  if ('status' in queues) return queues;
  const { state, bus } = ctx;
  const limits = ctx.limits();
  const P = RoceStatus.INVALID_PARAMETER;
  const iommu = bus.iommu;
  const orrqBytes = (limits.maxQpInitRdAtom + 1) * XRRQ_ENTRY_BYTES;
  const irrqBytes = (2 * limits.maxQpRdAtom + 2) * XRRQ_ENTRY_BYTES;
  // Each read-request queue starts at a page, as Linux bnxt_qplib_create_qp allocates them (its
  // own page-rounded buffer, the first page's address). Whether Thor needs that is not public:
  // the stricter reading.
  if (c.orrq_addr % XRRQ_ALIGN !== 0 || c.irrq_addr % XRRQ_ALIGN !== 0) {
    const at = `ORRQ 0x${c.orrq_addr.toString(16)}, IRRQ 0x${c.irrq_addr.toString(16)}`;
    return refuse(P, `CREATE_QP: the read-request queues must each start at a 4 KiB page (${at})`);
  }
  if (!iommu.check(c.orrq_addr, orrqBytes))
    return refuse(P, `CREATE_QP: ORRQ at 0x${c.orrq_addr.toString(16)} is not ${orrqBytes} mapped bytes`);
  if (!iommu.check(c.irrq_addr, irrqBytes))
    return refuse(P, `CREATE_QP: IRRQ at 0x${c.irrq_addr.toString(16)} is not ${irrqBytes} mapped bytes`);
  const qpn = state.qpIds.alloc(limits.maxQp);
  if (qpn === undefined) return refuse(RoceStatus.RESOURCES, `CREATE_QP: all ${limits.maxQp} QPs are in use`);
  const [lo, hi] = handleHalves(c.qp_handle);
  const qp = new EmuQp(qpn, c.pd_id, lo, hi, queues.sq, queues.rq, queues.scq, queues.rcq, c.sq_sge, c.rq_sge);
  qp.msnEntries = msnEntries;
  qp.variableWqe = variable;
  state.qps.set(qpn, newContext(qp, c.sq_size, c.rq_size));
  return success(CreqCreateQpResp.encode({ xid: qpn }));
}

/**
 * The function's GSI QP (CREATE_QP type GSI), as bnxt_re creates QP1 on P5 for the MAD layer
 * (ib_verbs.c bnxt_re_init_qp_type: "For Thor always force UD mode", then
 * bnxt_qplib_create_qp). A UD QP: no PSN-search area and no ORRQ/IRRQ (qplib_fp.c gives those
 * to RC QPs only). Its number is 1, the QP number MADs are addressed to (IBA 13.5; bnxt_re's
 * qplib_rcfw.h map_qp_id_to_tbl_indx keeps qid 1 apart), and a function has one. The engine
 * runs no UD traffic: QP1's doorbells and frames are counted and left (docs/hardware.md).
 */
function createGsiQp(ctx: RoceContext, c: CreateQp): Answer {
  const { state } = ctx;
  if (state.qps.has(GSI_QPN))
    return refuse(RoceStatus.RESOURCES, 'CREATE_QP: the function\'s GSI QP (QP1) exists already');
  const queues = checkQueues(ctx, c, 0);
  if ('status' in queues) return queues;
  const [lo, hi] = handleHalves(c.qp_handle);
  const qp = new EmuQp(
    GSI_QPN, c.pd_id, lo, hi, queues.sq, queues.rq, queues.scq, queues.rcq, c.sq_sge, c.rq_sge, 'gsi',
  );
  state.qps.set(GSI_QPN, newContext(qp, c.sq_size, c.rq_size));
  return success(CreqCreateQpResp.encode({ xid: GSI_QPN }));
}

/**
 * The checks every QP's queues pass: sizes, SGEs, DPI, CQs, and the rings in mapped memory;
 * `auxBytes` follow the SQ's WQEs (PSN search or the MSN table; none for the GSI QP).
 */
function checkQueues(ctx: RoceContext, c: CreateQp, auxBytes: number): QpQueues | Answer {
  const { state, bus } = ctx;
  const limits = ctx.limits();
  const P = RoceStatus.INVALID_PARAMETER;
  if (c.qp_flags & CreateQpFlags.SRQ_USED)
    return refuse(RoceStatus.NOT_IMPLEMENTED, 'CREATE_QP: SRQs are not modelled');
  const variable = (c.qp_flags & CreateQpFlags.VARIABLE_SIZED_WQE_ENABLED) !== 0;
  if (variable && !ctx.variableWqe) {
    // Only Thor2 runs variable-size WQEs: every public driver uses static mode on P5
    // (Linux bnxt_re main.c bnxt_re_set_drv_mode). The stricter reading: P5 refuses it.
    return refuse(RoceStatus.INVALID_PARAMETER, 'CREATE_QP: this chip takes only static (128-byte) WQEs');
  }
  // bnxt_re creates its GSI QP (QP1) in the function's WQE mode too (qplib_fp.c
  // bnxt_qplib_create_qp1: VARIABLE_SIZED_WQE_ENABLED and sq_size in slots on P7).
  if (variable && c.type !== QpType.RC && c.type !== QpType.GSI) {
    return refuse(RoceStatus.NOT_IMPLEMENTED, 'CREATE_QP: variable-size WQEs are modelled on RC and GSI QPs only');
  }
  const sizes = beyondQueueLimits(c, variable, limits);
  if (sizes !== undefined) return refuse(P, `CREATE_QP: ${sizes}`);
  if (c.dpi >= limits.maxDpi) return refuse(P, `CREATE_QP: dpi ${c.dpi} is not below ${limits.maxDpi}`);
  const scq = state.cqs.get(c.scq_cid)?.cq;
  const rcq = state.cqs.get(c.rcq_cid)?.cq;
  if (!scq || !rcq) return refuse(P, `CREATE_QP: no CQ ${scq ? c.rcq_cid : c.scq_cid}`);
  const iommu = bus.iommu;
  const sqEntryBytes = variable ? SLOT_BYTES : WQE_BYTES;
  const sq = resolveRing(
    iommu, c.sq_pbl, c.sq_lvl, c.sq_pg_size, c.sq_size, sqEntryBytes, c.sq_size * sqEntryBytes + auxBytes,
  );
  const after = auxBytes ? ' (with its PSN search area or MSN table)' : '';
  if (!sq) return refuse(P, `CREATE_QP: the SQ${after} at 0x${c.sq_pbl.toString(16)} is not mapped`);
  const rqEntryBytes = variable ? (WQE_HEADER_SLOTS + c.rq_sge) * SLOT_BYTES : WQE_BYTES;
  const rq = resolveRing(
    iommu, c.rq_pbl, c.rq_lvl, c.rq_pg_size, c.rq_size, rqEntryBytes, c.rq_size * rqEntryBytes,
  );
  if (!rq) return refuse(P, `CREATE_QP: the RQ at 0x${c.rq_pbl.toString(16)} is not mapped`);
  return { sq, rq, scq, rcq };
}

/**
 * Sizes and SGEs beyond what QUERY_FUNC reported (the strict reading: firmware holds a QP to the
 * limits it reports; docs/hardware.md). A static SQ and every RQ count WQEs against max_qp_wr:
 * Linux bnxt_re hands the chip at most max_qp_wr SQ WQEs in static mode (ib_verbs.c
 * bnxt_re_init_sq_attr: max_qp_wqes + 128 + 1) and fewer RQ WQEs. A variable-mode SQ counts
 * 16-byte slots, which QUERY_FUNC bounds by no field: the firmware caps them at 65535 (qplib_sp.h,
 * beside BNXT_VAR_MAX_WQE), in whole 256-slot blocks (bnxt_qplib_get_depth, BNXT_VAR_MAX_SLOT_ALIGN).
 * SGEs: max_sge in static mode, max_sge_var_wqe in variable mode (what bnxt_qplib_get_dev_attr
 * reads for each mode).
 */
function beyondQueueLimits(c: CreateQp, variable: boolean, limits: RoceLimits): string | undefined {
  if (variable && (c.sq_size > MAX_VAR_SQ_SLOTS || c.sq_size % VAR_SQ_SLOT_ALIGN !== 0 || c.sq_size === 0)) {
    const blocks = `a multiple of ${VAR_SQ_SLOT_ALIGN} up to ${MAX_VAR_SQ_SLOTS}`;
    return `a variable-size WQE SQ of ${c.sq_size} slots is not ${blocks}`;
  }
  if (!variable && c.sq_size > limits.maxQpWqes) return `sq_size ${c.sq_size} is over max_qp_wr ${limits.maxQpWqes}`;
  if (c.rq_size > limits.maxQpWqes) return `rq_size ${c.rq_size} is over max_qp_wr ${limits.maxQpWqes}`;
  const maxSge = variable ? limits.maxSgeVarWqe : limits.maxSge;
  const field = variable ? 'max_sge_var_wqe' : 'max_sge';
  if (c.sq_sge > maxSge || c.rq_sge > maxSge) return `sq_sge ${c.sq_sge} / rq_sge ${c.rq_sge} over ${field} ${maxSge}`;
  return undefined;
}

function newContext(qp: EmuQp, sqSize: number, rqSize: number): FwQp {
  return {
    qp, sqSize, rqSize, qkey: 0, flowLabel: 0, trafficClass: 0, vlanId: 0, vlanDei: 0, vlanPcp: 0, tosEcn: 0,
    tosDscp: 0, enableCc: 0, networkType: 0, enSqdAsyncNotify: 0, srcMac: undefined, usesSgid: false,
  };
}

export function destroyQp(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqDestroyQp.decode(cmd);
  const { state } = ctx;
  const fq = state.qps.get(c.qp_cid);
  if (!fq) return refuse(RoceStatus.INVALID_PARAMETER, `DESTROY_QP: no QP ${c.qp_cid}`);
  state.qps.delete(c.qp_cid);
  state.qpIds.free(c.qp_cid);
  fq.qp.destroyed = true;
  ctx.hooks.qpDestroyed(fq.qp);
  return success(CreqDestroyQpResp.encode({ xid: c.qp_cid }));
}

export function queryQp(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqQueryQp.decode(cmd);
  const { state, bus } = ctx;
  const fq = state.qps.get(c.qp_cid);
  if (!fq) return refuse(RoceStatus.INVALID_PARAMETER, `QUERY_QP: no QP ${c.qp_cid}`);
  const qp = fq.qp;
  const srcMac = fq.srcMac ?? state.gids.get(qp.sgidIndex)?.mac ?? bus.config.mac;
  return success(undefined, CreqQueryQpRespSb.encode({
    xid: qp.qpn,
    state: qp.state,
    en_sqd_async_notify: fq.enSqdAsyncNotify,
    access: qp.access,
    pkey: qp.pkey,
    qkey: fq.qkey,
    dgid: qp.destGid,
    flow_label: fq.flowLabel,
    sgid_index: qp.sgidIndex,
    hop_limit: qp.hopLimit,
    traffic_class: fq.trafficClass,
    dest_mac: qp.destMac,
    dest_vlan_id: fq.vlanId,
    path_mtu: Math.log2(qp.pathMtuBytes / 256),
    timeout: qp.timeout,
    retry_cnt: qp.retryCnt,
    rnr_retry: qp.rnrRetry,
    min_rnr_timer: qp.minRnrTimer,
    rq_psn: qp.rqPsn,
    sq_psn: qp.sqPsn,
    // As MODIFY_QP took them: slots, or with internal queue memory the depths.
    max_rd_atomic: internalQueueMemory(ctx) ? Math.max(0, qp.maxRdAtomic - 1) : qp.maxRdAtomic,
    max_dest_rd_atomic: internalQueueMemory(ctx) ? Math.max(0, (qp.maxDestRdAtomic - 2) >> 1) : qp.maxDestRdAtomic,
    tos_ecn: fq.tosEcn,
    tos_dscp: fq.tosDscp,
    enable_cc: fq.enableCc,
    sq_size: fq.sqSize,
    rq_size: fq.rqSize,
    sq_sge: qp.sqSge,
    rq_sge: qp.rqSge,
    max_inline_data: ctx.limits().maxInlineData,
    dest_qp_id: qp.destQpn,
    port_id: 0,
    stat_collection_id: state.statCtxId & 0xff,
    src_mac: srcMac,
    vlan_id: fq.vlanId,
    vlan_dei: fq.vlanDei,
    vlan_pcp: fq.vlanPcp,
  }));
}
