/**
 * RoCE bring-up on a function HWRM brought up, in the order of Linux's bnxt_re (main.c:
 * bnxt_re_dev_init; qplib_rcfw.c: bnxt_qplib_enable_rcfw_channel, bnxt_qplib_init_rcfw;
 * qplib_sp.c: bnxt_qplib_get_dev_attr): the CREQ as an HWRM NQ ring, the CMDQ handed over
 * through the BAR0 mailbox, a RoCE statistics context, QUERY_FUNC, INITIALIZE_FW, an NQ for
 * the CQs, the L2 receive path RoCE frames arrive through (l2-receive.ts), and the NIC's GID.
 * Teardown unwinds the same ledger: the kernel's order in reverse.
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import { Ledger } from '../../drivers/ledger.ts';
import {
  RING_ALLOC_REQ_RING_TYPE, RING_ALLOC_REQ_INT_MODE, RING_ALLOC_REQ_PAGE_TBL_DEPTH, STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS,
  FUNC_CFG_REQ_ENABLES, HWRM_FID_SELF, CTX_HW_STATS_BYTES,
} from '../../firmware-hwrm/hwrm/index.ts';
import {
  CreqQueryFuncRespSb, DevCapFlags, InitializeFwFlags, gidWords, macWords, cmdqUnits, isHostMsnTable,
} from '../../firmware-hwrm/roce/index.ts';
import { ok, err, type Result } from '../result.ts';
import type { BnxtFunction } from './bringup.ts';
import { RcfwChannel, CMDQ_ENTRIES, CREQ_ENTRIES } from './rcfw-channel.ts';
import { HWRM_COMMANDS as C } from '../../firmware-hwrm/hwrm/commands.ts';
import * as Q from './roce-commands.ts';
import { bringUpL2Receive, L2_RECEIVE_RESOURCES } from './l2-receive.ts';
import { deviceLimits, type DeviceLimits, type FuncCaps } from './device-limits.ts';

/** The NQ the CQs report to. This driver polls CQs and never arms them, but CREATE_CQ names an NQ. */
const CQ_NQ_ENTRIES = 256;
const STATS_BYTES = 4096;
/**
 * RoCE statistics block length: the ring statistics size bnxt_en hands bnxt_re
 * (hw_ring_stats_size; qplib_res.c bnxt_qplib_alloc_stat_mem, main.c
 * bnxt_re_net_stats_ctx_alloc), as bnxt.c sets it: sizeof(ctx_hw_stats), 160 bytes, unless
 * HWRM_VNIC_QCAPS reports TPA v2 (max_aggs_supported), then the chip's extended block
 * (BNXT_RING_STATS_SIZE_P5 168, _P7 176: bnxt_hwrm_vnic_qcaps). bnxt_en goes on with 160 when
 * VNIC_QCAPS fails, and so does this driver (a silent firmware fails the next command anyway).
 */
function statsDmaLength(func: BnxtFunction): number {
  const caps = func.hwrm.send(C.VNIC_QCAPS, {});
  if (!caps.ok || caps.value.max_aggs_supported === 0) return CTX_HW_STATS_BYTES;
  return func.info.chip.ringStatsBytes;
}
/** What RoCE takes from HWRM: two NQ-type rings (the CREQ, the CQs' NQ) and a statistics context. */
const ROCE_NQ_RINGS = 2;
const ROCE_STAT_CTXS = 1;

/**
 * HWRM_FUNC_CFG: reserve what RoCE and its L2 receive path take before taking it, as bnxt_en
 * (bnxt.c __bnxt_hwrm_reserve_pf_rings, with bnxt_re's share of MSI-X and statistics contexts) and
 * iPXE (bnxt.c bnxt_hwrm_func_cfg_req) do on Thor: on P5 each NQ-type ring (the CREQ, the NQ)
 * counts against the function's MSI-X vectors, whether or not it interrupts. Read back from
 * FUNC_QCFG's alloc_* fields (bnxt_hwrm_get_rings): the firmware may grant less. A string: why not.
 */
function reserveResources(func: BnxtFunction): string | undefined {
  const { hwrm } = func;
  const L2 = L2_RECEIVE_RESOURCES;
  const EN = FUNC_CFG_REQ_ENABLES;
  const want = {
    msix: ROCE_NQ_RINGS, stat: ROCE_STAT_CTXS + L2.statCtxs, cmpl: L2.cmplRings, rx: L2.rxRings, vnics: L2.vnics,
    l2: L2.l2Ctxs,
  };
  const cfg = hwrm.send(C.FUNC_CFG, {
    fid: HWRM_FID_SELF,
    enables: EN.NUM_MSIX | EN.NUM_STAT_CTXS | EN.NUM_CMPL_RINGS | EN.NUM_RX_RINGS | EN.NUM_VNICS | EN.NUM_L2_CTXS,
    num_msix: want.msix, num_stat_ctxs: want.stat, num_cmpl_rings: want.cmpl, num_rx_rings: want.rx,
    num_vnics: want.vnics, num_l2_ctxs: want.l2,
  });
  if (!cfg.ok) return cfg.error;
  const granted = hwrm.send(C.FUNC_QCFG, { fid: HWRM_FID_SELF });
  if (!granted.ok) return `${C.FUNC_QCFG.name}: ${granted.error}`;
  const g = granted.value;
  const got = {
    msix: g.alloc_msix, stat: g.alloc_stat_ctx, cmpl: g.alloc_cmpl_rings, rx: g.alloc_rx_rings, vnics: g.alloc_vnics,
    l2: g.alloc_l2_ctx,
  };
  const short = (Object.keys(want) as (keyof typeof want)[]).filter((k) => got[k] < want[k]);
  if (short.length === 0) return undefined;
  return `the firmware reserved less than asked: ${short.map((k) => `${k} ${got[k]} of ${want[k]}`).join(', ')}`;
}

export type { FuncCaps };

export interface RoceDevice {
  readonly rcfw: RcfwChannel;
  readonly caps: FuncCaps;
  /** The queue limits of `caps` as bnxt_re reads them (device-limits.ts): Qp.make checks its rings by them. */
  readonly limits: DeviceLimits;
  readonly gid: Uint8Array;
  readonly gidIndex: number;
  readonly cqNqId: number;
  /** Where the driver's doorbells go: BAR2 offset of DPI 0 (the privileged page). */
  readonly doorbellOffset: number;
  readonly pdId: number;
  /** DMA buffers of the channel and the rings (the CREQ, CMDQ, NQ, statistics, side buffer). */
  readonly buffers: readonly DmaBuffer[];
  /** What RoCE bring-up took, in order: tearDownRoce unwinds it. */
  readonly ledger: Ledger;
  readonly creqRingId: number;
  readonly statCtxId: number;
  /**
   * The SQ keeps an MSN table (8-byte sq_msn_search entries) instead of PSN search: QUERY_FUNC
   * reports hardware requester retransmission (Linux qplib_res.h BNXT_RE_HW_RETX, used by
   * qplib_fp.c bnxt_qplib_create_qp and bnxt_qplib_fill_psn_search).
   */
  readonly msnTable: boolean;
}

/** The RoCEv2 GID of an IPv4 address: ::ffff:a.b.c.d. */
export function ipv4MappedGid(ipv4: Uint8Array): Uint8Array {
  const gid = new Uint8Array(16);
  gid[10] = 0xff;
  gid[11] = 0xff;
  gid.set(ipv4, 12);
  return gid;
}

export function bringUpRoce(func: BnxtFunction, ipv4: Uint8Array): Result<RoceDevice> {
  const { hwrm, pool, device } = func;
  const ledger = new Ledger(pool, [hwrm]);
  const fail = (step: string, why: string): Result<RoceDevice> => {
    ledger.unwind();
    return err(`RoCE bring-up failed at ${step}: ${why}`);
  };
  const alloc = (bytes: number): DmaBuffer | string => {
    const b = pool.alloc(bytes);
    return b.ok ? ledger.take(b.value) : b.error;
  };

  // HWRM_FUNC_CFG: reserve what RoCE takes before taking it, as bnxt_en (bnxt.c
  // __bnxt_hwrm_reserve_pf_rings, with bnxt_re's share of MSI-X and statistics contexts) and
  // iPXE (bnxt.c bnxt_hwrm_func_cfg_req) do on Thor: on P5 each NQ-type ring (the CREQ, the NQ)
  // counts against the function's MSI-X vectors, whether or not it interrupts. Read back from
  // FUNC_QCFG's alloc_* fields (bnxt_hwrm_get_rings): the firmware may grant less.
  // The L2 receive path's rings, VNIC, filter and statistics context are reserved in the same
  // request (l2-receive.ts; bnxt_en reserves its netdev's share with bnxt_re's so).
  if (func.reservesResources) {
    const reserved = reserveResources(func);
    if (typeof reserved === 'string') return fail(`${C.FUNC_CFG.name} (reservation)`, reserved);
  }

  // CREQ memory: one contiguous block, given to the firmware at page-table depth 0.
  const creq = alloc(CREQ_ENTRIES * 16);
  if (typeof creq === 'string') return fail('CREQ memory', creq);
  // HWRM_RING_ALLOC (type NQ): the CREQ. POLL interrupt mode, as iPXE allocates the NQ it polls
  // on Thor (bnxt.c bnxt_hwrm_ring_alloc: BNXT_CQ_INTR_MODE is POLL on a PF): this driver
  // polls every ring and never enables MSI-X, so no NQ may ask for an interrupt.
  const creqRing = hwrm.send(C.RING_ALLOC, {
    ring_type: RING_ALLOC_REQ_RING_TYPE.NQ, page_tbl_addr: creq.iova,
    page_tbl_depth: RING_ALLOC_REQ_PAGE_TBL_DEPTH.DEPTH_0, page_size: 12, length: CREQ_ENTRIES, logical_id: 0,
    int_mode: RING_ALLOC_REQ_INT_MODE.POLL,
  }, { names: [creq] });
  if (!creqRing.ok) return fail(`${C.RING_ALLOC.name} (CREQ)`, creqRing.error);
  const creqRingId = creqRing.value.ring_id;
  ledger.undo(hwrm, `${C.RING_FREE.name} (CREQ)`, () => hwrm.send(C.RING_FREE, {
    ring_type: RING_ALLOC_REQ_RING_TYPE.NQ, ring_id: creqRingId,
  }));

  // HWRM_STAT_CTX_ALLOC with the ROCE flag: INITIALIZE_FW names it. Its length, and the L2
  // receive path's, follow VNIC_QCAPS as bnxt_en's hw_ring_stats_size does.
  const statsBytes = statsDmaLength(func);
  const stats = alloc(STATS_BYTES);
  if (typeof stats === 'string') return fail('statistics memory', stats);
  const stat = hwrm.send(C.STAT_CTX_ALLOC, {
    stats_dma_addr: stats.iova, update_period_ms: 1000, stat_ctx_flags: STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS.ROCE,
    stats_dma_length: statsBytes,
  }, { names: [stats] });
  if (!stat.ok) return fail(C.STAT_CTX_ALLOC.name, stat.error);
  const statCtxId = stat.value.stat_ctx_id;
  ledger.undo(hwrm, C.STAT_CTX_FREE.name, () => hwrm.send(C.STAT_CTX_FREE, { stat_ctx_id: statCtxId }));

  // The CMDQ: a small ring (commands go one at a time), level 0, through the BAR0 mailbox.
  const cmdq = alloc(CMDQ_ENTRIES * 16);
  if (typeof cmdq === 'string') return fail('CMDQ memory', cmdq);
  const side = alloc(4096);
  if (typeof side === 'string') return fail('side buffer memory', side);
  // Two doorbell bases (they differ on P7): the CREQ's at the NQ doorbell offset, as bnxt_re
  // rings it (bnxt_fill_msix_vecs hands it db_offset; main.c bnxt_re_get_nqdb_offset), the
  // CQ and QP doorbells on DPI 0's page (bnxt_re_set_db_offset).
  const doorbellOffset = func.info.doorbellBase;
  const ch = new RcfwChannel(device, pool, cmdq, creq, creqRingId, func.doorbells, func.info.nqDoorbellBase);
  ch.trace = hwrm.trace;
  ledger.watch(ch);
  // RoCE commands are bounded like HWRM ones: VER_GET's max_req_timeout (and a test's cap).
  ch.timeoutMs = Math.min(ch.timeoutMs, hwrm.caps.maxTimeoutMs, hwrm.timeoutCapMs);
  ch.start();

  // QUERY_FUNC: the function's RoCE limits, in a 160-byte side buffer. The first command: bit 31 on the producer.
  const qf = ch.send(Q.QUERY_FUNC, { resp_addr: side.iova, resp_size: cmdqUnits(CreqQueryFuncRespSb.size) }, [side]);
  if (!qf.ok) return fail('QUERY_FUNC', qf.error);
  const caps = CreqQueryFuncRespSb.decode(side.bytes);

  // INITIALIZE_FW: context fields stay 0 on P5 (context memory came from the backing store).
  // HW_REQUESTER_RETX_SUPPORTED where QUERY_FUNC reports hardware retransmission (requester or
  // responder), as Linux bnxt_re does (qplib_rcfw.c bnxt_qplib_init_rcfw, qplib_res.h _is_hw_retx_supported).
  const hwRetxFlags = DevCapFlags.HW_REQUESTER_RETX_ENABLED | DevCapFlags.HW_RESPONDER_RETX_ENABLED;
  const flags = (caps.dev_cap_flags & hwRetxFlags) !== 0 ? InitializeFwFlags.HW_REQUESTER_RETX_SUPPORTED : 0;
  const init = ch.send(Q.INITIALIZE_FW, { flags, log2_dbr_pg_size: 0, stat_ctx_id: statCtxId });
  if (!init.ok) return fail('INITIALIZE_FW', init.error);
  ledger.undo(ch, 'DEINITIALIZE_FW', () => ch.send(Q.DEINITIALIZE_FW, {}));

  // HWRM_RING_ALLOC (type NQ): the notification queue the CQs name.
  const nq = alloc(CQ_NQ_ENTRIES * 16);
  if (typeof nq === 'string') return fail('NQ memory', nq);
  const nqRing = hwrm.send(C.RING_ALLOC, {
    ring_type: RING_ALLOC_REQ_RING_TYPE.NQ, page_tbl_addr: nq.iova,
    page_tbl_depth: RING_ALLOC_REQ_PAGE_TBL_DEPTH.DEPTH_0, page_size: 12, length: CQ_NQ_ENTRIES, logical_id: 1,
    int_mode: RING_ALLOC_REQ_INT_MODE.POLL,
  }, { names: [nq] });
  if (!nqRing.ok) return fail(`${C.RING_ALLOC.name} (NQ)`, nqRing.error);
  const cqNqId = nqRing.value.ring_id;
  ledger.undo(hwrm, `${C.RING_FREE.name} (NQ)`, () => hwrm.send(C.RING_FREE, {
    ring_type: RING_ALLOC_REQ_RING_TYPE.NQ, ring_id: cqNqId,
  }));

  // The L2 receive path RoCE frames arrive through (l2-receive.ts), its completion ring on the NQ.
  const l2 = bringUpL2Receive({
    hwrm, ledger, alloc, mac: func.info.mac, mtu: func.info.mtu, nqId: cqNqId,
    statsDmaLength: statsBytes,
  });
  if (!l2.ok) return fail('the L2 receive path', l2.error);

  // ADD_GID: the NIC's RoCEv2 GID (IPv4-mapped) with its MAC.
  const gid = ipv4MappedGid(ipv4);
  const added = ch.send(Q.ADD_GID, { gid: gidWords(gid), src_mac: macWords(func.info.mac), vlan_id: 0xfff });
  if (!added.ok) return fail('ADD_GID', added.error);
  const gidIndex = added.value.xid;
  // DELETE_GID and MODIFY_QP name it in 16 bits: another answer is malformed (and cannot be undone).
  if (gidIndex > 0xffff)
    return fail('ADD_GID', `malformed firmware answer (GID index ${gidIndex} does not fit 16 bits)`);

  ledger.undo(ch, 'DELETE_GID', () => ch.send(Q.DELETE_GID, { gid_index: gidIndex }));

  return ok({
    rcfw: ch, caps, gid, gidIndex, cqNqId, doorbellOffset, pdId: 1, buffers: ledger.buffers(), creqRingId, statCtxId,
    limits: deviceLimits(func.info.chip, caps),
    // The SQ keeps the MSN table where dev_cap_ext_flags_2 names it (qplib_res.h
    // _is_host_msn_table -> qp->is_host_msn_tbl in bnxt_qplib_create_qp), else PSN search.
    ledger, msnTable: isHostMsnTable(caps.dev_cap_ext_flags_2),
  });
}

/**
 * Teardown in the kernel's order, the reverse of bring-up: DELETE_GID, RING_FREE (NQ),
 * DEINITIALIZE_FW, STAT_CTX_FREE, RING_FREE (CREQ), then the memory (held if a channel went silent).
 */
export function tearDownRoce(r: RoceDevice): void {
  r.ledger.unwind();
}
