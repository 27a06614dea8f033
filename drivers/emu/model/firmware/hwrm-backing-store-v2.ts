/**
 * Context memory V2 as the software NIC's firmware sees it (HWRM_FUNC_BACKING_STORE_QCAPS_V2
 * 0x1a8 and CFG_V2 0x1a3, hsi.h): the context types it offers, each with an entry size,
 * limits, split entries and an initialiser, and the check of every CFG_V2.
 *
 * Rules (the public drivers' behaviour, held strictly; docs/hardware.md):
 *   - QCAPS_V2 of any type answers the next offered type in next_valid_type (0xffff after
 *     the last), TYPE_VALID only for offered types (bnxt_hwrm_func_backing_store_qcaps_v2).
 *   - CFG_V2 names an offered type and an instance of its instance_bit_map, with QCAPS_V2's
 *     entry size, between min and max entries and a multiple of entry_multiple; its page
 *     directory covers num_entries x entry_size of mapped memory; the QP type keeps the L2
 *     and QP1 split entries QCAPS_V2 gave and has room for them; MRAV's AV split fits.
 *   - Memory of a type with ENABLE_CTX_KIND_INIT holds the init value where bnxt_init_ctx_mem
 *     writes it (every entry_size step of each 4 KiB page): uninitialised context is corrupt.
 *   - Each (type, instance) once; BS_CFG_ALL_DONE ends the configuration and is refused unless
 *     every type bnxt_alloc_ctx_mem sets up (QP, SRQ, CQ, VNIC, STAT, both TQM kinds in every
 *     instance, MRAV, TIM) was configured. Only then does the function have context memory:
 *     RING_ALLOC and every RoCE command before it are refused.
 *   - Firmware trace types are optional: a driver may configure them (bnxt_backing_store_cfg_v2
 *     since "bnxt_en: Allocate backing store memory for FW trace logs", which carries on when
 *     their memory cannot be had) or never learn of them (Linux 6.12's QCAPS_V2 walk stops at
 *     BNXT_CTX_V2_MAX = XID_PARTITION + 1 and puts ALL_DONE on TIM), and firmware serves both.
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmRequest, HwrmResponse } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { Iommu } from '../iommu.ts';
import type { BackingStoreState } from './hwrm-backing-store.ts';

const T = H.FUNC_BACKING_STORE_V2_TYPE;
const F = H.FUNC_BACKING_STORE_QCAPS_V2_RESP_FLAGS;
const E = H.HWRM_ERR_CODE;
const PAGE = 4096;

export interface OfferedType {
  readonly type: number;
  readonly entry_size: number;
  readonly flags: number;
  readonly instance_bit_map: number;
  readonly ctx_init_value: number;
  /** In 4-byte units, as on the wire. */
  readonly ctx_init_offset: number;
  readonly entry_multiple: number;
  readonly max_num_entries: number;
  readonly min_num_entries: number;
  readonly splits: readonly number[];
}

const KIND_INIT = F.TYPE_VALID | F.ENABLE_CTX_KIND_INIT;
const offer = (type: number, entry_size: number, max: number, min: number, more: Partial<OfferedType> = {},
): OfferedType => ({
  type, entry_size, flags: F.TYPE_VALID, instance_bit_map: 0, ctx_init_value: 0, ctx_init_offset: 0, entry_multiple: 0,
  max_num_entries: max, min_num_entries: min, splits: [], ...more,
});

/**
 * What this model's firmware offers: the P5 model's entry sizes and small limits, eight fast-
 * path TQM rings as instances, initialisers on the kinds bnxt_en initialises, a doorbell-
 * shadow type the driver manages itself (and may leave out) and five firmware trace buffers.
 * The values are the model's choice; a real card reports its own.
 */
export const OFFERED_TYPES: readonly OfferedType[] = [
  offer(T.QP, 448, 4096, 66, { flags: KIND_INIT, ctx_init_value: 0xff, ctx_init_offset: 2, splits: [64, 2, 0] }),
  offer(T.SRQ, 64, 4096, 64, { flags: KIND_INIT, ctx_init_value: 0xff, ctx_init_offset: 1, splits: [64] }),
  offer(T.CQ, 64, 8192, 128, { flags: KIND_INIT, ctx_init_value: 0xff, ctx_init_offset: 3, splits: [128] }),
  offer(T.VNIC, 64, 128, 128, { flags: KIND_INIT, ctx_init_value: 0xff, ctx_init_offset: 0, splits: [64] }),
  offer(T.STAT, 64, 128, 128, { flags: KIND_INIT, ctx_init_value: 0xff, ctx_init_offset: 0 }),
  offer(T.SP_TQM_RING, 16, 8192, 64, { entry_multiple: 8 }),
  offer(T.FP_TQM_RING, 16, 8192, 64, { entry_multiple: 8, instance_bit_map: 0xff }),
  offer(T.MRAV, 128, 16384, 0, { flags: KIND_INIT, ctx_init_value: 0xff, ctx_init_offset: 4, splits: [0] }),
  offer(T.TIM, 16, 4096, 0),
  offer(T.SQ_DB_SHADOW, 64, 4096, 0, { flags: F.TYPE_VALID | F.DRIVER_MANAGED_MEMORY }),
  ...[T.SRT_TRACE, T.CRT_TRACE, T.RIGP0_TRACE, T.L2_HWRM_TRACE, T.ROCE_HWRM_TRACE]
    .map((t) => offer(t, 1, 16384, 0, { flags: F.TYPE_VALID | F.FW_DBG_TRACE })),
];

/** The types bnxt_alloc_ctx_mem always sets up (RoCE on); trace types are optional. */
const REQUIRED = new Set<number>([T.QP, T.SRQ, T.CQ, T.VNIC, T.STAT, T.SP_TQM_RING, T.FP_TQM_RING, T.MRAV, T.TIM]);

type QcapsReq = HwrmRequest<'FUNC_BACKING_STORE_QCAPS_V2'>;
type CfgReq = HwrmRequest<'FUNC_BACKING_STORE_CFG_V2'>;

/** The configuration in progress between FUNC_RESETs. */
export class BackingStoreV2 {
  private readonly offered = new Map<number, OfferedType>();
  private readonly configured = new Map<string, number>();
  private done = false;
  /** Why the last CFG_V2 was refused (the answer carries only a code). */
  lastRefusal: string | undefined;

  constructor(types: readonly OfferedType[] = OFFERED_TYPES) {
    for (const t of types) this.offered.set(t.type, t);
  }

  reset(): void {
    this.configured.clear();
    this.done = false;
    this.lastRefusal = undefined;
  }

  get configuredCount(): number {
    return this.configured.size;
  }

  get allDone(): boolean {
    return this.done;
  }

  qcaps(req: QcapsReq): { values: Partial<HwrmResponse<'FUNC_BACKING_STORE_QCAPS_V2'>> } {
    const type = req.type;
    const next = [...this.offered.keys()].filter((t) => t > type).sort((a, b) => a - b)[0] ?? T.INVALID;
    const t = this.offered.get(type);
    if (!t) return { values: { type, flags: 0, next_valid_type: next } };
    const s = t.splits;
    return {
      values: {
        type, entry_size: t.entry_size, flags: t.flags, instance_bit_map: t.instance_bit_map,
        ctx_init_value: t.ctx_init_value,
        ctx_init_offset: t.ctx_init_offset, entry_multiple: t.entry_multiple, max_num_entries: t.max_num_entries,
        min_num_entries: t.min_num_entries, next_valid_type: next, subtype_valid_cnt: s.length,
        split_entry_0: s[0] ?? 0, split_entry_1: s[1] ?? 0, split_entry_2: s[2] ?? 0, split_entry_3: s[3] ?? 0,
        max_instance_count: Math.max(1, popcount(t.instance_bit_map)),
      },
    };
  }

  /** Checks one CFG_V2; on the ALL_DONE call that completes the set, also the state RoCE builds on. */
  cfg(req: CfgReq, iommu: Iommu): { error: number } | { values: object; state?: BackingStoreState } {
    const why = this.refusal(req, iommu);
    if (why) {
      this.lastRefusal = why;
      return { error: why.startsWith('after') ? E.RESOURCE_ACCESS_DENIED : E.INVALID_PARAMS };
    }
    this.configured.set(key(req.type, req.instance), req.num_entries);
    if ((req.flags & H.FUNC_BACKING_STORE_CFG_V2_REQ_FLAGS.BS_CFG_ALL_DONE) === 0) return { values: {} };
    const missing = this.missing();
    if (missing) {
      this.configured.delete(key(req.type, req.instance));
      this.lastRefusal = `BS_CFG_ALL_DONE before ${missing} was configured`;
      return { error: E.INVALID_PARAMS };
    }
    this.done = true;
    const qp = this.configured.get(key(T.QP, 0))!;
    const t = this.offered.get(T.QP)!;
    return {
      values: {},
      state: {
        qpEntries: qp - (t.splits[0] ?? 0) - (t.splits[1] ?? 0),
        cqEntries: this.configured.get(key(T.CQ, 0))!,
        mravEntries: this.configured.get(key(T.MRAV, 0))!,
      },
    };
  }

  private refusal(req: CfgReq, iommu: Iommu): string | undefined {
    const type = req.type;
    const instance = req.instance;
    const n = req.num_entries;
    const t = this.offered.get(type);
    const name = `type 0x${type.toString(16)}`;
    if (this.done) return `after BS_CFG_ALL_DONE: ${name} configured again`;
    if (!t) return `${name} is not offered`;
    if (!instancesOf(t.instance_bit_map).includes(instance)) return `${name} has no instance ${instance}`;
    if (this.configured.has(key(type, instance))) return `${name} instance ${instance} configured twice`;
    if (req.entry_size !== t.entry_size)
      return `${name}: entry size ${String(req.entry_size)}, QCAPS_V2 gave ${t.entry_size}`;
    if (n < t.min_num_entries || n > t.max_num_entries || n === 0) {
      return `${name}: ${n} entries, not in ${t.min_num_entries}..${t.max_num_entries}`;
    }
    if (t.entry_multiple && n % t.entry_multiple !== 0)
      return `${name}: ${n} entries, not a multiple of ${t.entry_multiple}`;
    const splitWhy = this.splitRefusal(t, req);
    if (splitWhy) return `${name}: ${splitWhy}`;
    const pages = leafPages(iommu, req.page_dir, req.page_size_pbl_level, n * t.entry_size);
    if (!pages) return `${name}: the page directory does not cover ${n * t.entry_size} bytes of mapped memory`;
    if ((t.flags & F.ENABLE_CTX_KIND_INIT) && t.ctx_init_value && !initialised(iommu, pages, n * t.entry_size, t)) {
      const value = `0x${t.ctx_init_value.toString(16)}`;
      return `${name}: context memory not initialised with ${value} at offset ${t.ctx_init_offset * 4}`;
    }
    return undefined;
  }

  private splitRefusal(t: OfferedType, req: CfgReq): string | undefined {
    const sent: readonly [number, number, number, number] =
      [req.split_entry_0, req.split_entry_1, req.split_entry_2, req.split_entry_3];
    if (t.type === T.QP) {
      if (sent[0] !== t.splits[0] || sent[1] !== t.splits[1]) {
        return `L2/QP1 split entries ${sent[0]}/${sent[1]}, QCAPS_V2 gave ${t.splits[0]}/${t.splits[1]}`;
      }
      if (req.num_entries < sent[0] + sent[1]) return 'fewer entries than the L2 and QP1 entries';
    }
    const n = req.num_entries;
    if (t.type === T.MRAV && sent[0] > n) return `AV split ${sent[0]} above ${n} entries`;
    return undefined;
  }

  private missing(): string | undefined {
    for (const t of this.offered.values()) {
      if (!REQUIRED.has(t.type)) continue;
      for (const i of instancesOf(t.instance_bit_map)) {
        if (!this.configured.has(key(t.type, i))) return `type 0x${t.type.toString(16)} instance ${i}`;
      }
    }
    return undefined;
  }
}

function key(type: number, instance: number): string {
  return `${type}/${instance}`;
}

function popcount(v: number): number {
  let n = 0;
  for (let x = v >>> 0; x; x >>>= 1) n += x & 1;
  return n;
}

function instancesOf(bitMap: number): number[] {
  if (bitMap === 0) return [0];
  const out: number[] = [];
  for (let i = 0; i < 32; i++) if ((bitMap >>> i) & 1) out.push(i);
  return out;
}

/** The data pages' addresses a directory names for `bytes`, or undefined if a PTE or page is not mapped. */
function leafPages(iommu: Iommu, dir: number, pgSizeLvl: number, bytes: number): number[] | undefined {
  const level = pgSizeLvl & 0xf;
  // The public drivers use 4 KiB pages for context memory.
  if (pgSizeLvl >> 4 !== H.FUNC_BACKING_STORE_PG_SIZE.PG_4K || level > 2) return undefined;
  const count = Math.ceil(bytes / PAGE);
  if (level === 0) return count === 1 && iommu.check(dir, PAGE) ? [dir] : undefined;
  const tables = level === 1 ? [dir] : [];
  if (level === 2) {
    for (let j = 0; j < Math.ceil(count / 512); j++) {
      const pde = iommu.read64(dir + j * 8);
      if ((pde & 1) === 0 || !iommu.check(pde - (pde % PAGE), PAGE)) return undefined;
      tables.push(pde - (pde % PAGE));
    }
  }
  if (level === 1 && count > 512) return undefined;
  const pages: number[] = [];
  for (let i = 0; i < count; i++) {
    const table = tables[Math.floor(i / 512)]!;
    if (!iommu.check(table + (i % 512) * 8, 8)) return undefined;
    const pte = iommu.read64(table + (i % 512) * 8);
    const page = pte - (pte % PAGE);
    if ((pte & 1) === 0 || !iommu.check(page, PAGE)) return undefined;
    pages.push(page);
  }
  return pages;
}

/** True if every place bnxt_init_ctx_mem writes holds the init value. */
function initialised(iommu: Iommu, pages: readonly number[], bytes: number, t: OfferedType): boolean {
  for (let p = 0; p < pages.length; p++) {
    const end = Math.min(PAGE, bytes - p * PAGE);
    for (let at = t.ctx_init_offset * 4; at < end; at += t.entry_size) {
      if (iommu.read8(pages[p]! + at) !== t.ctx_init_value) return false;
    }
  }
  return true;
}
