/**
 * A memory region at the hardware interface: DMA memory, the page table the NIC walks to find
 * it, and the MR the firmware made for it with REGISTER_MR (unified form: ALLOC_MR, the
 * firmware picks the key, as bnxt_re's bnxt_qplib_reg_mr with a key of the PD). Argument checks
 * live in lib/region.ts; this module trusts them.
 *
 *   alloc -> page table (level 0/1/2, the memory's own page size) -> REGISTER_MR -> key
 *   DEREGISTER_MR -> free the page table and the memory (only after the firmware confirmed)
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import { Ledger } from '../../drivers/ledger.ts';
import { RegisterMrFlags, MrAccess } from '../../firmware-hwrm/roce/commands-mr.ts';
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
      // REGISTER_MR with ALLOC_MR: the firmware allocates the key (key carries the PD).
      const r = rcfw.send(Q.REGISTER_MR, {
        flags: RegisterMrFlags.ALLOC_MR,
        lvl: table.value.level,
        log2_pg_size: log2PageSize(buffer.pageBytes),
        log2_pbl_pg_size: 12,
        access: MrAccess.LOCAL_WRITE | MrAccess.REMOTE_READ,
        key: roce.pdId,
        pbl: table.value.dir,
        va: buffer.iova,
        mr_size: BigInt(length), // the region's bytes, not the page-rounded buffer: the NIC checks accesses against it
      }, [buffer, ...table.value.tables]);
      if (!r.ok) {
        ledger.unwind();
        return err(r.error);
      }
      const key = r.value.xid;
      ledger.undo(rcfw, 'DEREGISTER_MR', () => rcfw.send(Q.DEREGISTER_MR, { lkey: key }));
      return ok(new BnxtRegion(buffer, length, key, ledger));
    });
  }

  /**
   * DEREGISTER_MR, then frees the page table and the memory. A refusal leaves the region
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
