/**
 * Page tables the firmware walks to find host memory: context memory, rings and memory
 * regions (qplib_res.c bnxt_qplib_alloc_init_hwq; bnxt.c bnxt_setup_ctxm_pg_tbls). The data is one IOVA-
 * contiguous DMA buffer; the tables list its pages.
 *
 *   level 0: dir = the data itself (one page, or a contiguous block where allowed)
 *   level 1: dir = a table of PTEs, PTE[i] = page i | flags         (up to 512 x 4 KiB tables)
 *   level 2: dir = a table of PDEs, PDE[j] = level-1 table j | VALID
 */
import type { DmaBuffer } from '../../drivers/device.ts';
import { PTU_PDE_VALID, PTE_BYTES } from '../../firmware-hwrm/roce/pbl.ts';
import { ok, err, type Result } from '../result.ts';
import type { DmaPool } from './dma-pool.ts';

const TABLE_BYTES = 4096;
const PTES_PER_TABLE = TABLE_BYTES / PTE_BYTES;

export interface PageTable {
  /** What the firmware is given: the data (level 0) or the top table. */
  readonly dir: number;
  readonly level: 0 | 1 | 2;
  readonly pageBytes: number;
  readonly pages: number;
  /** Table pages to free with the data. */
  readonly tables: readonly DmaBuffer[];
}

/**
 * Builds the tables for `data` cut in `pageBytes` pages. `minLevel` forces a table even for
 * one page (some firmware users want level 1), or two levels even for few pages (bnxt_en's
 * context memory of depth 2: bnxt.c bnxt_alloc_ctx_pg_tbls). `flagsOf(i, pages)` gives each
 * PTE's low bits.
 */
export function buildPageTable(
  pool: DmaPool, data: DmaBuffer, pageBytes: number, flagsOf: (page: number, pages: number) => number,
  minLevel: 0 | 1 | 2 = 0,
): Result<PageTable> {
  const pages = Math.ceil(data.length / pageBytes);
  if (pages <= 1 && minLevel === 0) return ok({ dir: data.iova, level: 0, pageBytes, pages, tables: [] });
  const leafTables = Math.ceil(pages / PTES_PER_TABLE);
  const level: 1 | 2 = leafTables > 1 || minLevel === 2 ? 2 : 1;
  const tables: DmaBuffer[] = [];
  const release = () => tables.forEach((t) => pool.free(t));
  for (let t = 0; t < leafTables; t++) {
    const table = pool.alloc(TABLE_BYTES);
    if (!table.ok) { release(); return err(`no memory for a page table: ${table.error}`); }
    tables.push(table.value);
    const v = table.value.view;
    for (let i = 0; i < PTES_PER_TABLE; i++) {
      const page = t * PTES_PER_TABLE + i;
      if (page >= pages) break;
      writePte(v, i, data.iova + page * pageBytes, flagsOf(page, pages));
    }
  }
  if (level === 1) return ok({ dir: tables[0]!.iova, level, pageBytes, pages, tables });
  if (leafTables > PTES_PER_TABLE) {
    release();
    return err(`${data.length} bytes need more than two levels of page tables`);
  }
  const top = pool.alloc(TABLE_BYTES);
  if (!top.ok) { release(); return err(`no memory for a page directory: ${top.error}`); }
  for (let j = 0; j < leafTables; j++) writePte(top.value.view, j, tables[j]!.iova, PTU_PDE_VALID);
  tables.push(top.value);
  return ok({ dir: top.value.iova, level, pageBytes, pages, tables });
}

function writePte(v: DataView, index: number, address: number, flags: number): void {
  const lo = (address % 4294967296) + flags; // addresses are page aligned: flags fill the low bits
  v.setUint32(index * 8, lo >>> 0, true);
  v.setUint32(index * 8 + 4, Math.floor(address / 4294967296), true);
}

export function freePageTable(pool: DmaPool, t: PageTable): void {
  for (const b of t.tables) pool.free(b);
}
