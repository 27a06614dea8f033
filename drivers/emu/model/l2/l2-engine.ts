/**
 * The L2 side of the function as Linux's bnxt_en drives it: its completion rings and
 * notification queues (NQs), their doorbells and the MSI-X vector each NQ raises.
 *
 * The notification chain a P5 follows (Linux bnxt.c bnxt_poll_p5, __bnxt_poll_cqs_done,
 * bnxt_hwrm_handler): an entry lands in a completion ring; if that ring is armed
 * (DBR_TYPE_CQ_ARMALL), one CQ notification (nqe_cn with the ring's cq_handle) goes to its NQ
 * and the arm is spent; if the NQ is armed (DBR_TYPE_NQ_ARM), its vector (the RING_ALLOC
 * logical_id) fires once and that arm is spent too. An arm doorbell on a ring that already
 * holds unread entries fires at once. The valid bit of each entry is the wrap parity: 1 on the
 * first pass (CMP_VALID, NQ_CMP_VALID in bnxt.h).
 */
import type { ModelBus } from '../bus.ts';
import type { FunctionResources } from '../firmware/function-resources.ts';
import { l2Of } from '../firmware/hwrm-l2.ts';
import { RING_ALLOC_REQ_INT_MODE, RING_ALLOC_REQ_RING_TYPE } from '../../../../firmware-hwrm/hwrm/ring.ts';
import { elementAddress, type RingMemory } from './ring-address.ts';
import { ringPhase, ringSlot, ringSlotsForward } from '../../../../firmware-hwrm/ring.ts';

type L2RingView = RingMemory & { readonly id: number; readonly peerRingId: number };

/** Doorbell fields, high word (Linux bnxt.h DBR_*: path bit 56, type bits 63:60, xid 51:32). */
const DBR_PATH_L2 = 1 << 24;
const DB_TYPE = {
  SQ: 0x0, RQ: 0x1, SRQ: 0x2, CQ: 0x4, CQ_ARMSE: 0x5, CQ_ARMALL: 0x6, CQ_ARMENA: 0x7, NQ: 0xa, NQ_ARM: 0xb,
  NQ_MASK: 0xe, NULL: 0xf,
} as const;
const CMPL_TYPE_HWRM_DONE = 0x20;
const CMPL_TYPE_HWRM_ASYNC_EVENT = 0x2e;
const NQ_CN_TYPE_CQ_NOTIFICATION = 0x30;

/** Linux bnxt.h tx_bd: len_flags_type word. */
const TX_BD_TYPE_LONG = 0x10;
const TX_BD_FLAGS_NO_CMPL = 1 << 7;
const TX_BD_CNT_SHIFT = 8;
const CMPL_TYPE_TX_L2 = 0x00;
const CMPL_TYPE_RX_L2 = 17;
const BROADCAST_OR_MULTICAST = 0x01;
/** CFA_L2_SET_RX_MASK_REQ_MASK bits (bnxt_hsi.h). */
const RX_MASK = { MCAST: 0x2, ALL_MCAST: 0x4, BCAST: 0x8, PROMISCUOUS: 0x10 } as const;
const MAX_FRAME = 9216 + 18;

interface CompletionCounts {
  /** Entries the model wrote (free-running). */
  produced: number;
  /** The driver's consumer index from its last doorbell (position in the ring). */
  consumer: number;
  armed: boolean;
}

export interface L2Counters {
  doorbells: number;
  rejected: number;
  completions: number;
  notifications: number;
  interrupts: number;
}

export class L2Engine {
  private readonly cursors = new Map<number, CompletionCounts>();
  readonly counters: L2Counters = { doorbells: 0, rejected: 0, completions: 0, notifications: 0, interrupts: 0 };
  private readonly entry = new Uint8Array(16);
  private readonly entryView = new DataView(this.entry.buffer);

  private readonly frame = new Uint8Array(MAX_FRAME);
  /** TX BDs taken per TX ring (free-running), and frames sent. */
  private readonly txTaken = new Map<number, number>();
  /** RX buffers posted (the driver's producer, free-running) and taken, per RX ring. */
  private readonly rxPosted = new Map<number, number>();
  private readonly rxTaken = new Map<number, number>();
  framesReceived = 0;

  /** Frames the L2 side dropped on receive: no VNIC takes the address, no buffer posted, too long. */
  readonly rxDrops = { noVnic: 0, noBuffer: 0, tooLong: 0 };
  framesSent = 0;
  framesDropped = 0;

  constructor(
    private readonly bus: ModelBus,
    private readonly fn: FunctionResources,
    /** Raises MSI-X vector `vector` (false if it cannot: no eventfd, MSI-X off). */
    private readonly raise: (vector: number) => boolean,
    /** Puts a frame on the port's cable. */
    private readonly transmit: (frame: Uint8Array, length: number) => void = () => {},
  ) {}

  /** A function reset: the rings are gone with it, so are their positions here. */
  reset(): void {
    this.cursors.clear();
    this.txTaken.clear();
    this.rxPosted.clear();
    this.rxTaken.clear();
  }

  /** A 64-bit BAR2 doorbell; true if it was an L2 doorbell (taken here), false if not ours. */
  doorbell(lo: number, hi: number): boolean {
    if ((hi & (3 << 24)) !== DBR_PATH_L2) return false;
    const type = hi >>> 28;
    const xid = hi & 0xfffff;
    const index = lo & 0xffffff;
    this.counters.doorbells++;
    switch (type) {
      case DB_TYPE.CQ:
      case DB_TYPE.CQ_ARMALL:
      case DB_TYPE.CQ_ARMSE: {
        const ring = this.cmplRing(xid);
        if (!ring || index >= ring.length) { this.counters.rejected++; return true; }
        const c = this.cursor(xid);
        c.consumer = index;
        if (type !== DB_TYPE.CQ) {
          c.armed = true;
          if (this.unread(c, ring.length)) this.notifyCq(xid);
        }
        return true;
      }
      case DB_TYPE.NQ:
      case DB_TYPE.NQ_ARM: {
        const nq = this.fn.rings.get(xid);
        if (!nq || index >= nq.length) { this.counters.rejected++; return true; }
        const c = this.cursor(xid);
        c.consumer = index;
        if (type === DB_TYPE.NQ_ARM) {
          c.armed = true;
          if (this.unread(c, nq.length)) this.fire(xid);
        }
        return true;
      }
      case DB_TYPE.SQ: {
        const ring = l2Of(this.fn).rings.get(xid);
        if (!ring || ring.type !== RING_ALLOC_REQ_RING_TYPE.TX ||
          index >= ring.length) { this.counters.rejected++; return true; }
        this.transmitUpTo(ring, index);
        return true;
      }
      case DB_TYPE.SRQ: {
        // An RX producer (P5 rings RX rings with the SRQ doorbell type): buffers up to index - 1 are posted.
        const ring = l2Of(this.fn).rings.get(xid);
        if (!ring || ring.type !== RING_ALLOC_REQ_RING_TYPE.RX ||
          index >= ring.length) { this.counters.rejected++; return true; }
        const posted = this.rxPosted.get(xid) ?? 0;
        this.rxPosted.set(xid, posted + ringSlotsForward(posted, index, ring.length));
        return true;
      }
      default:
        // CQ_ARMENA, NQ_MASK, NULL: counted.
        this.counters.rejected++;
        return true;
    }
  }


  /**
   * A TX producer doorbell: every packet from the last one taken up to `index` (a ring
   * position) is gathered from its BDs and put on the cable, then completed on the ring's
   * completion ring with the first BD's opaque, unless that BD asked for no completion
   * (TX_BD_FLAGS_NO_CMPL: bnxt_en then learns the progress from a later packet's opaque).
   * BDs (bnxt.h): a first BD of type LONG is followed by a tx_bd_ext, then one BD per fragment;
   * the first BD's BD_CNT counts them all.
   */
  private transmitUpTo(ring: L2RingView, index: number): void {
    const iommu = this.bus.iommu;
    let taken = this.txTaken.get(ring.id) ?? 0;
    const pending = ringSlotsForward(taken, index, ring.length);
    const end = taken + pending;
    while (taken < end) {
      const first = elementAddress(iommu, ring, taken);
      if (first < 0 || !iommu.check(first, 16)) { this.framesDropped++; taken = end; break; }
      const word = iommu.read32(first);
      const opaque = iommu.read32(first + 4);
      const bds = Math.max(1, (word >>> TX_BD_CNT_SHIFT) & 0x1f);
      const long = (word & 0x3f) === TX_BD_TYPE_LONG;
      let length = 0;
      let ok = true;
      for (let b = 0; b < bds && ok; b++) {
        if (long && b === 1) continue; // tx_bd_ext: offload hints, no data
        const at = elementAddress(iommu, ring, taken + b);
        if (at < 0) { ok = false; break; }
        const len = iommu.read32(at) >>> 16;
        const addr = iommu.read64(at + 8);
        if (length + len > MAX_FRAME || !iommu.readInto(addr, len, this.frame, length)) ok = false;
        else length += len;
      }
      taken += bds;
      if (ok && length >= 14) { this.transmit(this.frame, length); this.framesSent++; }
      else this.framesDropped++;
      if ((word & TX_BD_FLAGS_NO_CMPL) === 0) {
        const e = this.entryView;
        this.entry.fill(0);
        e.setUint32(0, CMPL_TYPE_TX_L2, true);
        e.setUint32(4, opaque, true);
        if (this.cmplRing(ring.peerRingId)) this.writeCmpl(ring.peerRingId, true);
      }
    }
    this.txTaken.set(ring.id, taken);
  }

  /**
   * A frame from the port that is not RoCEv2 for it: to the VNIC whose L2 filter names its
   * destination MAC (broadcast and multicast to the VNIC whose RX mask takes them, anything
   * with PROMISCUOUS), into the next buffer posted on the VNIC's default RX ring, completed by
   * an rx_cmp and rx_cmp_ext pair on its default completion ring (bnxt.h; no checksum or RSS
   * offload reported, so the kernel checks in software). Dropped and counted otherwise.
   */
  receive(frame: Uint8Array, length: number): void {
    const l2 = l2Of(this.fn);
    let vnic: { defaultRxRing: number; defaultCmplRing: number; rxMask: number } | undefined;
    for (const f of l2.filters.values()) {
      if (f.mac[0] === frame[0] && f.mac[1] === frame[1] && f.mac[2] === frame[2] && f.mac[3] === frame[3] &&
        f.mac[4] === frame[4] && f.mac[5] === frame[5]) { vnic = l2.vnics.get(f.vnic); break; }
    }
    if (!vnic) {
      const group = (frame[0]! & BROADCAST_OR_MULTICAST) !== 0;
      const broadcast = group && frame[0] === 0xff && frame[1] === 0xff && frame[2] === 0xff && frame[3] === 0xff &&
        frame[4] === 0xff && frame[5] === 0xff;
      for (const v of l2.vnics.values()) {
        const m = v.rxMask;
        if ((m & RX_MASK.PROMISCUOUS) !== 0 || (broadcast && (m & RX_MASK.BCAST) !== 0) ||
          (group && !broadcast && (m & (RX_MASK.MCAST | RX_MASK.ALL_MCAST)) !== 0)) { vnic = v; break; }
      }
    }
    const rx = vnic ? l2.rings.get(vnic.defaultRxRing) : undefined;
    if (!vnic || !rx || !this.cmplRing(vnic.defaultCmplRing)) { this.rxDrops.noVnic++; return; }
    const taken = this.rxTaken.get(rx.id) ?? 0;
    if (taken >= (this.rxPosted.get(rx.id) ?? 0)) { this.rxDrops.noBuffer++; return; }
    const iommu = this.bus.iommu;
    const bd = elementAddress(iommu, rx, taken);
    if (bd < 0 || !iommu.check(bd, 16)) { this.rxDrops.noBuffer++; return; }
    const bufferBytes = iommu.read32(bd) >>> 16;
    const opaque = iommu.read32(bd + 4);
    const addr = iommu.read64(bd + 8);
    this.rxTaken.set(rx.id, taken + 1);
    if (length > bufferBytes || !iommu.writeFrom(addr, frame, 0, length)) { this.rxDrops.tooLong++; return; }
    this.framesReceived++;
    const ring = this.cmplRing(vnic.defaultCmplRing)!;
    const c = this.cursor(ring.id);
    // The extension (second slot) first, so the driver never sees a valid rx_cmp before its rx_cmp_ext.
    const e = this.entryView;
    const start = c.produced;
    this.entry.fill(0);
    c.produced = start + 1;
    const extOk = this.writeEntry(ring, c);
    c.produced = start;
    if (!extOk) return;
    this.entry.fill(0);
    e.setUint32(0, ((length << 16) | CMPL_TYPE_RX_L2) >>> 0, true);
    e.setUint32(4, opaque, true);
    if (!this.writeEntry(ring, c)) return;
    c.produced = start + 2;
    this.counters.completions++;
    if (c.armed) this.notifyCq(ring.id);
    this.bus.notifyDriver();
  }

  /**
   * The firmware answered an HWRM request that named completion ring `ringId` in cmpl_ring:
   * an HWRM_DONE completion with its sequence id goes to that ring (Linux bnxt_hwrm.c waits
   * for it through the ring's interrupt). An NQ named there takes the completion directly.
   */
  hwrmDone(ringId: number, seqId: number): void {
    const e = this.entryView;
    this.entry.fill(0);
    e.setUint16(0, CMPL_TYPE_HWRM_DONE, true);
    e.setUint16(2, seqId, true);
    if (this.cmplRing(ringId)) this.writeCmpl(ringId, false);
    else if (this.fn.rings.has(ringId)) this.writeNqEntry(ringId);
  }

  /** An HWRM async event (hwrm_async_event_cmpl) to the function's async event ring. */
  asyncEvent(ringId: number, eventId: number, data1: number, data2: number): void {
    const e = this.entryView;
    this.entry.fill(0);
    e.setUint16(0, CMPL_TYPE_HWRM_ASYNC_EVENT, true);
    e.setUint16(2, eventId, true);
    e.setUint32(4, data2 >>> 0, true);
    e.setUint32(12, data1 >>> 0, true);
    if (this.cmplRing(ringId)) this.writeCmpl(ringId, false);
    else if (this.fn.rings.has(ringId)) this.writeNqEntry(ringId);
  }

  private cmplRing(id: number) {
    const r = l2Of(this.fn).rings.get(id);
    return r && r.type === RING_ALLOC_REQ_RING_TYPE.L2_CMPL ? r : undefined;
  }

  private cursor(id: number): CompletionCounts {
    let c = this.cursors.get(id);
    if (!c) { c = { produced: 0, consumer: 0, armed: false }; this.cursors.set(id, c); }
    return c;
  }

  private unread(c: CompletionCounts, length: number): boolean {
    return ringSlot(c.produced, length) !== ringSlot(c.consumer, length);
  }

  /** Writes this.entry at the ring's producer with the valid bit of this pass, valid dword last. */
  private writeEntry(ring: RingMemory, c: CompletionCounts): boolean {
    const at = elementAddress(this.bus.iommu, ring, c.produced);
    if (at < 0) return false;
    const e = this.entryView;
    e.setUint32(8, (e.getUint32(8, true) & ~1) | ringPhase(c.produced, ring.length), true);
    const iommu = this.bus.iommu;
    if (!iommu.writeFrom(at, this.entry, 0, 8) || !iommu.writeFrom(at + 12, this.entry, 12, 4)) return false;
    iommu.write32Release(at + 8, e.getUint32(8, true));
    c.produced++;
    return true;
  }

  private writeCmpl(ringId: number, _dataPath: boolean): void {
    const ring = this.cmplRing(ringId)!;
    const c = this.cursor(ringId);
    if (!this.writeEntry(ring, c)) return;
    this.counters.completions++;
    if (c.armed) this.notifyCq(ringId);
    this.bus.notifyDriver();
  }

  /** One CQ notification for completion ring `ringId` to its NQ; the ring's arm is spent. */
  private notifyCq(ringId: number): void {
    const ring = this.cmplRing(ringId);
    if (!ring) return;
    this.cursor(ringId).armed = false;
    const e = this.entryView;
    this.entry.fill(0);
    e.setUint16(0, NQ_CN_TYPE_CQ_NOTIFICATION, true);
    e.setUint32(4, ring.cqHandle % 2 ** 32, true);
    e.setUint32(12, Math.floor(ring.cqHandle / 2 ** 32), true);
    this.counters.notifications++;
    this.writeNqEntry(ring.peerRingId);
  }

  private writeNqEntry(nqId: number): void {
    const nq = this.fn.rings.get(nqId);
    if (!nq) return;
    const c = this.cursor(nqId);
    if (!this.writeEntry(nq, c)) return;
    if (c.armed) this.fire(nqId);
  }

  /** The NQ's vector fires once; its arm is spent. */
  private fire(nqId: number): void {
    const nq = this.fn.rings.get(nqId);
    if (!nq) return;
    this.cursor(nqId).armed = false;
    if (nq.intMode !== RING_ALLOC_REQ_INT_MODE.POLL && this.raise(nq.logicalId)) this.counters.interrupts++;
  }

  /** FUNC_RESET or ring reuse: cursors start again. */
  forget(ringId: number): void {
    this.cursors.delete(ringId);
  }
}
