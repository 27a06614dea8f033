/**
 * What the software NIC's RoCE firmware can hold, and how it says so: the limits every
 * create command is checked against, and the QUERY_FUNC / QUERY_VERSION answers built from
 * them (roce_hsi.h creq_query_func_resp_sb; qplib_sp.c bnxt_qplib_get_dev_attr). Context memory bounds the tables: QPs,
 * CQs and keys live in the backing store HWRM configured, so its entry counts cap them.
 */
import type { BackingStoreState } from './hwrm-backing-store.ts';
import type { ChipProfile } from '../../../../firmware-hwrm/chips.ts';
import { DevCapExtFlags, type CreqQueryFuncRespSb } from '../../../../firmware-hwrm/roce/index.ts';
import type { Values } from '../../../../firmware-hwrm/layout.ts';

/** The chip's RoCE ceilings (firmware-hwrm/chips.ts), before context memory is counted. */
export type RoceCeilings = ChipProfile['model']['roce'];

/**
 * What QUERY_FUNC reports and the create commands are held to: the chip's ceilings (maxQp, maxCq
 * and maxMr capped by context memory), the read depth under QUERY_FUNC's two names, and the
 * doorbell pages and MR size of this model.
 */
export interface RoceLimits extends Omit<RoceCeilings, 'maxRdAtom'> {
  /** Responder (IRD) and initiator (ORD) depths; the kernel caps both at 126. */
  readonly maxQpRdAtom: number;
  readonly maxQpInitRdAtom: number;
  /** Doorbell pages of BAR2 above the L2 region (DPI numbers are below this). */
  readonly maxDpi: number;
  /** Where DPI 0 starts in BAR2: the chip's RoCE doorbell offset for the L2 region FUNC_QCFG reports. */
  readonly dpiBaseBytes: number;
  readonly maxMrSizeBytes: number;
}

/** QP0 and QP1 are reserved: RoCE QP numbers start at 2. */
export const RESERVED_QPS = 2;
/** The software NIC's BAR2 (nic-model.ts BAR2_BYTES) and its doorbell pages. */
const BAR2_BYTES = 16 * 1024 * 1024;
const DB_PAGE_BYTES = 4096;
/** 2^39 bytes (facts 7.4). */
const MAX_MR_SIZE_BYTES = 2 ** 39;

/** Used when HWRM has no backing store yet: the largest tables QCAPS allows (hwrm-backing-store.ts). */
const UNCONFIGURED: BackingStoreState = { qpEntries: 4096, cqEntries: 8192, mravEntries: 16384 };

/**
 * What the function's RoCE firmware can hold as chip `chip` (its ceilings, before context memory
 * is counted, and its doorbell offset: firmware-hwrm/chips.ts) with context memory `store`;
 * `override`, a test's: ceilings in place of the chip's (the firmware reports and enforces them).
 */
export function roceLimits(
  chip: ChipProfile, store: BackingStoreState | undefined, override: Partial<RoceCeilings> = {},
): RoceLimits {
  const bs = store ?? UNCONFIGURED;
  const CEILING = { ...chip.model.roce, ...override };
  const dpiBaseBytes = chip.dpiDoorbellOffset(chip.model.legacyL2DbSizeKb);
  return {
    maxQp: Math.max(0, Math.min(CEILING.maxQp, bs.qpEntries - RESERVED_QPS)),
    maxQpWqes: CEILING.maxQpWqes,
    maxCq: Math.max(0, Math.min(CEILING.maxCq, bs.cqEntries)),
    maxCqe: CEILING.maxCqe,
    maxMr: Math.max(0, Math.min(CEILING.maxMr, bs.mravEntries)),
    maxGid: CEILING.maxGid,
    maxSge: CEILING.maxSge,
    maxSgeVarWqe: CEILING.maxSgeVarWqe,
    maxQpRdAtom: CEILING.maxRdAtom,
    maxQpInitRdAtom: CEILING.maxRdAtom,
    maxDpi: (BAR2_BYTES - dpiBaseBytes) / DB_PAGE_BYTES,
    dpiBaseBytes,
    maxInlineData: CEILING.maxInlineData,
    maxMrSizeBytes: MAX_MR_SIZE_BYTES,
  };
}

/** The body of the QUERY_FUNC side buffer (creq_query_func_resp_sb past its 8-byte header). */
export function queryFuncValues(
  l: RoceLimits, devCapFlags: number, devCapExtFlags2: number,
): Partial<Values<typeof CreqQueryFuncRespSb.fields>> {
  return {
    max_mr_size: BigInt(l.maxMrSizeBytes),
    max_qp: l.maxQp,
    max_qp_wr: l.maxQpWqes,
    // The personality's: the unified allocate-and-register flow, hardware retransmission.
    dev_cap_flags: devCapFlags,
    max_cq: l.maxCq,
    max_cqe: l.maxCqe,
    max_pd: 65536,
    max_sge: l.maxSge,
    // No SRQ, UD, AH, MW or FMR in this model: their maxima are 0.
    max_srq_sge: 0,
    max_qp_rd_atom: l.maxQpRdAtom,
    max_qp_init_rd_atom: l.maxQpInitRdAtom,
    max_mr: l.maxMr,
    max_mw: 0,
    max_raw_eth_qp: 0,
    max_ah: 0,
    max_fmr: 0,
    max_srq_wr: 0,
    max_pkeys: 1,
    max_inline_data: l.maxInlineData,
    max_map_per_fmr: 0,
    // (value + 1) x 4 KiB = the L2 doorbell region below the RoCE DPIs (64 KiB on P5).
    l2_db_space_size: l.dpiBaseBytes / DB_PAGE_BYTES - 1,
    max_srq: 0,
    max_gid: l.maxGid,
    max_dpi: l.maxDpi,
    max_sge_var_wqe: l.maxSgeVarWqe,
    // The engine runs no atomics.
    dev_cap_ext_flags: DevCapExtFlags.ATOMIC_OPS_NOT_SUPPORTED,
    max_inline_data_var_wqe: 0,
    start_qid: 0,
    // The personality's: which table the SQ keeps after its WQEs (PSN search or MSN).
    dev_cap_ext_flags_2: devCapExtFlags2,
  };
}

/** The RoCE interface version answered by QUERY_VERSION: the HSI these layouts follow (1.10.3.133). */
export const ROCE_INTF_VERSION = { maj: 1, minor: 10, bld: 3, rsvd: 133 } as const;
