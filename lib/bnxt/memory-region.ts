/**
 * A memory region at the hardware interface: DMA memory, the page table the NIC walks to find
 * it, and the MR the firmware made for it. Which flow depends on what QUERY_FUNC reports, as in
 * Linux bnxt_re (qplib_sp.c bnxt_qplib_reg_mr, qplib_res.h _is_alloc_mr_unified; ib_verbs.c
 * bnxt_re_reg_user_mr): with MR_REGISTER_ALLOC, one REGISTER_MR with ALLOC_MR and the PD id in
 * the key field, the firmware picking the key; without it, ALLOCATE_MRW (type MR) for a key,
 * then REGISTER_MR with that key. Either way the key is freed with DEALLOCATE_KEY, as
 * bnxt_re_dereg_mr does (bnxt_qplib_free_mrw): DEREGISTER_MR only unbinds the pages from a key
 * that stays allocated. Argument checks live in lib/region.ts; this module trusts them.
 *
 *   alloc -> page table (level 0/1/2, the memory's own page size)
 *         -> [ALLOCATE_MRW ->] REGISTER_MR -> key
 *   DEALLOCATE_KEY -> free the page table and the memory (only after the firmware confirmed)
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import { Ledger } from '../../drivers/ledger.ts';
import { DevCapFlags } from '../../firmware-hwrm/roce/commands-fw.ts';
import { MrAccess, MrwType, RegisterMrFlags } from '../../firmware-hwrm/roce/commands-mr.ts';
import { PTU_PTE_VALID, log2PageSize } from '../../firmware-hwrm/roce/pbl.ts';
import { ok, err, type Result } from '../result.ts';
import type { BnxtFunction } from './bringup.ts';
import type { RoceDevice } from './roce-device.ts';
import { buildPageTable } from './page-table.ts';
import * as Q from './roce-commands.ts';

export class BnxtRegion {
  /** Registered with the NIC (true until a deregister that the firmware confirmed or went silent on). */
  registered = true;

  private constructor(
    readonly buffer: DmaBuffer,
    readonly length: number,
    /** lkey = rkey, as the firmware gave it. */
    readonly key: number,
    private readonly ledger: Ledger,
  ) {}

  /**
   * Allocates `length` bytes and registers them. No memory or a refusal is an Error that gave
   * back everything taken (or held it, if the firmware stopped answering after being told of it).
   */
  static register(func: BnxtFunction, roce: RoceDevice, length: number): Result<BnxtRegion> {
    const { pool } = func;
    const rcfw = roce.rcfw;
    // A silent firmware would not get REGISTER_MR: take no memory it could be left holding.
    if (rcfw.stalled) return err(rcfw.stalled);
    const ledger = new Ledger(pool, [rcfw]);
    const mem = pool.alloc(length);
    if (!mem.ok) return err(`no memory for ${length} bytes: ${mem.error}`);
    const buffer = ledger.take(mem.value);
    return ledger.guard(() => {
      // The largest page size the memory allows (its backing pages), one table level per 512 pages.
      const table = buildPageTable(pool, buffer, buffer.pageBytes, () => PTU_PTE_VALID);
      if (!table.ok) {
        ledger.unwind();
        return err(table.error);
      }
      ledger.takeAll(table.value.tables);
      const unified = (roce.caps.dev_cap_flags & DevCapFlags.MR_REGISTER_ALLOC) !== 0;
      let key = roce.pdId; // unified: the key field carries the PD, the firmware picks the key
      if (!unified) {
        // ALLOCATE_MRW (type MR, the PD): the key, freed by DEALLOCATE_KEY whatever follows.
        const a = rcfw.send(Q.ALLOCATE_MRW, { mrw_flags: MrwType.MR, pd_id: roce.pdId });
        if (!a.ok) {
          ledger.unwind();
          return err(a.error);
        }
        key = a.value.xid;
        undoKey(ledger, roce, key);
      }
      const r = rcfw.send(Q.REGISTER_MR, {
        flags: unified ? RegisterMrFlags.ALLOC_MR : 0,
        lvl: table.value.level,
        log2_pg_size: log2PageSize(buffer.pageBytes),
        log2_pbl_pg_size: 12,
        access: MrAccess.LOCAL_WRITE | MrAccess.REMOTE_READ,
        key,
        pbl: table.value.dir,
        va: buffer.iova,
        mr_size: BigInt(length), // the region's bytes, not the page-rounded buffer: the NIC checks accesses against it
      }, [buffer, ...table.value.tables]);
      if (!r.ok) {
        ledger.unwind();
        return err(r.error);
      }
      if (unified) {
        key = r.value.xid;
        undoKey(ledger, roce, key);
      } else if (r.value.xid !== key) {
        // The firmware names the key it registered; another one is not the one this region holds.
        ledger.unwind();
        const hex = (k: number) => `0x${k.toString(16)}`;
        return err(`REGISTER_MR: malformed firmware answer (key ${hex(r.value.xid)}, not ${hex(key)})`);
      }
      return ok(new BnxtRegion(buffer, length, key, ledger));
    });
  }

  /**
   * DEALLOCATE_KEY, then frees the page table and the memory. A refusal leaves the region
   * registered (a later deregister may succeed); a silent firmware leaves it deregistered with
   * its memory held until the NIC is closed.
   */
  deregister(): Result<void> {
    let failures: string[];
    try {
      failures = this.ledger.unwind({ stopAtRefusal: true });
    } finally {
      // Unwound (freed, or held because the firmware went silent or an exception ended it).
      if (this.ledger.size === 0) this.registered = false;
    }
    return failures.length === 0 ? ok() : err(failures[0]!);
  }
}

/** DEALLOCATE_KEY (type MR) frees `key` and with it any pages it binds: qplib_sp.c bnxt_qplib_free_mrw. */
function undoKey(ledger: Ledger, roce: RoceDevice, key: number): void {
  const rcfw = roce.rcfw;
  ledger.undo(rcfw, 'DEALLOCATE_KEY', () => rcfw.send(Q.DEALLOCATE_KEY, { mrw_flags: MrwType.MR, key }));
}
