/**
 * The bnxt chips this project knows, one profile row each: what differs between Thor (P5) and
 * Thor2 (P7) at the host/device interface, in one place that both the driver (lib/bnxt picks a
 * row from VER_GET's chip_num, as bnxt_en does) and the software NIC (drivers/emu is built from
 * a row) read; and the table of every bnxt family by PCI id (BNXT_FAMILIES), P3 and P4 as
 * recognised, not driven, which the VFIO side reads (drivers/vfio/pci-ids.ts). Pure data and
 * pure functions, no I/O. docs/hardware.md "Chip profiles" gives the sources in prose; each
 * value names its public source beside it. Outside this file and the driver's policy
 * (lib/bnxt/chip.ts) no code compares a family by name (test/tidy.test.ts): it reads a fact.
 *
 * Adding a chip: a row here (with the facts of its family), then the codecs and handlers its
 * family needs (docs/architecture.md "How to add a chip").
 */

import { HWRM_VERSION_MAJOR, HWRM_VERSION_MINOR, HWRM_VERSION_RSVD, HWRM_VERSION_UPDATE } from './hwrm/header.ts';
import { MSN_ENTRY_BYTES } from './roce/msn-table.ts';
import { SQ_PSN_SEARCH_EXT_WORDS } from './roce/wqe.g.ts';

/** The families this project drives: Thor (P5) and Thor2 (P7), each with profile rows below. */
export type ChipFamily = 'P5' | 'P7';
/** Every bnxt family the PCI ids name: the driven ones, and P4 and P3, recognised but not driven. */
export type BnxtFamily = ChipFamily | 'P4' | 'P3';

/** The table an SQ keeps after its WQEs for hardware retransmission (roce_hsi.h). */
export type SqPsnTable = 'psn_search_ext' | 'msn';

/** What the software NIC answers when it plays this chip: the model's choices within the facts. */
export interface ChipModelFacts {
  /** PCI revision id of config space and VER_GET chip_rev / chip_metal. */
  readonly chipRev: number;
  readonly chipMetal: number;
  /**
   * FUNC_QCFG legacy_l2_db_size_kb: the L2 doorbell region below the RoCE doorbells. 64 KiB is
   * the P5 PF offset DB_PF_OFFSET_P5 (bnxt.h) expressed in the P7 field.
   */
  readonly legacyL2DbSizeKb: number;
  /** FUNC_QCFG l2_doorbell_bar_size_kb. */
  readonly l2DoorbellBarSizeKb: number;
  /** The HWRM interface version VER_GET reports (hwrm_intf_maj/min/upd/rsvd_8b): the HSI our layouts follow. */
  readonly hwrmInterface: { readonly maj: number; readonly min: number; readonly upd: number; readonly rsvd: number };
  /**
   * The adapter the model's config space presents (PCI subsystem id, VPD part number): for the
   * BCM57508 the BCM957508-N2100G OCP 3.0 adapter (14e4:5208 in pci.ids); for the BCM57608 the
   * "BCM57608 1x400G PCIe Ethernet NIC" (14e4:9110 under 14e4:1760 in pci.ids, which names no part
   * number: BCM957608 is the model's); the other rows, which no test plays as an adapter, name
   * none (pci.ids has no subsystem under the BCM57502 or BCM58818 at all), so the subsystem id
   * repeats the device id and the part number is BCM9 + the chip's digits (a model choice,
   * docs/hardware.md).
   */
  readonly board: { readonly subsystemId: number; readonly partNumber: string };
  /** RoCE ceilings before context memory is counted (firmware/roce-limits.ts; QUERY_FUNC answers). */
  readonly roce: {
    /** QUERY_FUNC max_qp: QPs besides QP0/QP1 (the kernel adds 1 for QP1). */
    readonly maxQp: number;
    /** QUERY_FUNC max_qp_wr: entries per SQ or RQ. */
    readonly maxQpWqes: number;
    readonly maxCq: number;
    /** QUERY_FUNC max_cqe: CQEs per CQ. */
    readonly maxCqe: number;
    /** Memory keys (MR/PMR) in MRAV context memory. */
    readonly maxMr: number;
    readonly maxGid: number;
    /** SGEs per WQE in static WQE mode. */
    readonly maxSge: number;
    /** QUERY_FUNC max_sge_var_wqe: SGEs per WQE in variable-size WQE mode (0 where it is not run). */
    readonly maxSgeVarWqe: number;
    readonly maxRdAtom: number;
    readonly maxInlineData: number;
  };
}

export interface ChipProfile {
  /** Part name (bnxt.c board_info names; the PCI id table bnxt_pci_tbl). */
  readonly name: string;
  readonly family: ChipFamily;
  /** VER_GET chip_num (bnxt.h CHIP_NUM_*): the driver picks its profile from this, not from the PCI id. */
  readonly chipNum: number;
  /** PCI ids of the physical function (bnxt.c bnxt_pci_tbl; DPDK bnxt_ethdev.c bnxt_pci_id_map). */
  readonly pciVendorId: number;
  readonly pciDeviceId: number;
  /** Context memory commands: V1 (FUNC_BACKING_STORE_QCAPS/CFG) or V2 per type (QCAPS_V2/CFG_V2). */
  readonly backingStore: 'v1' | 'v2';
  /**
   * The WQE mode the kernel's bnxt_re uses by default (main.c bnxt_re_set_drv_mode: the requested
   * mode on P7, always static on P5; bnxt_re asks for variable on P7).
   */
  readonly wqeMode: 'static' | 'variable';
  /**
   * The SQ table this chip's firmware keeps with hardware retransmission (QUERY_FUNC
   * dev_cap_ext_flags_2 REQ_RETRANSMISSION_SUPPORT): PSN search on P5, the MSN table on P7.
   */
  readonly sqPsnTable: SqPsnTable;
  /**
   * Bytes per sq_psn_search_ext entry where the SQ keeps PSN search (qplib_fp.c
   * bnxt_qplib_create_qp: psn_sz is the _ext size on P5 and P7).
   */
  readonly psnSearchEntryBytes: number;
  /** Bytes per sq_msn_search entry where it keeps the MSN table (roce_hsi.h). */
  readonly msnEntryBytes: number;
  /**
   * The CQ depth the kernel allows whatever QUERY_FUNC max_cqe says (bnxt_re's max_cq_wqes):
   * before P7, BNXT_QPLIB_MAX_CQ_WQES 0xFFFFF, since those chips address at most 8K PBL pages
   * of CQEs (qplib_sp.c bnxt_qplib_get_dev_attr; upstream commit ac6df53738b4 "Fix the max CQ
   * WQEs for older adapters"); undefined on P7, which takes max_cqe as the firmware reports it.
   */
  readonly maxCqWqes: number | undefined;
  /**
   * Bytes of the extended ring statistics context bnxt_en sizes where VNIC_QCAPS reports TPA v2
   * and bnxt_re then allocates and sends (bnxt.h BNXT_RING_STATS_SIZE_P5 / _P7, set in bnxt.c
   * bnxt_hwrm_vnic_qcaps; qplib_res.c bnxt_qplib_alloc_stat_mem takes hw_ring_stats_size): 21
   * counters on P5, 22 on P7. Without TPA v2 both use sizeof(ctx_hw_stats), 160 bytes.
   */
  readonly ringStatsBytes: number;
  /**
   * BAR0 offset of the firmware status register the kernel reads when the firmware offers no
   * health registers (bnxt.h BNXT_GRC_REG_STATUS_P5, used for P5 and later).
   */
  readonly grcStatusOffset: number;
  /**
   * Timeout of the first VER_GET, before the firmware has named its own (DPDK bnxt_hwrm.c: P7
   * waits PCI_FUNC_RESET_WAIT_TIMEOUT, 1.5 s, then retries once with the 500 ms default; the
   * kernel's DFLT_HWRM_CMD_TIMEOUT is 500 ms).
   */
  readonly firstVerGetTimeoutMs: number;
  /**
   * Where the NQ and CREQ doorbells are in BAR2, given FUNC_QCFG legacy_l2_db_size_kb: P5 fixes
   * it at DB_PF_OFFSET_P5 0x10000 for a PF; P7 puts it right after the L2 region, not page
   * aligned (bnxt.c bnxt_hwrm_func_qcfg db_offset; bnxt_ulp.c hands it to bnxt_re as the MSI-X
   * entries' db_offset).
   */
  nqDoorbellOffset(legacyL2DbSizeKb: number): number;
  /**
   * Where the RoCE doorbell pages (DPI 0 and up) start in BAR2: 0x10000 on a P5 PF
   * (BNXT_QPLIB_DBR_PF_DB_OFFSET); on P7 the page-aligned legacy_l2_db_size_kb x 1024 (bnxt_re
   * main.c bnxt_re_hwrm_qcfg PAGE_ALIGN, bnxt_re_set_db_offset).
   */
  dpiDoorbellOffset(legacyL2DbSizeKb: number): number;
  /** What the software NIC answers as this chip. */
  readonly model: ChipModelFacts;
}

/** PCI vendor id of Broadcom (pci_ids.h PCI_VENDOR_ID_BROADCOM). */
export const BROADCOM_VENDOR_ID = 0x14e4;
/** qplib_sp.h BNXT_QPLIB_MAX_CQ_WQES: the CQ depth cap of the chips before P7 (ChipProfile.maxCqWqes). */
const MAX_CQ_WQES_BEFORE_P7 = 0xfffff;
/** bnxt.h DB_PF_OFFSET_P5; bnxt_re qplib_res.h BNXT_QPLIB_DBR_PF_DB_OFFSET. */
const DB_PF_OFFSET_P5 = 0x10000;
/** Host page size the drivers align doorbell pages to (PAGE_ALIGN on 4 KiB pages). */
const DOORBELL_PAGE_BYTES = 4096;

const MODEL_COMMON: Omit<ChipModelFacts, 'roce' | 'board'> = {
  chipRev: 1,
  chipMetal: 1,
  legacyL2DbSizeKb: DB_PF_OFFSET_P5 / 1024,
  l2DoorbellBarSizeKb: 64,
  // hsi.h HWRM_VERSION_MAJOR/MINOR/UPDATE/RSVD of the header our layouts follow.
  hwrmInterface: {
    maj: HWRM_VERSION_MAJOR, min: HWRM_VERSION_MINOR, upd: HWRM_VERSION_UPDATE, rsvd: HWRM_VERSION_RSVD,
  },
};

/**
 * The model's RoCE ceilings as a P5. No public source gives a chip's own figures (firmware reports
 * them in QUERY_FUNC); these are the model's, within what the kernel accepts: max_cqe 0xFFFFF is
 * the cap qplib_sp.c bnxt_qplib_get_dev_attr applies before P7, max_gid 256 its
 * BNXT_QPLIB_NUM_GIDS_SUPPORTED, the read depths its BNXT_QPLIB_MAX_OUT_RD_ATOM 126, 6 SGEs and
 * 96 inline bytes the static WQE's room (128 bytes less the 32-byte header).
 */
const ROCE_CEILINGS = {
  maxQp: 1024, maxQpWqes: 65535, maxCq: 4096, maxCqe: MAX_CQ_WQES_BEFORE_P7, maxMr: 65536, maxGid: 256, maxSge: 6,
  maxSgeVarWqe: 0, maxRdAtom: 126, maxInlineData: 96,
} as const;

/**
 * As a P7: the P5's, unverified (no public source gives a Thor2 figure; the kernel lifts the
 * 0xFFFFF CQ cap on P7, so a P7 firmware may report more), but for variable-size WQEs, which
 * only P7 runs: max_sge_var_wqe 13, the most bnxt_re takes (qplib_sp.h BNXT_VAR_MAX_SGE).
 */
const ROCE_CEILINGS_P7 = { ...ROCE_CEILINGS, maxSgeVarWqe: 13 } as const;

type FamilyFacts = Omit<ChipProfile, 'name' | 'chipNum' | 'pciVendorId' | 'pciDeviceId'>;

const P5: FamilyFacts = {
  family: 'P5',
  backingStore: 'v1',
  wqeMode: 'static',
  sqPsnTable: 'psn_search_ext',
  psnSearchEntryBytes: SQ_PSN_SEARCH_EXT_WORDS * 4,
  msnEntryBytes: MSN_ENTRY_BYTES,
  maxCqWqes: MAX_CQ_WQES_BEFORE_P7,
  ringStatsBytes: 168,
  grcStatusOffset: 0x520,
  firstVerGetTimeoutMs: 500,
  nqDoorbellOffset: () => DB_PF_OFFSET_P5,
  dpiDoorbellOffset: () => DB_PF_OFFSET_P5,
  model: { ...MODEL_COMMON, roce: ROCE_CEILINGS, board: { subsystemId: 0, partNumber: '' } },
};

const P7: FamilyFacts = {
  family: 'P7',
  backingStore: 'v2',
  wqeMode: 'variable',
  sqPsnTable: 'msn',
  psnSearchEntryBytes: SQ_PSN_SEARCH_EXT_WORDS * 4,
  msnEntryBytes: MSN_ENTRY_BYTES,
  maxCqWqes: undefined,
  ringStatsBytes: 176,
  grcStatusOffset: 0x520,
  firstVerGetTimeoutMs: 1500,
  nqDoorbellOffset: (kb) => kb * 1024,
  dpiDoorbellOffset: (kb) => Math.ceil((kb * 1024) / DOORBELL_PAGE_BYTES) * DOORBELL_PAGE_BYTES,
  // The L2 doorbell region is 66 KiB, not a whole number of 4 KiB pages, so the NQ doorbells
  // (0x10800) and DPI 0 (0x11000) differ as the kernel allows them to: a driver that rings one
  // at the other's base is caught.
  model: {
    ...MODEL_COMMON, legacyL2DbSizeKb: 66, l2DoorbellBarSizeKb: 68, roce: ROCE_CEILINGS_P7,
    board: { subsystemId: 0, partNumber: '' },
  },
};

/** A physical function's PCI device id and the part it names. */
export interface BnxtPhysicalFunctionId {
  readonly deviceId: number;
  readonly part: string;
}

/** A bnxt family as the PCI ids know it: whether this project drives it, and its physical functions. */
export interface BnxtFamilyRow {
  readonly family: BnxtFamily;
  /** True for the families with profiles (CHIP_PROFILES); P3 and P4 are recognised, not driven. */
  readonly driven: boolean;
  readonly physicalFunctions: readonly BnxtPhysicalFunctionId[];
}

const pfs = (...ids: [number, string][]): readonly BnxtPhysicalFunctionId[] =>
  Object.freeze(ids.map(([deviceId, part]) => Object.freeze({ deviceId, part })));

/**
 * Every bnxt family and its physical functions' PCI ids (Linux bnxt.c bnxt_pci_tbl, DPDK
 * bnxt_ethdev.c bnxt_pci_id_map), driven families first. drivers/vfio/pci-ids.ts is the VFIO
 * side's view of it; the profile rows below take their PCI device id from it, by part name.
 */
export const BNXT_FAMILIES: readonly BnxtFamilyRow[] = Object.freeze(([
  {
    family: 'P5', driven: true, physicalFunctions: pfs(
      [0x1750, 'BCM57508'], [0x1751, 'BCM57504'], [0x1752, 'BCM57502'],
      // NPAR partitions; sources disagree on which of 57508/57504/57502 each names.
      [0x1800, 'BCM5750x NPAR'], [0x1801, 'BCM5750x NPAR'], [0x1802, 'BCM5750x NPAR'], [0x1803, 'BCM5750x NPAR'],
      [0x1804, 'BCM5750x NPAR'], [0x1805, 'BCM5750x NPAR'],
      [0xd812, 'BCM58812'], [0xd814, 'BCM58814'],
    ),
  },
  {
    family: 'P7', driven: true, physicalFunctions: pfs(
      [0x1760, 'BCM57608'], [0x1761, 'BCM57604'], [0x1762, 'BCM57602'], [0x1763, 'BCM57601'], [0xd818, 'BCM58818'],
    ),
  },
  {
    family: 'P4', driven: false, physicalFunctions: pfs(
      [0x16d7, 'BCM57414'], [0x16d8, 'BCM57416'], [0x16d6, 'BCM57412'], [0x16d9, 'BCM57417'],
      [0x16e2, 'BCM57417 SFP'], [0x16e3, 'BCM57416 SFP'],
      [0x16ec, 'BCM57414 NPAR'], [0x16ed, 'BCM57414 NPAR'], [0x16ee, 'BCM57416 NPAR'], [0x16ef, 'BCM57416 NPAR'],
      [0x16de, 'BCM57412 NPAR'], [0x16eb, 'BCM57412 NPAR'], [0x16cc, 'BCM57417 NPAR'], [0x16c0, 'BCM57417 NPAR'],
      [0x16f1, 'BCM57452'], [0x1614, 'BCM57454'], [0x1604, 'BCM5745x NPAR'], [0x1605, 'BCM5745x NPAR'],
      [0xd802, 'BCM58802'], [0xd804, 'BCM58804'], [0x16f0, 'BCM58808'],
    ),
  },
  {
    family: 'P3', driven: false, physicalFunctions: pfs(
      [0x16c8, 'BCM57301'], [0x16c9, 'BCM57302'], [0x16ca, 'BCM57304'], [0x16d0, 'BCM57402'], [0x16d1, 'BCM57404'],
      [0x16d2, 'BCM57406'], [0x16d5, 'BCM57407'],
    ),
  },
] satisfies BnxtFamilyRow[]).map((f) => Object.freeze(f)));

/** Virtual functions of every family (P3/P4/P5/P7, the Hyper-V ones included): bnxt_pci_tbl's VF ids. */
export const BNXT_VF_DEVICE_IDS: ReadonlySet<number> = new Set([
  0x16c1, 0x16d3, 0x16dc, 0x1606, 0x1609, 0x16cb, 0x16e1, 0x16e5, 0x1607, 0x1608, 0x16bd, 0x16c4, 0x16c5,
  0x16c2, 0x16c3, 0x16e6, 0x1806, 0x1807, 0x1808, 0x1809, 0x1819, 0xd800, 0xd82e,
]);

/** The PCI device id of the physical function called `part` in `family`'s row of BNXT_FAMILIES. */
function physicalFunctionOf(family: ChipFamily, part: string): number {
  const id = BNXT_FAMILIES.find((f) => f.family === family)?.physicalFunctions.find((pf) => pf.part === part);
  if (id === undefined) throw new Error(`chips: ${part} is no ${family} physical function of BNXT_FAMILIES`);
  return id.deviceId;
}

function row(
  name: string, chipNum: number, family: FamilyFacts,
  board?: { subsystemId: number; partNumber: string },
): ChipProfile {
  const pciDeviceId = physicalFunctionOf(family.family, name);
  const adapter = board ?? { subsystemId: pciDeviceId, partNumber: `BCM9${name.slice(3)}` };
  const model = Object.freeze({ ...family.model, board: Object.freeze(adapter) });
  return Object.freeze({ ...family, name, chipNum, pciVendorId: BROADCOM_VENDOR_ID, pciDeviceId, model });
}

/**
 * Every chip with a profile: chip numbers from bnxt.h CHIP_NUM_57508/57504/57502 (P5) and
 * CHIP_NUM_57608/58818 (P7, BNXT_CHIP_P7); the PCI device id is the part's in BNXT_FAMILIES.
 */
export const CHIP_PROFILES: readonly ChipProfile[] = Object.freeze([
  row('BCM57508', 0x1750, P5, { subsystemId: 0x5208, partNumber: 'BCM957508-N2100G' }),
  row('BCM57504', 0x1751, P5),
  row('BCM57502', 0x1752, P5),
  row('BCM57608', 0x1760, P7, { subsystemId: 0x9110, partNumber: 'BCM957608' }),
  row('BCM58818', 0xd818, P7),
]);

const BY_CHIP_NUM = new Map(CHIP_PROFILES.map((p) => [p.chipNum, p]));
const BY_NAME = new Map(CHIP_PROFILES.map((p) => [p.name, p]));

/** The profile of the chip VER_GET names by `chipNum`, or undefined (P3/P4 and unknown chips). */
export function chipByNumber(chipNum: number): ChipProfile | undefined {
  return BY_CHIP_NUM.get(chipNum);
}

/** The profile of the chip called `name` (e.g. BCM57508), or undefined. */
export function chipByName(name: string): ChipProfile | undefined {
  return BY_NAME.get(name);
}

/** The names of every chip with a profile, for messages ("one of ..."). */
export function chipNames(): readonly string[] {
  return CHIP_PROFILES.map((p) => p.name);
}
