/**
 * The RoCE firmware's tables, as context memory would hold them: QPs, CQs, memory keys
 * and the GID table, each entry the shared object the engine runs (engine/objects.ts) plus
 * what only the firmware keeps (attributes QUERY_QP reports, notification counts, who
 * allocated a key). Ids come from bounded pools; the bound is the live limit.
 */
import type { EmuCq, EmuGid, EmuMr, EmuQp } from '../objects.ts';
import { RESERVED_QPS } from './roce-limits.ts';

/** A QP's context beyond EmuQp: what MODIFY_QP set and QUERY_QP reports. */
export interface FwQp {
  readonly qp: EmuQp;
  /** CREATE_QP sizes (WQEs) and the inline limit of static mode. */
  readonly sqSize: number;
  readonly rqSize: number;
  qkey: number;
  flowLabel: number;
  trafficClass: number;
  vlanId: number;
  vlanDei: number;
  vlanPcp: number;
  tosEcn: number;
  tosDscp: number;
  enableCc: number;
  networkType: number;
  enSqdAsyncNotify: number;
  srcMac: Uint8Array | undefined;
  /** SGID_INDEX was given since the last RESET: the QP names a GID table entry. */
  usesSgid: boolean;
}

export interface FwCq {
  readonly cq: EmuCq;
  /** NQ notifications written for this CQ (DESTROY_CQ reports it as total_cnq_events). */
  cnqEvents: number;
}

/** A memory key (MRAV entry): allocated by ALLOCATE_MRW or by REGISTER_MR with ALLOC_MR. */
export interface FwKey {
  readonly key: number;
  /** MrwType (MR or PMR). */
  readonly type: number;
  readonly pd: number;
  /** Allocated by REGISTER_MR(ALLOC_MR): DEREGISTER_MR frees the key too. */
  readonly unified: boolean;
  mr: EmuMr | undefined;
}

export interface FwGid extends EmuGid {
  readonly vlanId: number;
  readonly vlanEn: number;
  readonly tpid: number;
}

/** Ids in [first, first + capacity): round-robin (no immediate reuse) or lowest-free. */
export class IdPool {
  private readonly used = new Set<number>();
  private cursor = 0;
  constructor(private readonly first: number, private readonly roundRobin: boolean) {}

  get size(): number {
    return this.used.size;
  }

  alloc(capacity: number): number | undefined {
    if (this.used.size >= capacity) return undefined;
    const start = this.roundRobin ? this.cursor % capacity : 0;
    for (let i = 0; i < capacity; i++) {
      const id = this.first + ((start + i) % capacity);
      if (this.used.has(id)) continue;
      this.used.add(id);
      this.cursor = (id - this.first + 1) % capacity;
      return id;
    }
    return undefined;
  }

  free(id: number): void {
    this.used.delete(id);
  }

  clear(): void {
    this.used.clear();
    this.cursor = 0;
  }
}

/** Memory keys: an MRAV index in bits 8-31 and a variant byte that changes on each reuse. */
export class KeyPool {
  private readonly indexes = new IdPool(1, true);
  private readonly variants = new Map<number, number>();

  alloc(capacity: number): number | undefined {
    const index = this.indexes.alloc(capacity);
    if (index === undefined) return undefined;
    const variant = ((this.variants.get(index) ?? 0) + 1) & 0xff;
    this.variants.set(index, variant);
    return ((index << 8) | variant) >>> 0;
  }

  free(key: number): void {
    this.indexes.free(key >>> 8);
  }

  clear(): void {
    this.indexes.clear();
  }
}

export class RoceState {
  /** INITIALIZE_FW succeeded and no DEINITIALIZE_FW since. */
  initialized = false;
  statCtxId = 0;
  /**
   * The requester retransmits from the driver's MSN table: INITIALIZE_FW claimed hardware
   * retransmission where QUERY_FUNC offered HW_REQUESTER_RETX_ENABLED and dev_cap_ext_flags_2
   * HOST_MSN_TABLE (engine/msn-table.ts).
   */
  retransmitsFromMsnTable = false;
  readonly qps = new Map<number, FwQp>();
  readonly cqs = new Map<number, FwCq>();
  readonly keys = new Map<number, FwKey>();
  readonly gids = new Map<number, FwGid>();
  readonly qpIds = new IdPool(RESERVED_QPS, true);
  readonly cqIds = new IdPool(1, true);
  readonly keyPool = new KeyPool();
  readonly gidIds = new IdPool(0, false);

  /** Objects the driver has not given back. */
  get objects(): number {
    return this.qps.size + this.cqs.size + this.keys.size + this.gids.size;
  }

  clear(): void {
    this.initialized = false;
    this.statCtxId = 0;
    this.retransmitsFromMsnTable = false;
    this.qps.clear();
    this.cqs.clear();
    // Every region is unbound with its key (EmuMr.bound): the engine may still hold one in a list.
    for (const key of this.keys.values()) if (key.mr !== undefined) key.mr.bound = false;
    this.keys.clear();
    this.gids.clear();
    this.qpIds.clear();
    this.cqIds.clear();
    this.keyPool.clear();
    this.gidIds.clear();
  }
}
