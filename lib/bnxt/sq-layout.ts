/**
 * Where things sit in a send queue's memory, for the chip's WQE mode and the table the firmware
 * keeps for retransmission. Every WQE this driver posts carries one SGE: a 32-byte header and a
 * 16-byte SGE, wqe_size 3 (Linux bnxt_re qplib_fp.c bnxt_qplib_required_slots: bytes >> 4).
 *
 *   static (P5)    RING_ENTRIES WQEs of 8 slots (128 B); the doorbell and the CQE count WQEs;
 *                  an entry's start slot is 8 x its index
 *   variable (P7)  the ring is 16-byte slots and a WQE takes its wqe_size of them (3 here), so
 *                  RING_ENTRIES x 3 slots, a multiple of 256 as bnxt_qplib_get_depth aligns it;
 *                  CREATE_QP sq_size and the doorbell index count slots (max_slot 1,
 *                  bnxt_qplib_ring_prod_db), a failed WQE's CQE names its first slot
 *                  (__is_err_cqe_for_var_wqe), the MSN and PSN-search start_slot_idx is that slot
 *
 * After the ring: sq_size 16-byte sq_psn_search_ext entries, the entry of a WQE at its start
 * slot / max_slot (bnxt_qplib_pull_psn_buff); or the MSN table of roundup_pow_of_two(sq_size)
 * 8-byte entries (half that in variable mode), entry msn % size (bnxt_qplib_create_qp).
 */
import type { ChipProfile } from '../../firmware-hwrm/chips.ts';
import * as R from '../../firmware-hwrm/roce/index.ts';
import { MSN_ENTRY_BYTES, msnTableEntries } from '../../firmware-hwrm/roce/msn-table.ts';

/** Slots of the one-SGE WQEs this driver posts (header + one SGE). */
export const ONE_SGE_WQE_SLOTS = R.sqWqeSizeForSges(1);

export interface SqLayout {
  readonly variable: boolean;
  /** CREATE_QP sq_size: WQEs (static) or 16-byte slots (variable). */
  readonly sqSize: number;
  /** CREATE_QP sq_sge: the SGEs one WQE may carry. */
  readonly sqSge: number;
  /** Slots between one WQE's start and the next's: 8 static, 3 variable. */
  readonly slotsPerWqe: number;
  /** What one WQE moves the doorbell index by: 1 (a WQE) static, its slots variable. */
  readonly doorbellStep: number;
  /** 32-bit word where the PSN-search entries or the MSN table start. */
  readonly auxWord: number;
  /** Entries of the MSN table, or 0 where the SQ keeps PSN search. */
  readonly msnEntries: number;
  /** What a WQE's index is multiplied by for its PSN-search entry: 1 static, its slots variable. */
  readonly psnIndexStep: number;
  /** Bytes of SQ memory: the ring and the table after it. */
  readonly bytes: number;
}

/** The SQ of `wqes` one-SGE WQEs on `chip`, with the MSN table where the firmware keeps one. */
export function sqLayout(chip: ChipProfile, wqes: number, msnTable: boolean): SqLayout {
  const variable = chip.wqeMode === 'variable';
  const slotsPerWqe = variable ? ONE_SGE_WQE_SLOTS : R.STATIC_WQE_SLOTS;
  const slots = wqes * slotsPerWqe;
  const sqSize = variable ? Math.ceil(slots / R.VAR_SQ_SLOT_ALIGN) * R.VAR_SQ_SLOT_ALIGN : wqes;
  const ringBytes = slots * R.SLOT_BYTES;
  const msnEntries = msnTable ? msnTableEntries(sqSize, variable) : 0;
  const auxBytes = msnTable ? msnEntries * MSN_ENTRY_BYTES : sqSize * chip.psnSearchEntryBytes;
  if (variable && sqSize !== slots) {
    // The ring must end where a WQE ends, or the index arithmetic below would not wrap with it.
    throw new RangeError(`sqLayout: ${wqes} WQEs of ${slotsPerWqe} slots are not a whole number of 256-slot blocks`);
  }
  return {
    variable, sqSize, sqSge: variable ? 1 : R.STATIC_MAX_SGE, slotsPerWqe, doorbellStep: variable ? slotsPerWqe : 1,
    auxWord: ringBytes / 4, msnEntries, psnIndexStep: variable ? slotsPerWqe : 1, bytes: ringBytes + auxBytes,
  };
}
