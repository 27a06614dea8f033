/**
 * What differs between bnxt chip families, in one place so Thor2 (P7) can follow Thor (P5)
 * without touching the rest of the driver. The family comes from VER_GET's chip_num, as the
 * kernel decides it (BNXT_CHIP_P5 / BNXT_CHIP_P7), not from the PCI device id.
 */

export type ChipFamily = 'P5' | 'P7';

export interface ChipProfile {
  readonly family: ChipFamily;
  readonly name: string;
  /** Backing-store (context memory) commands: V1 (QCAPS/CFG) on P5, V2 per type on P7. */
  readonly backingStore: 'v1' | 'v2';
  /**
   * Where the L2/RoCE doorbell area starts in BAR2 (bnxt.h DB_PF_OFFSET_P5; bnxt_re main.c bnxt_re_get_nqdb_offset):
   * fixed on P5 (0x10000 for a PF), FUNC_QCFG legacy_l2_db_size_kb x 1024 on P7.
   */
  doorbellBase(legacyL2DbSizeKb: number): number;
  /** Bytes per SQ entry of the PSN search area (psn_search_ext on P5; the MSN table on P7). */
  readonly psnSearchEntryBytes: number;
}

const P5: Omit<ChipProfile, 'name'> = {
  family: 'P5',
  backingStore: 'v1',
  doorbellBase: () => 0x10000, // DB_PF_OFFSET_P5
  psnSearchEntryBytes: 16,
};

const P7: Omit<ChipProfile, 'name'> = {
  family: 'P7',
  backingStore: 'v2',
  doorbellBase: (kb) => Math.ceil((kb * 1024) / 4096) * 4096,
  psnSearchEntryBytes: 8,
};

// Chip numbers by family: bnxt.h CHIP_NUM_* and BNXT_CHIP_P5 / BNXT_CHIP_P7.
const CHIPS = new Map<number, ChipProfile>([
  [0x1750, { ...P5, name: 'BCM57508' }],
  [0x1751, { ...P5, name: 'BCM57504' }],
  [0x1752, { ...P5, name: 'BCM57502' }],
  [0x1760, { ...P7, name: 'BCM57608' }],
  [0xd818, { ...P7, name: 'BCM58818' }],
]);

/** The profile of a chip the driver supports, or undefined (P3/P4 chips are not supported). */
export function chipProfile(chipNum: number): ChipProfile | undefined {
  return CHIPS.get(chipNum);
}

/** Only P5 is implemented end to end; P7 needs backing store V2 and the MSN table. */
export function chipSupported(p: ChipProfile): boolean {
  return p.family === 'P5';
}
