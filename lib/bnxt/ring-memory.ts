/**
 * Memory of a ring the NIC walks (SQ, RQ, CQ): one IOVA-contiguous DMA buffer and its page
 * table of 4 KiB pages, with the last two PTEs marked LAST / NEXT_TO_LAST as the kernel
 * marks queue rings (qplib_res.c bnxt_qplib_alloc_init_hwq: PTU_PTE_LAST, PTU_PTE_NEXT_TO_LAST).
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import { queuePteFlags, PgSize } from '../../firmware-hwrm/roce/pbl.ts';
import { ok, err, type Result } from '../result.ts';
import type { DmaPool } from './dma-pool.ts';
import { buildPageTable, freePageTable, type PageTable } from './page-table.ts';

export interface RingMemory {
  readonly buffer: DmaBuffer;
  readonly table: PageTable;
  /** PBL level and page-size code for CREATE_QP / CREATE_CQ. */
  readonly level: number;
  readonly pgSize: number;
}

export function allocRingMemory(pool: DmaPool, bytes: number): Result<RingMemory> {
  const buffer = pool.alloc(bytes);
  if (!buffer.ok) return err(`no memory for a ring of ${bytes} bytes: ${buffer.error}`);
  const table = buildPageTable(pool, buffer.value, 4096, queuePteFlags, 1);
  if (!table.ok) {
    pool.free(buffer.value);
    return table;
  }
  return ok({ buffer: buffer.value, table: table.value, level: table.value.level, pgSize: PgSize.PG_4K });
}

/** Every DMA buffer of the ring (to quarantine when the firmware may still name them). */
export function ringBuffers(r: RingMemory): DmaBuffer[] {
  return [r.buffer, ...r.table.tables];
}

export function freeRingMemory(pool: DmaPool, r: RingMemory): void {
  freePageTable(pool, r.table);
  pool.free(r.buffer);
}
