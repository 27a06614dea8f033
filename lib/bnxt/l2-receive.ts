/**
 * The function's minimal L2 receive path, built so RoCEv2 frames addressed to its MAC reach the
 * RoCE engine, as on every public driver's Thor: Linux bnxt_en has it whenever bnxt_re runs (a
 * completion ring and an RX ring, bnxt_hwrm_vnic_alloc / bnxt_hwrm_vnic_cfg on the default VNIC,
 * bnxt_hwrm_set_vnic_filter for the MAC, bnxt_hwrm_cfa_l2_set_rx_mask), and bnxt_hwrm_vnic_cfg
 * sets the RoCE dual-VNIC mode flag on that VNIC once bnxt_re registered (bnxt_get_roce_vnic_mode;
 * bnxt_ulp.c bnxt_register_dev configures VNIC 0 again when the netdev is already open). iPXE
 * (bnxt_hwrm_vnic_alloc, bnxt_hwrm_vnic_cfg, bnxt_hwrm_cfa_l2_filter_alloc, bnxt_hwrm_set_rx_mask)
 * and DPDK build the same. No public source says RoCE frames arrive without it.
 *
 *   STAT_CTX_ALLOC (L2)  -> RING_ALLOC L2_CMPL (on the CQs' NQ) -> RING_ALLOC RX -> VNIC_ALLOC
 *   -> VNIC_CFG (default rings, MRU, ROCE_DUAL_VNIC_MODE) -> CFA_L2_FILTER_ALLOC (the MAC, RX)
 *   -> CFA_L2_SET_RX_MASK (broadcast)
 *
 * Teardown is the ledger's, in reverse: FILTER_FREE, VNIC_FREE, RING_FREE RX, RING_FREE L2_CMPL,
 * STAT_CTX_FREE. The driver posts no RX buffers and never rings the RX doorbell: L2 frames that are
 * not RoCE find no buffer and are dropped, as on a NIC whose netdev takes no traffic.
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import type { Ledger } from '../../drivers/ledger.ts';
import {
  CFA_L2_FILTER_ALLOC as FILTER, CFA_L2_SET_RX_MASK as RX_MASK, RING_ALLOC_REQ_ENABLES, RING_ALLOC_REQ_INT_MODE,
  RING_ALLOC_REQ_PAGE_TBL_DEPTH, RING_ALLOC_REQ_RING_TYPE as RING, VNIC_CFG_REQ_ENABLES, VNIC_CFG_REQ_FLAGS,
} from '../../firmware-hwrm/hwrm/index.ts';
import { ok, err, type Result } from '../result.ts';
import type { HwrmChannel } from './hwrm-channel.ts';
import { HWRM_COMMANDS as C } from '../../firmware-hwrm/hwrm/commands.ts';

/** Ring sizes (16-byte entries): small, nothing is ever received into them. */
const CMPL_RING_ENTRIES = 64;
const RX_RING_ENTRIES = 64;
const RX_BUFFER_BYTES = 2048;
const STATS_BYTES = 4096;
/** bnxt_hsi.h VNIC_ALLOC_REQ_FLAGS_DEFAULT: the function's default VNIC (bnxt_hwrm_vnic_alloc for VNIC 0). */
const VNIC_ALLOC_DEFAULT = 0x1;
/** Ethernet header and one VLAN tag on top of the MTU: bnxt_en's MRU (bnxt_hwrm_vnic_cfg, ETH_HLEN + VLAN_HLEN). */
const L2_HEADER_BYTES = 14 + 4;
const BROADCAST_MAC_MASK = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);

/** What the L2 receive path holds the firmware's ids of. */
export interface L2Receive {
  readonly statCtxId: number;
  readonly cmplRingId: number;
  readonly rxRingId: number;
  readonly vnicId: number;
  readonly filterId: number;
}

/** What RoCE reserves for the L2 receive path beside its own (FUNC_CFG; roce-device.ts). */
export const L2_RECEIVE_RESOURCES = { cmplRings: 1, rxRings: 1, vnics: 1, l2Ctxs: 1, statCtxs: 1 } as const;

export interface L2ReceiveContext {
  readonly hwrm: HwrmChannel;
  readonly ledger: Ledger;
  /** Takes DMA memory into the ledger (a string: why not). */
  readonly alloc: (bytes: number) => DmaBuffer | string;
  readonly mac: Uint8Array;
  readonly mtu: number;
  /** The NQ the completion ring reports to (the CQs' NQ, polled, never armed). */
  readonly nqId: number;
  readonly statsDmaLength: number;
}

/** Builds the path; each step goes into the ledger as it is taken. A refusal names the step. */
export function bringUpL2Receive(x: L2ReceiveContext): Result<L2Receive> {
  const { hwrm, ledger } = x;
  const ring = (type: number, name: string, entries: number, fields: Record<string, number>): Result<number> => {
    const mem = x.alloc(entries * 16);
    if (typeof mem === 'string') return err(`${name} memory: ${mem}`);
    const r = hwrm.send(C.RING_ALLOC, {
      ring_type: type, page_tbl_addr: mem.iova, page_tbl_depth: RING_ALLOC_REQ_PAGE_TBL_DEPTH.DEPTH_0, page_size: 12,
      length: entries, int_mode: RING_ALLOC_REQ_INT_MODE.POLL, ...fields,
    }, { names: [mem] });
    if (!r.ok) return err(`${C.RING_ALLOC.name} (${name}): ${r.error}`);
    const id = r.value.ring_id;
    ledger.undo(hwrm, `${C.RING_FREE.name} (${name})`, () => hwrm.send(C.RING_FREE, { ring_type: type, ring_id: id }));
    return ok(id);
  };

  // HWRM_STAT_CTX_ALLOC: the L2 rings' own counters (bnxt_en keeps its rings' apart from bnxt_re's).
  const stats = x.alloc(STATS_BYTES);
  if (typeof stats === 'string') return err(`L2 statistics memory: ${stats}`);
  const stat = hwrm.send(C.STAT_CTX_ALLOC, {
    stats_dma_addr: stats.iova, update_period_ms: 1000, stats_dma_length: x.statsDmaLength,
  }, { names: [stats] });
  if (!stat.ok) return err(`${C.STAT_CTX_ALLOC.name} (L2): ${stat.error}`);
  const statCtxId = stat.value.stat_ctx_id;
  ledger.undo(hwrm, `${C.STAT_CTX_FREE.name} (L2)`, () => hwrm.send(C.STAT_CTX_FREE, { stat_ctx_id: statCtxId }));

  // HWRM_RING_ALLOC L2_CMPL: on P5 a completion ring names the NQ it notifies (bnxt_hwrm_ring_alloc).
  const cmpl = ring(RING.L2_CMPL, 'L2 completion ring', CMPL_RING_ENTRIES, {
    enables: RING_ALLOC_REQ_ENABLES.NQ_RING_ID_VALID, nq_ring_id: x.nqId, logical_id: 2, cq_handle: 0,
  });
  if (!cmpl.ok) return cmpl;
  // HWRM_RING_ALLOC RX: its buffer size, statistics context and completion ring (P5: bnxt_cp_ring_for_rx);
  // only the buffer size is flagged valid, as bnxt_en 6.12 was seen sending it (docs/hardware.md).
  const rx = ring(RING.RX, 'RX ring', RX_RING_ENTRIES, {
    enables: RING_ALLOC_REQ_ENABLES.RX_BUF_SIZE_VALID,
    rx_buf_size: RX_BUFFER_BYTES, stat_ctx_id: statCtxId, cmpl_ring_id: cmpl.value, logical_id: 0,
  });
  if (!rx.ok) return rx;

  // HWRM_VNIC_ALLOC: the function's default VNIC.
  const vnic = hwrm.send(C.VNIC_ALLOC, { flags: VNIC_ALLOC_DEFAULT });
  if (!vnic.ok) return err(`${C.VNIC_ALLOC.name}: ${vnic.error}`);
  const vnicId = vnic.value.vnic_id;
  ledger.undo(hwrm, C.VNIC_FREE.name, () => hwrm.send(C.VNIC_FREE, { vnic_id: vnicId }));
  // HWRM_VNIC_CFG: default rings and MRU (P5: bnxt_hwrm_vnic_cfg enables the two rings and fills
  // mru beside them), and RoCE beside L2 on it; no VLAN stripping (nothing here reads L2 frames).
  const VE = VNIC_CFG_REQ_ENABLES;
  const cfg = hwrm.send(C.VNIC_CFG, {
    vnic_id: vnicId, flags: VNIC_CFG_REQ_FLAGS.ROCE_DUAL_VNIC_MODE,
    enables: VE.DEFAULT_RX_RING_ID | VE.DEFAULT_CMPL_RING_ID,
    default_rx_ring_id: rx.value, default_cmpl_ring_id: cmpl.value, mru: x.mtu + L2_HEADER_BYTES,
  });
  if (!cfg.ok) return err(`${C.VNIC_CFG.name}: ${cfg.error}`);

  // HWRM_CFA_L2_FILTER_ALLOC: frames to the MAC, received, to the VNIC, matched on the outermost
  // header (bnxt_hwrm_l2_filter_alloc: PATH_RX, and OUTERMOST on every chip but Nitro A0).
  const filter = hwrm.send(C.CFA_L2_FILTER_ALLOC, {
    flags: FILTER.FLAGS_PATH_RX | FILTER.FLAGS_OUTERMOST,
    enables: FILTER.ENABLES_L2_ADDR | FILTER.ENABLES_L2_ADDR_MASK | FILTER.ENABLES_DST_ID,
    l2_addr: x.mac, l2_addr_mask: BROADCAST_MAC_MASK, dst_id: vnicId,
  });
  if (!filter.ok) return err(`${C.CFA_L2_FILTER_ALLOC.name}: ${filter.error}`);
  const filterId = filter.value.l2_filter_id;
  ledger.undo(hwrm, C.CFA_L2_FILTER_FREE.name, () => hwrm.send(C.CFA_L2_FILTER_FREE, { l2_filter_id: filterId }));
  // HWRM_CFA_L2_SET_RX_MASK: broadcast as well, bnxt_en's default mask (no multicast list).
  const mask = hwrm.send(C.CFA_L2_SET_RX_MASK, { vnic_id: vnicId, mask: RX_MASK.BCAST });
  if (!mask.ok) return err(`${C.CFA_L2_SET_RX_MASK.name}: ${mask.error}`);

  return ok({ statCtxId, cmplRingId: cmpl.value, rxRingId: rx.value, vnicId, filterId });
}
