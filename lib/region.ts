/**
 * Regions: DMA memory registered with the NIC (REGISTER_MR), so queue pairs can send from,
 * receive into and serve reads of it. `bytes` is the memory itself.
 */
import type { DmaBuffer } from '../drivers/device.ts';
import { RegisterMrFlags, MrAccess } from '../firmware-hwrm/roce/commands-mr.ts';
import { PTU_PTE_VALID, log2PageSize } from '../firmware-hwrm/roce/pbl.ts';
import { ok, err, type Result } from './result.ts';
import { invalid } from './errors.ts';
import { Nic, nicInternals } from './nic.ts';
import { buildPageTable, freePageTable, type PageTable } from './bnxt/page-table.ts';
import * as Q from './bnxt/roce-commands.ts';

/** Largest message and region: 2^31 bytes (the spec's bound). */
export const MAX_REGION_BYTES = 2 ** 31;

export class Region {
  readonly bytes: Uint8Array;
  readonly length: number;
  /** lkey = rkey. */
  readonly key: number;
  /** The region's address as the NIC sees it (its IOVA), as two 32-bit halves for the data path. */
  readonly vaLo: number;
  readonly vaHi: number;
  private registered = true;

  private constructor(
    readonly nic: Nic,
    private readonly buffer: DmaBuffer,
    private readonly table: PageTable,
    length: number,
    key: number,
  ) {
    this.bytes = buffer.bytes.subarray(0, length);
    this.length = length;
    this.key = key;
    this.vaLo = buffer.iova % 4294967296;
    this.vaHi = Math.floor(buffer.iova / 4294967296);
  }

  get deregistered(): boolean {
    return !this.registered;
  }

  /**
   * Allocates `length` bytes of DMA memory and registers them. Throws InvalidArgument for a
   * length that is not an integer in 1..2^31; no memory or a refusal is a Result error.
   */
  static alloc(nic: Nic, length: number): Result<Region> {
    if (!(nic instanceof Nic)) invalid('Region.alloc: not a NIC');
    if (!Number.isInteger(length) || length < 1 || length > MAX_REGION_BYTES) invalid(`Region.alloc: length ${length} is not an integer in 1..2^31`);
    const { fn, roce, children } = nicInternals(nic);
    const pool = fn.pool;
    // A silent firmware would not get REGISTER_MR: take no memory it could be left holding.
    if (roce.rcfw.stalled) return err(`Region.alloc: ${roce.rcfw.stalled}`);
    const mem = pool.alloc(length);
    if (!mem.ok) return err(`Region.alloc: no memory for ${length} bytes: ${mem.error}`);
    const buffer = mem.value;
    // The largest page size the memory allows (its backing pages), one table level per 512 pages.
    const table = buildPageTable(pool, buffer, buffer.pageBytes, () => PTU_PTE_VALID);
    if (!table.ok) {
      pool.free(buffer);
      return err(`Region.alloc: ${table.error}`);
    }
    // REGISTER_MR with ALLOC_MR: the firmware allocates the key (key carries the PD).
    const r = roce.rcfw.send(Q.REGISTER_MR, {
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
      if (roce.rcfw.stalled) pool.quarantine(buffer, ...table.value.tables);
      else {
        freePageTable(pool, table.value);
        pool.free(buffer);
      }
      return err(`Region.alloc: ${r.error}`);
    }
    const region = new Region(nic, buffer, table.value, length, r.value.xid);
    children.add(region);
    return ok(region);
  }

  /** DEREGISTER_MR, then frees the memory. A refusal leaves the region registered. */
  deregister(): Result<void> {
    if (!this.registered) return err('Region.deregister: the region is already deregistered');
    if (this.nic.closed) return err('Region.deregister: its NIC is closed');
    const { fn, roce, children } = nicInternals(this.nic);
    const r = roce.rcfw.send(Q.DEREGISTER_MR, { lkey: this.key });
    if (!r.ok) {
      if (roce.rcfw.stalled) {
        this.registered = false;
        children.delete(this);
        fn.pool.quarantine(this.buffer, ...this.table.tables);
      }
      return err(`Region.deregister: ${r.error}`);
    }
    this.registered = false;
    children.delete(this);
    freePageTable(fn.pool, this.table);
    fn.pool.free(this.buffer);
    return ok();
  }

  /** @internal Called by Nic.close. */
  closeWithNic(): void {
    if (this.registered) this.deregister();
  }
}
