/**
 * Writing completions (roce_hsi.h struct cq_base, cq_req, cq_res_rc): 32-byte CQEs into the CQ
 * ring by DMA, every word but the one holding the toggle bit first, that word last with a release store,
 * so a driver that sees the new toggle sees the whole CQE. The toggle is 1 on the ring's
 * first lap and flips on every lap after (the consumer expects 1 first: Linux bnxt_re qplib_fp.h
 * CQE_CMP_VALID, rdma-core providers/bnxt_re bnxt_re_is_cqe_valid).
 *
 * A CQE is never written over one the driver has not consumed: the CQ doorbells tell the
 * consumer index (free-running modulo 2 x entries, the epoch bit being the lap parity); a
 * full CQ refuses the write and the caller fails the QP, as a CQ overflow does on hardware.
 * CQ_ARMALL / CQ_ARMSE doorbells ask for one NQ notification on the next (solicited) CQE.
 */
import { CQE_BYTES, CqeType } from '../../../../firmware-hwrm/roce/cqe.ts';
import * as Cqe from '../../../../firmware-hwrm/roce/cqe.g.ts';
import type { EngineCore } from './core.ts';
import type { EmuCq } from '../objects.ts';
import type { QpTransport } from './transport.ts';
import { entriesAhead, ringPhase, ringSlot } from '../../../../firmware-hwrm/ring.ts';

const WORDS = Cqe.CQ_BASE_WORDS;
/** The word with the toggle bit (cq_base's trailer), written last. */
const TRAILER = Cqe.CQ_BASE_TOGGLE_WORD;
const TOGGLE_BITS = Cqe.CQ_BASE_TOGGLE_MASK << Cqe.CQ_BASE_TOGGLE_SHIFT;
/** The fault hooks' CQE being written, as little-endian words (the data path writes into the ring itself). */
const cqe = new Uint32Array(WORDS);

/** Free CQE slots: ring entries minus CQEs written and not yet consumed. */
export function cqRoom(cq: EmuCq): number {
  const n = cq.ring.entries;
  const used = entriesAhead(cq.producer, cq.consumer, n);
  return used > n ? 0 : n - used;
}

/** Unconsumed CQEs. */
export function cqUsed(cq: EmuCq): number {
  return cq.ring.entries - cqRoom(cq);
}

/**
 * A CQ / CQ_ARM* doorbell's consumer index. Refused (false) if it lies outside the ring or
 * would move the consumer back, or past the producer.
 */
export function cqConsumerDoorbell(cq: EmuCq, index: number, epoch: number): boolean {
  const n = cq.ring.entries;
  if (index >= n) return false;
  const consumer = index + (epoch ? n : 0);
  const usedNow = entriesAhead(cq.producer, cq.consumer, n);
  const usedAfter = entriesAhead(cq.producer, consumer, n);
  if (usedAfter > n || (usedNow <= n && usedAfter > usedNow)) return false;
  cq.consumer = consumer;
  return true;
}

/** CQ_ARMALL (any CQE) or CQ_ARMSE (solicited or error CQEs only). */
export function armCq(core: EngineCore, cq: EmuCq, solicitedOnly: boolean): void {
  cq.armed = true;
  if (solicitedOnly) core.armedSolicitedOnly.add(cq.id);
  else core.armedSolicitedOnly.delete(cq.id);
  // CQEs the driver has not consumed yet would never be announced: announce them now.
  if (!solicitedOnly && cqUsed(cq) > 0) notify(core, cq);
}

function notify(core: EngineCore, cq: EmuCq): void {
  core.tables.postCqNotification(cq);
  cq.armed = false;
  core.armedSolicitedOnly.delete(cq.id);
  core.counters.cqNotifications++;
}

/** Where nextCqe found the CQE slot: its first word in the words returned, and the toggle it takes. */
let cqeAt = 0;
let cqeToggle = 0;

/**
 * The host memory words of `cq`'s next CQE (its first word at cqeAt; cqeToggle set), or
 * undefined if the CQ is full, destroyed or unreachable. One mapping lookup for the whole entry
 * (32-byte aligned, inside one page); a ring of power-of-two depth (every one the driver makes)
 * takes its slot, room and toggle by masks, any other depth by the ring.ts divisions.
 */
function nextCqe(core: EngineCore, cq: EmuCq): Uint32Array | undefined {
  if (cq.destroyed) return undefined;
  const n = cq.ring.entries;
  const p = cq.producer;
  let slot: number;
  if ((n & (n - 1)) === 0) {
    // Counts run free past 2^32: a power of two divides 2^32, so ToInt32 keeps slot, lap parity and room.
    if (((p - cq.consumer) & (2 * n - 1)) >= n) return undefined;
    slot = p & (n - 1);
    cqeToggle = ((p >>> (31 - Math.clz32(n))) & 1) ^ 1;
  } else {
    if (cqRoom(cq) === 0) return undefined;
    slot = ringSlot(p, n);
    cqeToggle = ringPhase(p, n);
  }
  const memory = cq.ring.memory;
  const offset = cq.ring.entryOffset(slot);
  const iommu = core.iommu;
  const u = iommu.wordsIn(memory, offset, CQE_BYTES);
  if (u === undefined) {
    core.counters.dmaFaults++;
    return undefined;
  }
  cqeAt = iommu.wordOffset;
  iommu.notePagedWrite(memory, offset, CQE_BYTES);
  return u;
}

/**
 * Ends the CQE whose other words are in place: the word with the toggle (`trailer`, its toggle
 * bit clear) last, with a release store, so a reader that sees it sees the rest; then the
 * producer moves and an armed CQ notifies.
 */
function publishCqe(core: EngineCore, cq: EmuCq, u: Uint32Array, trailer: number, solicited: boolean): true {
  const word = (trailer & ~TOGGLE_BITS) | (cqeToggle << Cqe.CQ_BASE_TOGGLE_SHIFT);
  // A driver in another thread must not see the toggle before the words it covers: a release
  // store (Atomics.store, sequentially consistent; its reader's Atomics.load is the acquire). A
  // driver in this thread reads the CQE only after this run returns to it, so program order
  // already puts every word before its read, and the plain store is as good (the locked store
  // drains the store buffer: 20-30 ns a CQE here, two CQEs a message).
  if (core.driverElsewhere) Atomics.store(u, cqeAt + TRAILER, word);
  else u[cqeAt + TRAILER] = word;
  cq.producer++;
  core.counters.cqesWritten++;
  core.bus.notifyDriver();
  if (cq.armed && (solicited || !core.armedSolicitedOnly.has(cq.id))) notify(core, cq);
  return true;
}

/** Writes the scratch `cqe` (trailer type/status/flags set, toggle not) into `cq`. False if full or unreachable. */
function writeCqe(core: EngineCore, cq: EmuCq, solicited: boolean): boolean {
  const u = nextCqe(core, cq);
  if (u === undefined) return false;
  const w = cqeAt;
  for (let i = 0; i < WORDS; i++) if (i !== TRAILER) u[w + i] = cqe[i]!;
  return publishCqe(core, cq, u, cqe[TRAILER]!, solicited);
}

/**
 * roce_hsi.h: struct cq_req. `sqConsIdx`: the send WQE index after the one completed (as Linux
 * bnxt_re qplib_fp.c bnxt_qplib_cq_process_req reads it). Written straight into the ring.
 */
export function writeReqCqe(core: EngineCore, t: QpTransport, sqConsIdx: number, status: number): boolean {
  if (!core.mayWrite(t)) return false;
  const qp = t.qp;
  const cq = qp.scq;
  const u = nextCqe(core, cq);
  if (u === undefined) return false;
  const w = cqeAt;
  Cqe.setCqReqQpHandle(u, w, qp.handleLo, qp.handleHi);
  Cqe.setCqReqWord2(u, w, Cqe.cqReqWord2(sqConsIdx & 0xffff));
  Cqe.setCqReqWord3(u, w, 0);
  Cqe.setCqReqWord4(u, w, 0);
  Cqe.setCqReqWord5(u, w, 0);
  Cqe.setCqReqWord7(u, w, 0);
  return publishCqe(core, cq, u, Cqe.cqReqWord6(0, CqeType.REQ, 0, status), status !== 0);
}

/** roce_hsi.h: struct cq_res_rc. `imm` as the LE number equal to the wire value; `wrId` from the RQ WQE. */
export function writeResCqe(
  core: EngineCore, t: QpTransport, length: number, imm: number, status: number, flags: number, wrId: number,
  solicited: boolean,
): boolean {
  if (!core.mayWrite(t)) return false;
  const qp = t.qp;
  const cq = qp.rcq;
  const u = nextCqe(core, cq);
  if (u === undefined) return false;
  const w = cqeAt;
  Cqe.setCqResRcLength(u, w, length);
  Cqe.setCqResRcImmDataOrInvRKey(u, w, imm);
  Cqe.setCqResRcQpHandle(u, w, qp.handleLo, qp.handleHi);
  Cqe.setCqResRcMrHandle(u, w, 0, 0);
  Cqe.setCqResRcWord7(u, w, Cqe.cqResRcWord7(wrId & 0xfffff));
  return publishCqe(core, cq, u, Cqe.cqResRcWord6(0, CqeType.RES_RC, status, flags), solicited || status !== 0);
}

/** Fault hook: a CQE of a type no driver takes (type 7 is undefined in cq_base). */
export function writeUnknownCqe(core: EngineCore, cq: EmuCq): boolean {
  cqe.fill(0);
  Cqe.setCqBaseWord6(cqe, 0, Cqe.cqBaseWord6(0, 0x7, 0));
  return writeCqe(core, cq, true);
}

/** Fault hook: a CQE of the caller's words (the toggle bit is set here), for malformed-completion tests. */
export function writeRawCqe(core: EngineCore, cq: EmuCq, words: readonly number[]): boolean {
  for (let i = 0; i < WORDS; i++) cqe[i] = words[i]! >>> 0;
  return writeCqe(core, cq, true);
}
