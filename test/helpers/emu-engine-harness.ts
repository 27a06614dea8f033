/**
 * A stepped software NIC for engine tests: a NicModel on a virtual clock whose engine runs
 * against small fake tables (no CMDQ), host memory mapped into its IOMMU, and WQE / CQE /
 * doorbell bytes written and read with offsets taken by hand from the public headers (bnxt_hsi.h
 * dbc_dbc doorbells; roce_hsi.h sq_send_hdr / sq_rdma_hdr / sq_sge SQ WQEs, rq_wqe_hdr RQ WQEs,
 * cq_req / cq_res_rc CQEs), not from the engine's own code.
 */
import { Buffer as NodeBuffer } from 'node:buffer';
import { NicModel, BAR0_BYTES, BAR2_BYTES } from '../../drivers/emu/model/nic-model.ts';
import { allocWriteQueue } from '../../drivers/emu/model/write-queue.ts';
import { allocWake } from '../../drivers/emu/host/wake.ts';
import { hostServices } from '../../drivers/emu/host/services.ts';
import type { LiveClock } from '../../drivers/emu/model/host-services.ts';
import type { EmuConfig } from '../../drivers/emu/model/config.ts';
import type { CableSpec } from '../../drivers/emu/model/cable/port-cable.ts';
import type { EngineCounterReport } from '../../drivers/emu/model/engine/engine-controls.ts';
import {
  EmuCq, EmuMr, EmuQp, EmuQpState, PagedMemory, Ring, type EmuGid, type RoceTables,
} from '../../drivers/emu/model/objects.ts';

export const PAGE = 4096;
export const DOORBELL = 0x10000;

// Values of roce_hsi.h SQ_BASE_WQE_TYPE_*, SQ_SEND_HDR_FLAGS_*, CQ_REQ_STATUS_*, CQ_RES_RC_STATUS_*,
// CMDQ_MODIFY_QP_ACCESS_*, CMDQ_REGISTER_MR_ACCESS_* and the dbc_dbc DBC_DBC_TYPE_* of bnxt_hsi.h.
export const WQE = { SEND: 0x00, SEND_W_IMM: 0x01, WRITE: 0x04, READ: 0x06, ATOMIC_CS: 0x08, RECV: 0x80 } as const;
export const FLAG = { SIGNAL: 0x01, FENCE: 0x04, SE: 0x08, INLINE: 0x10 } as const;
export const REQ = {
  OK: 0, LOCAL_PROTECTION: 4, REMOTE_INVALID_REQUEST: 6, REMOTE_ACCESS: 7, RNR_RETRY_EXCEEDED: 9, RETRY_EXCEEDED: 0xa,
  FLUSHED: 0xb,
} as const;
export const RES = { OK: 0, LOCAL_LENGTH: 2, LOCAL_PROTECTION: 3, FLUSHED: 7 } as const;
export const ACCESS_QP = { LOCAL_WRITE: 1, REMOTE_WRITE: 2, REMOTE_READ: 4 } as const;
export const ACCESS_MR = { LOCAL_WRITE: 1, REMOTE_READ: 2, REMOTE_WRITE: 4 } as const;
export const DB = { SQ: 0x0, RQ: 0x1, CQ: 0x4, CQ_ARMSE: 0x5, CQ_ARMALL: 0x6 } as const;

/** A live clock (bus.liveClock) that reads `ns()`: a test's own time, set on a stepped model. */
export function liveClockOf(ns: () => number): LiveClock {
  const readings = new Float64Array(1);
  return { readings, read: () => { readings[0] = ns(); } };
}

/**
 * A 64-bit doorbell as halves (bnxt_hsi.h dbc_dbc):
 * lo = index | epoch << 24; hi = xid | valid (bit 26) | type << 28.
 */
export function doorbellHalves(type: number, xid: number, index: number, epoch: number): [number, number] {
  return [(index | (epoch << 24)) >>> 0, (xid | (1 << 26) | (type << 28)) >>> 0];
}

export interface Buffer {
  readonly iova: number;
  /**
   * A Node Buffer over the memory, as pattern() makes: tap compares two Buffers with
   * Buffer.equals, any other byte array element by element and with a printed diff (seconds a MiB).
   */
  readonly bytes: NodeBuffer;
  readonly view: DataView;
}

export interface Cqe {
  readonly type: number;
  readonly status: number;
  /** Requester CQEs. */
  readonly sqConsIdx: number;
  /** Responder CQEs. */
  readonly length: number;
  readonly wrId: number;
  readonly flags: number;
  readonly imm: number;
  readonly handleLo: number;
}

export class FakeTables implements RoceTables {
  readonly qps = new Map<number, EmuQp>();
  readonly cqs = new Map<number, EmuCq>();
  readonly mrs = new Map<number, EmuMr>();
  readonly qpErrors: { qpn: number; req: number; res: number }[] = [];
  readonly notifications: number[] = [];
  qp(qpn: number): EmuQp | undefined { return this.qps.get(qpn); }
  cq(id: number): EmuCq | undefined { return this.cqs.get(id); }
  mr(key: number): EmuMr | undefined { return this.mrs.get(key); }
  gid(_index: number): EmuGid | undefined { return undefined; }
  postQpError(qp: EmuQp, req: number, res: number): void {
    qp.state = EmuQpState.ERR;
    this.qpErrors.push({ qpn: qp.qpn, req, res });
  }
  postCqNotification(cq: EmuCq): void {
    if (!cq.armed) return;
    cq.armed = false;
    this.notifications.push(cq.id);
  }
  /** No NQ-type rings here: NQ doorbells are recorded and do nothing else. */
  readonly nqDoorbells: { ringId: number; index: number; epoch: number }[] = [];
  nqDoorbell(ringId: number, index: number, epoch: number): void {
    this.nqDoorbells.push({ ringId, index, epoch });
  }
}

/** A CQ and the driver's side of it (consumer, expected toggle). */
export class TestCq {
  consumer = 0;
  constructor(readonly nic: TestNic, readonly cq: EmuCq, readonly ring: Buffer) {}

  /** Takes the next CQE if its toggle says it is new (1 on the first lap, flipping per lap: CQE_CMP_VALID). */
  poll(): Cqe | undefined {
    const n = this.cq.ring.entries;
    const slot = this.consumer % n;
    const at = slot * 32;
    const b = this.ring.bytes;
    const expected = Math.floor(this.consumer / n) % 2 === 0 ? 1 : 0;
    if ((b[at + 24]! & 1) !== expected) return undefined;
    const v = this.ring.view;
    const cqe: Cqe = {
      type: (b[at + 24]! >> 1) & 0xf,
      status: b[at + 25]!,
      sqConsIdx: v.getUint16(at + 8, true),
      length: v.getUint32(at, true),
      wrId: v.getUint32(at + 28, true) & 0xfffff,
      flags: v.getUint16(at + 26, true),
      imm: v.getUint32(at + 4, true),
      handleLo: v.getUint32(at, true),
    };
    this.consumer++;
    const [lo, hi] = doorbellHalves(DB.CQ, this.cq.id, this.consumer % n, Math.floor(this.consumer / n) % 2);
    this.nic.model.engine.doorbell(DOORBELL, lo, hi, true);
    return cqe;
  }

  pollAll(): Cqe[] {
    const out: Cqe[] = [];
    for (let c = this.poll(); c; c = this.poll()) out.push(c);
    return out;
  }

  arm(type: number = DB.CQ_ARMALL): void {
    const n = this.cq.ring.entries;
    const [lo, hi] = doorbellHalves(type, this.cq.id, this.consumer % n, Math.floor(this.consumer / n) % 2);
    this.nic.model.engine.doorbell(DOORBELL, lo, hi, true);
  }
}

export interface Sge { readonly va: number; readonly lkey: number; readonly size: number }

export interface SendOptions {
  readonly type?: number;
  readonly flags?: number;
  readonly sges?: readonly Sge[];
  /** Header length; defaults to the sum of SGE sizes. */
  readonly length?: number;
  readonly remoteVa?: number;
  readonly rkey?: number;
  readonly imm?: number;
  readonly inline?: Uint8Array;
  /** Variable mode: the wqe_size byte to write (default: the slots the WQE uses). */
  readonly wqeSize?: number;
  /** Variable mode: slots to move the producer by (default: wqe_size). */
  readonly advance?: number;
}

/** A QP and the driver's side of its rings (producers, epochs). */
export class TestQp {
  sqProd = 0;
  rqProd = 0;
  constructor(
    readonly nic: TestNic, readonly qp: EmuQp, readonly sq: Buffer, readonly rq: Buffer, readonly scq: TestCq,
    readonly rcq: TestCq,
  ) {}

  get qpn(): number { return this.qp.qpn; }

  /**
   * Writes a SEND/READ/WRITE WQE (roce_hsi.h sq_send_hdr, sq_rdma_hdr) at the producer; `ring`
   * false leaves the doorbell for later.
   */
  post(o: SendOptions, ring = true): number {
    if (this.qp.variableWqe) return this.postSlots(o, ring);
    const n = this.qp.sq.entries;
    const at = (this.sqProd % n) * 128;
    const b = this.sq.bytes;
    const v = this.sq.view;
    b.fill(0, at, at + 128);
    const sges = o.sges ?? [];
    const inline = o.inline;
    const length = o.length ?? (inline ? inline.length : sges.reduce((s, g) => s + g.size, 0));
    b[at] = o.type ?? WQE.SEND;
    b[at + 1] = (o.flags ?? FLAG.SIGNAL) | (inline ? FLAG.INLINE : 0);
    b[at + 2] = inline ? 2 + Math.ceil(inline.length / 16) : 2 + sges.length;
    v.setUint32(at + 4, o.imm ?? 0, true);
    v.setUint32(at + 8, length, true);
    if (o.remoteVa !== undefined) {
      v.setUint32(at + 16, o.remoteVa % 2 ** 32, true);
      v.setUint32(at + 20, Math.floor(o.remoteVa / 2 ** 32), true);
    }
    v.setUint32(at + 24, o.rkey ?? 0, true);
    if (inline) b.set(inline, at + 32);
    else sges.forEach((g, i) => {
      const s = at + 32 + 16 * i;
      v.setUint32(s, g.va % 2 ** 32, true);
      v.setUint32(s + 4, Math.floor(g.va / 2 ** 32), true);
      v.setUint32(s + 8, g.lkey, true);
      v.setUint32(s + 12, g.size, true);
    });
    const index = this.sqProd++;
    if (ring) this.ringSq();
    return index;
  }

  /**
   * A variable-size WQE (the same bytes) written slot by slot from the slot producer, wrapping
   * at the ring's end as Linux qplib_fp.c bnxt_qplib_post_send does; sqProd counts slots and
   * the doorbell names the slot after it. Returns the WQE's first slot.
   */
  private postSlots(o: SendOptions, ring: boolean): number {
    const wqe = new Uint8Array(128);
    const v = new DataView(wqe.buffer);
    const sges = o.sges ?? [];
    const inline = o.inline;
    const length = o.length ?? (inline ? inline.length : sges.reduce((s, g) => s + g.size, 0));
    const slots = o.wqeSize ?? (inline ? 2 + Math.ceil(inline.length / 16) : 2 + sges.length);
    wqe[0] = o.type ?? WQE.SEND;
    wqe[1] = (o.flags ?? FLAG.SIGNAL) | (inline ? FLAG.INLINE : 0);
    wqe[2] = slots;
    v.setUint32(4, o.imm ?? 0, true);
    v.setUint32(8, length, true);
    if (o.remoteVa !== undefined) {
      v.setUint32(16, o.remoteVa % 2 ** 32, true);
      v.setUint32(20, Math.floor(o.remoteVa / 2 ** 32), true);
    }
    v.setUint32(24, o.rkey ?? 0, true);
    if (inline) wqe.set(inline, 32);
    else sges.forEach((g, i) => {
      v.setUint32(32 + 16 * i, g.va % 2 ** 32, true);
      v.setUint32(36 + 16 * i, Math.floor(g.va / 2 ** 32), true);
      v.setUint32(40 + 16 * i, g.lkey, true);
      v.setUint32(44 + 16 * i, g.size, true);
    });
    const n = this.qp.sq.entries;
    const first = this.sqProd;
    const memory = this.qp.sq.memory;
    for (let k = 0; k < Math.max(slots, 2); k++) {
      // Where the slot is in the buffer (the ring's pages may be in any order).
      const at = memory.iova(((first + k) % n) * 16) - this.sq.iova;
      this.sq.bytes.set(wqe.subarray(k * 16, k * 16 + 16), at);
    }
    this.sqProd += o.advance ?? slots;
    if (ring) this.ringSq();
    return first % n;
  }

  ringSq(): void {
    const n = this.qp.sq.entries;
    const [lo, hi] = doorbellHalves(DB.SQ, this.qpn, this.sqProd % n, Math.floor(this.sqProd / n) % 2);
    this.nic.model.engine.doorbell(DOORBELL, lo, hi, true);
  }

  /** Writes a receive WQE (roce_hsi.h rq_wqe_hdr): wr_id = its index, unless given. */
  recv(sges: readonly Sge[], wrId?: number): number {
    const ring = this.qp.rq;
    const n = ring.entries;
    const at = (this.rqProd % n) * ring.entryBytes;
    const b = this.rq.bytes;
    const v = this.rq.view;
    // Where ring offset `x` is in the buffer (the ring's pages may be in any order).
    const o = (x: number) => ring.memory.iova(x) - this.rq.iova;
    for (let x = at; x < at + ring.entryBytes; x += 16) b.fill(0, o(x), o(x) + 16);
    b[o(at)] = WQE.RECV;
    b[o(at) + 2] = 2 + Math.max(1, sges.length);
    v.setUint32(o(at) + 8, (wrId ?? this.rqProd) & 0xfffff, true);
    sges.forEach((g, i) => {
      const s = o(at + 32 + 16 * i);
      v.setUint32(s, g.va % 2 ** 32, true);
      v.setUint32(s + 4, Math.floor(g.va / 2 ** 32), true);
      v.setUint32(s + 8, g.lkey, true);
      v.setUint32(s + 12, g.size, true);
    });
    const index = this.rqProd++;
    const [lo, hi] = doorbellHalves(DB.RQ, this.qpn, this.rqProd % n, Math.floor(this.rqProd / n) % 2);
    this.nic.model.engine.doorbell(DOORBELL, lo, hi, true);
    return index;
  }

  /** Moves the QP to `state` as MODIFY_QP would, and tells the engine. */
  modify(state: EmuQpState): void {
    const from = this.qp.state;
    this.qp.state = state;
    this.nic.model.engine.qpStateChanged(this.qp, from);
  }

  destroy(): void {
    this.qp.destroyed = true;
    this.nic.tables.qps.delete(this.qpn);
    this.nic.model.engine.qpDestroyed(this.qp);
  }
}

export interface NicOptions {
  readonly mac?: Uint8Array;
  readonly ipv4?: Uint8Array;
  readonly mtu?: number;
  readonly seed?: number;
  readonly cable?: CableSpec;
  readonly pcapPath?: string;
  /**
   * 'thread': the model as a worker runs it, its driver in another thread (this one still runs it
   * on the harness's clock): it beats the driver's wake block (`wake`) and its live clock is real.
   */
  readonly mode?: 'stepped' | 'thread';
}

export interface ConnectOptions {
  readonly mtu?: number;
  readonly access?: number;
  readonly timeout?: number;
  readonly retryCnt?: number;
  readonly rnrRetry?: number;
  readonly minRnrTimer?: number;
  readonly destMac?: Uint8Array;
  readonly destIpv4?: Uint8Array;
  readonly sqPsn?: number;
  readonly rqPsn?: number;
}

export interface QpOptions {
  readonly sqEntries?: number;
  /** A variable-size WQE SQ of this many slots. */
  readonly sqSlots?: number;
  readonly rqEntries?: number;
  /**
   * With sqSlots: receive WQEs of (2 + rqSge) 16-byte slots, as CREATE_QP's rq_sge sizes them in
   * variable mode (Linux bnxt_re_get_rwqe_size, rdma-core bnxt_re_get_rq_slots), in RQ pages
   * laid out in reverse order in memory, so a WQE crossing a page is split in bus addresses.
   */
  readonly rqSge?: number;
  /**
   * With sqSlots: where the SQ's pages lie in its buffer (its page i is the buffer's page
   * sqPageOrder[i]; the rest in order), so a WQE whose slots cross a page is split in bus
   * addresses (its slots must be read where each page is).
   */
  readonly sqPageOrder?: readonly number[];
  readonly cqEntries?: number;
  readonly scq?: TestCq;
  readonly rcq?: TestCq;
  readonly pd?: number;
}

let nextIova = 2 ** 32;

export class TestNic {
  readonly model: NicModel;
  readonly tables = new FakeTables();
  readonly config: EmuConfig;
  /** The driver's wake block (wake.ts). */
  readonly wake = new Int32Array(allocWake());
  nowNs = 0;
  private nextQpn = 1;
  private nextCq = 1;
  private nextKey = 0x100;

  constructor(o: NicOptions = {}) {
    this.config = {
      mac: o.mac ?? Uint8Array.from([0x02, 0x62, 0x6e, 0, 0, 1]),
      ipv4: o.ipv4 ?? Uint8Array.from([10, 77, 0, 1]),
      mtu: o.mtu ?? 1500,
      cable: o.cable ?? { kind: 'loop' },
      pcapPath: o.pcapPath,
      seed: o.seed ?? 1,
      mode: o.mode ?? 'stepped',
      // The harness writes P5 doorbells (DPI 0 at 0x10000, DOORBELL): the chip is fixed, whatever
      // RIG_BNXT_CHIP says; variable-size WQE QPs are made directly (qp({ sqSlots })).
      chip: 'BCM57508',
    };
    this.model = new NicModel({
      config: this.config, queue: allocWriteQueue(), bar0: new SharedArrayBuffer(BAR0_BYTES),
      bar2: new SharedArrayBuffer(BAR2_BYTES),
    }, hostServices(this.config.mode, this.wake.buffer as SharedArrayBuffer));
    this.model.engine.attach(this.tables);
    // The engine alone, without the firmware that builds the function's L2 receive path: its
    // frames are let in as if that path existed (the rule itself: test/fidelity-l2-receive.test.ts).
    this.model.engine.roceReceivePath = true;
  }

  /** Zeroed host memory mapped at a fresh IOVA (page aligned). */
  alloc(length: number): Buffer {
    const size = Math.max(PAGE, Math.ceil(length / PAGE) * PAGE);
    const sab = new SharedArrayBuffer(size);
    const iova = nextIova;
    nextIova += size + PAGE; // a hole after each buffer: overruns fault
    this.model.iommu.map(iova, sab, size);
    return { iova, bytes: NodeBuffer.from(sab), view: new DataView(sab) };
  }

  paged(b: Buffer, length: number): PagedMemory {
    const pages: number[] = [];
    for (let off = 0; off < Math.max(length, 1); off += PAGE) pages.push(b.iova + off);
    return new PagedMemory(pages, PAGE, length);
  }

  /** paged(b, length) with its first pages taken from the buffer's pages in `order`. */
  reordered(b: Buffer, length: number, order: readonly number[]): PagedMemory {
    const pages = [...this.paged(b, length).pages];
    const moved = order.map((i) => pages[i]!);
    pages.splice(0, moved.length, ...moved);
    return new PagedMemory(pages, PAGE, length);
  }

  cq(entries: number): TestCq {
    const ring = this.alloc(entries * 32);
    const id = this.nextCq++;
    const cq = new EmuCq(id, 0xc0 + id, 0, new Ring(this.paged(ring, entries * 32), entries, 32), 1);
    this.tables.cqs.set(id, cq);
    return new TestCq(this, cq, ring);
  }

  /** A region over `b` (va = its IOVA). */
  mr(b: Buffer, access: number, pd = 1, length = b.bytes.length): EmuMr {
    const key = this.nextKey++;
    const mr = new EmuMr(key, pd, b.iova, length, access, this.paged(b, length));
    this.tables.mrs.set(key, mr);
    return mr;
  }

  /**
   * A QP in RESET. `sqSlots`: a variable-size WQE QP whose SQ is that many 16-byte slots
   * (CREATE_QP VARIABLE_SIZED_WQE_ENABLED), followed by room for an MSN table of half the power
   * of two; otherwise `sqEntries` static 128-byte WQEs.
   */
  qp(o: QpOptions = {}): TestQp {
    const variable = o.sqSlots !== undefined;
    const sqEntries = o.sqSlots ?? o.sqEntries ?? 64;
    const sqEntryBytes = variable ? 16 : 128;
    const rqEntries = o.rqEntries ?? 64;
    const scq = o.scq ?? this.cq(o.cqEntries ?? 256);
    const rcq = o.rcq ?? this.cq(o.cqEntries ?? 256);
    const sqBytes = sqEntries * (sqEntryBytes + 16);
    const sq = this.alloc(sqBytes);
    const rqSge = variable && o.rqSge !== undefined ? o.rqSge : undefined;
    const rqEntryBytes = rqSge === undefined ? 128 : (2 + rqSge) * 16;
    const rqBytes = rqEntries * rqEntryBytes;
    const rq = this.alloc(rqBytes);
    const rqPages = this.paged(rq, rqBytes);
    const qpn = this.nextQpn++;
    const qp = new EmuQp(
      qpn, o.pd ?? 1, 0xa0 + qpn, 0,
      new Ring(
        variable && o.sqPageOrder !== undefined ? this.reordered(sq, sqBytes, o.sqPageOrder) : this.paged(sq, sqBytes),
        sqEntries, sqEntryBytes,
      ),
      new Ring(rqSge === undefined ? rqPages : new PagedMemory([...rqPages.pages].reverse(), PAGE, rqBytes),
        rqEntries, rqEntryBytes),
      scq.cq, rcq.cq, 6, rqSge ?? 6,
    );
    qp.variableWqe = variable;
    this.tables.qps.set(qpn, qp);
    return new TestQp(this, qp, sq, rq, scq, rcq);
  }

  /** RESET -> INIT -> RTR -> RTS towards QP `destQpn` of the NIC at `peer` (this NIC by default). */
  connect(q: TestQp, destQpn: number, o: ConnectOptions = {}, peer: TestNic = this): void {
    const qp = q.qp;
    qp.access = o.access ?? (ACCESS_QP.LOCAL_WRITE | ACCESS_QP.REMOTE_READ | ACCESS_QP.REMOTE_WRITE);
    q.modify(EmuQpState.INIT);
    qp.pathMtuBytes = o.mtu ?? 1024;
    qp.destQpn = destQpn;
    qp.destMac.set(o.destMac ?? peer.config.mac);
    qp.destGid.fill(0);
    qp.destGid[10] = 0xff;
    qp.destGid[11] = 0xff;
    qp.destGid.set(o.destIpv4 ?? peer.config.ipv4, 12);
    qp.rqPsn = o.rqPsn ?? 0x100;
    qp.minRnrTimer = o.minRnrTimer ?? 1;
    qp.maxDestRdAtomic = 8; // IRRQ slots for IRD 3 (2 x 3 + 2), matching ORD 3 below
    q.modify(EmuQpState.RTR);
    qp.sqPsn = o.sqPsn ?? 0x100;
    qp.timeout = o.timeout ?? 14;
    qp.retryCnt = o.retryCnt ?? 7;
    qp.rnrRetry = o.rnrRetry ?? 7;
    qp.maxRdAtomic = 4; // ORRQ slots for ORD 3
    q.modify(EmuQpState.RTS);
  }

  /** Two QPs of this NIC connected to each other (PSNs agree: each side's sq_psn is the other's rq_psn). */
  pair(o: ConnectOptions & QpOptions = {}): [TestQp, TestQp] {
    const a = this.qp(o);
    const b = this.qp(o);
    this.connect(a, b.qpn, { ...o, sqPsn: 0x1000, rqPsn: 0x2000 });
    this.connect(b, a.qpn, { ...o, sqPsn: 0x2000, rqPsn: 0x1000 });
    return [a, b];
  }

  counters(): EngineCounterReport {
    return this.model.controls.engine.counters();
  }

  /** Runs the model on its virtual clock for `ns`, jumping to its deadlines. */
  runFor(ns: number): void {
    const until = this.nowNs + ns;
    for (let i = 0; i < 10_000_000; i++) {
      this.model.runOnce(this.nowNs);
      const next = this.model.nextDeadlineNs();
      if (next > until) {
        this.nowNs = until;
        this.model.runOnce(this.nowNs);
        return;
      }
      if (next > this.nowNs) this.nowNs = next;
    }
    throw new Error('runFor: the model never went idle');
  }

  /** Runs until `done()` or `limitNs` of virtual time passed; returns whether it was done. */
  runUntil(done: () => boolean, limitNs = 10e9): boolean {
    const until = this.nowNs + limitNs;
    for (let i = 0; i < 10_000_000; i++) {
      this.model.runOnce(this.nowNs);
      if (done()) return true;
      const next = this.model.nextDeadlineNs();
      if (next > until) return false;
      if (next > this.nowNs) this.nowNs = next;
    }
    throw new Error('runUntil: the model never went idle');
  }

  close(): void {
    this.model.close();
  }
}

/** Bytes that name their position and a seed, so misplaced or repeated bytes show. */
export function pattern(length: number, seed: number): NodeBuffer {
  const b = NodeBuffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (i * 7 + seed * 13 + (i >> 8)) & 0xff;
  return b;
}
