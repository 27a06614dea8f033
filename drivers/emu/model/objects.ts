/**
 * The software NIC's RoCE objects, shared by its firmware (which creates, modifies and
 * destroys them on CMDQ commands) and its engine (which runs their rings). Like hardware
 * contexts, they hold what the create/modify commands said, with page lists resolved once
 * through the IOMMU at create time.
 */
import type { Iommu } from './iommu.ts';

/** Host memory the device reaches through a page list (a ring or a memory region). */
export class PagedMemory {
  /**
   * Each page's translation as the IOMMU last resolved it (iommu.ts pagedMapping): the
   * mapping that holds the page's first byte, where that byte sits in it, and the IOMMU epoch
   * it was resolved in (0: never; an unmap starts a new epoch). IOVAs are at or above 4 GiB by
   * design, so an IOVA handed from call to call is a heap-allocated double; the hot path
   * names host memory as (this, offset) instead and allocates nothing.
   */
  readonly pageMapping: unknown[];
  readonly pageStart: Float64Array;
  readonly pageEpoch: Int32Array;
  /**
   * log2(pageBytes) when it is a power of two (every page size the firmware takes), else -1;
   * pageMask = pageBytes - 1 then. An offset that is a non-negative int32 finds its page by a
   * shift and its place in it by a mask: the same numbers as the division and `%`, which on
   * offsets held as doubles (Float64Array SGE offsets) were a float modulo call each (10-40 ns).
   */
  readonly pageShift: number;
  readonly pageMask: number;

  constructor(
    /** IOVA of each page, in order. */
    readonly pages: readonly number[],
    readonly pageBytes: number,
    /** Bytes described (pages x pageBytes, or less for a region). */
    readonly length: number,
    /** Offset 0 is this many bytes into the first page (a region whose va is not page aligned). */
    readonly firstOffset = 0,
  ) {
    this.pageMapping = new Array<unknown>(pages.length).fill(undefined);
    // Both arrays in one buffer: a queue pair's make resolves four rings, and each buffer of its
    // own was an allocation and a backing store for the collector to track and free.
    const both = new ArrayBuffer(pages.length * 12);
    this.pageStart = new Float64Array(both, 0, pages.length);
    this.pageEpoch = new Int32Array(both, pages.length * 8, pages.length);
    const shift = Math.log2(pageBytes);
    this.pageShift = Number.isInteger(shift) && shift >= 0 && shift < 31 ? shift : -1;
    this.pageMask = this.pageShift >= 0 ? pageBytes - 1 : 0;
  }

  /** IOVA of byte `offset`; the caller keeps accesses inside one page (entries never straddle pages). */
  iova(offset: number): number {
    const o = offset + this.firstOffset;
    if ((o | 0) === o && o >= 0 && this.pageShift >= 0) return this.pages[o >> this.pageShift]! + (o & this.pageMask);
    const page = Math.floor(o / this.pageBytes);
    return this.pages[page]! + (o - page * this.pageBytes);
  }

  /** Largest run of bytes from `offset` that stays inside one page. */
  contiguous(offset: number): number {
    const o = offset + this.firstOffset;
    if ((o | 0) === o && o >= 0 && this.pageShift >= 0) return this.pageBytes - (o & this.pageMask);
    return this.pageBytes - (o % this.pageBytes);
  }
}

/** A ring of fixed-size entries in paged memory. */
export class Ring {
  constructor(
    readonly memory: PagedMemory,
    readonly entries: number,
    readonly entryBytes: number,
  ) {}
  /** IOVA of entry `index` (control paths; the hot path names an entry by entryOffset, allocation-free). */
  entryIova(index: number): number {
    return this.memory.iova(index * this.entryBytes);
  }
  entryOffset(index: number): number {
    return index * this.entryBytes;
  }
}

export class EmuCq {
  /** Next CQE slot the device writes (free-running). */
  producer = 0;
  /** Consumer index the driver last rang (CQ doorbell), free-running modulo 2 x entries. */
  consumer = 0;
  /** NQ notification requested (CQ_ARMALL / CQ_ARMSE doorbell) and not yet delivered. */
  armed = false;
  destroyed = false;
  constructor(
    readonly id: number,
    /** cq_handle as two 32-bit halves: echoed in NQ entries. */
    readonly handleLo: number,
    readonly handleHi: number,
    readonly ring: Ring,
    /** The NQ (ring id) this CQ notifies. */
    readonly nqId: number,
  ) {}
}

export class EmuMr {
  /**
   * True while the region's key names this very registration (the firmware's key table maps the
   * key to it): cleared, never set again, when DEREGISTER_MR or DEALLOCATE_KEY unbinds it or a
   * function reset drops the tables (firmware/roce-cmd-mr.ts unbindRegion, roce-tables.ts clear).
   * A re-registration under the same key is a new EmuMr. The engine checks it on each access of a
   * region it holds across packets (sgl.ts copySgl, stillRegistered): one load where a key lookup
   * would give the same answer.
   */
  bound = true;

  constructor(
    /** lkey = rkey. */
    readonly key: number,
    readonly pd: number,
    /** Virtual address the region starts at (as registered). */
    readonly va: number,
    readonly length: number,
    /** MrAccess bits. */
    readonly access: number,
    readonly memory: PagedMemory,
  ) {}
}

/** QP states with roce_hsi.h's values (QpState in firmware-hwrm/roce). */
export const enum EmuQpState {
  RESET = 0,
  INIT = 1,
  RTR = 2,
  RTS = 3,
  SQD = 4,
  SQE = 5,
  ERR = 6,
}

export class EmuQp {
  state: EmuQpState = EmuQpState.RESET;
  destroyed = false;
  // Set by MODIFY_QP.
  access = 0;
  pkey = 0xffff;
  pathMtuBytes = 4096;
  destQpn = 0;
  destMac = new Uint8Array(6);
  destGid = new Uint8Array(16);
  sgidIndex = 0;
  hopLimit = 64;
  /** Responder's expected PSN (from rq_psn). */
  rqPsn = 0;
  /** Requester's next PSN (from sq_psn). */
  sqPsn = 0;
  /** Local ACK timeout code: 4.096 us x 2^timeout (0 = infinite). */
  timeout = 0;
  retryCnt = 0;
  /** 7 = retry forever. */
  rnrRetry = 0;
  minRnrTimer = 0;
  maxRdAtomic = 0;
  maxDestRdAtomic = 0;
  /** Producer indexes from the last SQ / RQ doorbells (free-running as rung, masked by ring size). */
  sqProducer = 0;
  rqProducer = 0;
  /**
   * Entries of the host MSN table after the SQ's WQEs when the requester retransmits from it
   * (hardware retransmission, engine/msn-table.ts); 0: it keeps its own record (PSN search).
   */
  msnEntries = 0;
  /**
   * CREATE_QP asked for variable-size WQEs (VARIABLE_SIZED_WQE_ENABLED): the SQ ring is
   * `sq.entries` 16-byte slots and its doorbell names a slot; otherwise 128-byte WQEs.
   */
  variableWqe = false;
  /** The engine's per-QP transport state (requester, responder, completer); owned by the engine. */
  transport: unknown = undefined;

  constructor(
    readonly qpn: number,
    readonly pd: number,
    readonly handleLo: number,
    readonly handleHi: number,
    /** Send queue: `sqEntries` WQEs of 128 bytes (static mode), followed by the PSN search area. */
    readonly sq: Ring,
    readonly rq: Ring,
    readonly scq: EmuCq,
    readonly rcq: EmuCq,
    readonly sqSge: number,
    readonly rqSge: number,
    /**
     * The QP's service: an RC QP, which the engine runs, or the function's GSI QP (QP1, a UD
     * QP for MADs), which the firmware keeps but the engine does not run (docs/hardware.md).
     */
    readonly service: 'rc' | 'gsi' = 'rc',
  ) {}
}

/** A GID table entry (ADD_GID). */
export interface EmuGid {
  readonly index: number;
  readonly gid: Uint8Array;
  readonly mac: Uint8Array;
}

/** Resolves a page list of `level` (0/1/2) at `pbl` through the IOMMU; undefined if any page is unmapped. */
export function walkPageList(
  iommu: Iommu, pbl: number, level: number, pageBytes: number, length: number,
): PagedMemory | undefined {
  const pages = Math.max(1, Math.ceil(length / pageBytes));
  if (level === 0) {
    // Level 0: pbl is the (contiguous) memory itself.
    if (!iommu.check(pbl, length)) return undefined;
    return new PagedMemory(Array.from({ length: pages }, (_, i) => pbl + i * pageBytes), pageBytes, length);
  }
  const out: number[] = [];
  if (level === 1 ? !readPageTable(iommu, pbl, pages, true, pages, pageBytes, length, out)
    : level === 2 ? !readPageTable(iommu, pbl, Math.ceil(pages / 512), false, pages, pageBytes, length, out)
    : false) return undefined;
  if (level > 2 || out.length < pages) return undefined;
  return new PagedMemory(out, pageBytes, length);
}

/**
 * Appends the pages one table of `count` PTEs names (`leaf`), or walks the leaf tables it
 * names, to `out` until it holds `pages`; false if a PTE or a page is unmapped. A table that
 * lies in one mapping is checked once, and its pages are checked after its PTEs are read, so
 * each lookup finds the mapping the one before it found (the IOMMU remembers the last).
 */
function readPageTable(
  iommu: Iommu, table: number, count: number, leaf: boolean, pages: number, pageBytes: number, length: number,
  out: number[],
): boolean {
  const wanted = Math.min(count, leaf ? pages - out.length : count);
  const whole = iommu.check(table, wanted * 8);
  const first = out.length;
  for (let i = 0; i < wanted && out.length < pages; i++) {
    if (!whole && !iommu.check(table + i * 8, 8)) return false;
    const pte = iommu.read64(table + i * 8);
    const address = pte - (pte % 4096);
    if (leaf) out.push(address);
    else if (!readPageTable(iommu, address, 512, true, pages, pageBytes, length, out)) return false;
  }
  if (leaf) {
    for (let p = first; p < out.length; p++) {
      if (!iommu.check(out[p]!, Math.min(pageBytes, length - p * pageBytes))) return false;
    }
  }
  return true;
}

/**
 * What the engine asks of the firmware's tables, and what the firmware tells the engine: the
 * two peers meet only here. RoceFirmware (firmware/roce.ts) implements RoceTables; RoceEngine
 * (engine/engine.ts) implements EngineHooks; nic-model.ts hands each to the other.
 */
export interface RoceTables {
  qp(qpn: number): EmuQp | undefined;
  cq(id: number): EmuCq | undefined;
  /** The region whose key is `key` (lkey = rkey), if registered. */
  mr(key: number): EmuMr | undefined;
  gid(index: number): EmuGid | undefined;
  /** Writes a QP error notification (CREQ event 0xC0) for `qp` with the given reason codes. */
  postQpError(qp: EmuQp, reqErrStateReason: number, resErrStateReason: number): void;
  /** Writes a CQ notification entry to the NQ of `cq` (if armed). */
  postCqNotification(cq: EmuCq): void;
  /**
   * An NQ or NQ_ARM doorbell: the driver consumed NQ-type ring `ringId` (the CREQ or a CQ's
   * NQ, by the doorbell's xid) up to `index` on a pass of parity `epoch`.
   */
  nqDoorbell(ringId: number, index: number, epoch: number): void;
}

/** Tables with nothing in them: an engine before the firmware is attached. */
export const NO_TABLES: RoceTables = {
  qp: () => undefined,
  cq: () => undefined,
  mr: () => undefined,
  gid: () => undefined,
  postQpError: () => {},
  postCqNotification: () => {},
  nqDoorbell: () => {},
};

export interface EngineHooks {
  /** MODIFY_QP changed `qp`'s state (to RTS: start sending; to ERR: flush). */
  qpStateChanged(qp: EmuQp, from: EmuQpState): void;
  /** DESTROY_QP: the engine must run none of its entries and write no memory for it from now on. */
  qpDestroyed(qp: EmuQp): void;
}
