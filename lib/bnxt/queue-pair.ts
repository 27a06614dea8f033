/**
 * A reliable-connected queue pair at the hardware interface: the commands that create, connect
 * and destroy it (CREATE_CQ, CREATE_QP, MODIFY_QP, DESTROY_*), on top of its posts
 * (qp-posts.ts: WQEs and doorbells) and its completions (qp-completions.ts: CQEs and the
 * failure rules). Argument checks live in lib/qp.ts; this module trusts them.
 */
import type { DmaBuffer, Mmio } from '../../drivers/device.ts';
import * as R from '../../firmware-hwrm/roce/index.ts';
import type { Values } from '../../firmware-hwrm/layout.ts';
import { ok, err, type Result } from '../result.ts';
import type { BnxtFunction } from './bringup.ts';
import type { RoceDevice } from './roce-device.ts';
import { createQpResources, type QpResources } from './qp-resources.ts';
import { DETACHED, giveEntryLengths } from './entry-lengths.ts';
import { legalTransition, transitionMask, STATE_CODE, type DriverQpState } from './qp-state.ts';
import { QpPosts } from './qp-posts.ts';
import * as Q from './roce-commands.ts';

export { RING_ENTRIES, RING_ROOM, Side, POLL_NONE, POLL_ERROR } from './qp-completions.ts';
export type { SgeSource } from './qp-posts.ts';
/** Outstanding RDMA reads each way (ORD / IRD). */
export const READ_DEPTH = 16;
/** Local ACK timeout 14: 4.096 us x 2^14 = 67 ms; retries 7; RNR retries 7 = forever. */
export const ACK_TIMEOUT = 14;
export const RETRY_COUNT = 7;
export const RNR_RETRY_FOREVER = 7;
/** RNR timer code 1 = 0.01 ms, the smallest delay (min RNR timer). */
export const MIN_RNR_TIMER = 1;

type ModifyFields = Partial<Values<(typeof R.CmdqModifyQp)['fields']>>;

export interface ConnectParams {
  readonly destQp: number;
  readonly destPsn: number;
  readonly destGid: Uint8Array;
  readonly destMac: Uint8Array;
  readonly pathMtu: number;
  readonly remoteRead: boolean;
}

export class BnxtQp extends QpPosts {
  readonly psn: number = 0;
  state: DriverQpState = 'RESET';
  /** A connect that did not finish (refused or ended by an exception): the next one restarts from RESET. */
  private restart = false;
  destroyed = false;
  /** Set after an exception or refusal during destroy: every later destroy is an error. */
  destroyBroken: string | undefined;
  connected = false;
  remoteRead = false;
  peerQpn = 0;

  /** What the QP holds in the firmware and in memory: destroy unwinds it. */
  private readonly ledger: QpResources['ledger'];
  /** Ring memory (for tests that check where the NIC reads and writes). */
  private readonly sq: QpResources['sq'];
  private readonly rq: QpResources['rq'];

  private constructor(roce: RoceDevice, held: QpResources, doorbells: Mmio, psn: number) {
    super(roce, held, doorbells, psn);
    this.psn = psn;
    this.ledger = held.ledger;
    this.sq = held.sq;
    this.rq = held.rq;
  }

  /** @internal Every DMA buffer the QP holds (rings, their page tables, read queues) until destroyed. */
  get memory(): DmaBuffer[] {
    return this.ledger.buffers();
  }

  /**
   * CREATE_CQ x2, CREATE_QP (RC), MODIFY_QP to INIT. A refusal gives back everything, in
   * reverse; memory the firmware may still name (it went silent, or refused to destroy what
   * names it) is quarantined instead. On an exception everything taken is quarantined.
   */
  static make(func: BnxtFunction, roce: RoceDevice, handle: number): Result<BnxtQp> {
    // A silent firmware would get none of the commands: take nothing it could be left holding.
    if (roce.rcfw.stalled) return err(`Qp.make: ${roce.rcfw.stalled}`);
    const held = createQpResources(func, roce, handle);
    if (!held.ok) return err(`Qp.make: ${held.error}`);
    const { ledger } = held.value;
    return ledger.guard(() => {
      // The first PSN is the device's random draw: crypto-random on hardware, replayable from a
      // seed on a stepped software NIC.
      const qp = new BnxtQp(roce, held.value, func.doorbells, func.device.random.u32() & R.PSN_MASK);
      // MODIFY_QP RESET -> INIT.
      const init = qp.modify('INIT', {});
      if (init.ok) return ok(qp);
      ledger.unwind();
      return err(`Qp.make: ${init.error}`);
    });
  }

  /**
   * MODIFY_QP's read depths: IRRQ and ORRQ slots for IRD and ORD, each capped at the device's
   * maximum (QUERY_FUNC max_qp_rd_atom, max_qp_init_rd_atom); the depths as they are only where
   * the device reports internal queue memory. Linux bnxt_re qplib_fp.c bnxt_qplib_modify_qp
   * (ORD_LIMIT_TO_ORRQ_SLOTS = ORD + 1, IRD_LIMIT_TO_IRRQ_SLOTS = 2 x IRD + 2, qplib_fp.h),
   * ib_verbs.c bnxt_re_modify_qp (caps), BNXT_RE_IQM(dev_cap_flags).
   */
  private get readDepths(): { orrq: number; irrq: number } {
    const caps = this.roce.caps;
    const ord = Math.min(READ_DEPTH, caps.max_qp_init_rd_atom);
    const ird = Math.min(READ_DEPTH, caps.max_qp_rd_atom);
    if ((caps.dev_cap_flags & R.DevCapFlags.INTERNAL_QUEUE_MEMORY) !== 0) return { orrq: ord, irrq: ird };
    return { orrq: R.orrqSlots(ord), irrq: R.irrqSlots(ird) };
  }

  /** One MODIFY_QP, checked against the transition table; `fields` is the caller's fresh object (completed here). */
  private modify(to: DriverQpState, fields: ModifyFields): Result<void> {
    if (!legalTransition(this.state, to)) return err(`MODIFY_QP ${this.state} -> ${to} is not a legal transition`);
    // The fields every MODIFY_QP carries, added to the caller's own fresh object (no copy of it).
    fields.qp_type = R.QpType.RC;
    fields.modify_mask = transitionMask(to);
    fields.qp_cid = this.qpn;
    fields.new_state = STATE_CODE[to];
    if (to === 'INIT') {
      fields.access = R.QpAccess.LOCAL_WRITE;
      fields.pkey = 0xffff;
    }
    const r = this.rcfw.send(Q.MODIFY_QP, fields);
    if (!r.ok) return err(`MODIFY_QP to ${to}: ${r.error}`);
    this.state = to;
    return ok();
  }

  /** RESET -> INIT -> RTR -> RTS with the spec's values; restarts from RESET after a broken attempt. */
  connect(p: ConnectParams): Result<void> {
    if (this.state !== 'INIT' || this.restart) {
      const reset = this.modify('RESET', {});
      if (!reset.ok) return reset;
      const init = this.modify('INIT', {});
      if (!init.ok) return init;
    }
    this.restart = true; // cleared only if every step succeeds (an exception leaves it set)
    const rtr = this.modify('RTR', {
      access: R.QpAccess.LOCAL_WRITE | (p.remoteRead ? R.QpAccess.REMOTE_READ : 0),
      network_type: R.NetworkType.ROCEV2_IPV4, dgid: p.destGid, sgid_index: this.roce.gidIndex, hop_limit: 64,
      traffic_class: 0, flow_label: 0, dest_mac: p.destMac, vlan_id: 0xfff, path_mtu: R.pathMtuCode(p.pathMtu),
      rq_psn: p.destPsn, min_rnr_timer: MIN_RNR_TIMER, max_dest_rd_atomic: this.readDepths.irrq, dest_qp_id: p.destQp,
    });
    if (!rtr.ok) return rtr;
    const rts = this.modify('RTS', {
      timeout: ACK_TIMEOUT, retry_cnt: RETRY_COUNT, rnr_retry: RNR_RETRY_FOREVER, sq_psn: this.psn,
      max_rd_atomic: this.readDepths.orrq,
    });
    if (!rts.ok) return rts;
    this.mtuShift = 31 - Math.clz32(p.pathMtu);
    this.remoteRead = p.remoteRead;
    this.peerQpn = p.destQp;
    this.connected = true;
    this.restart = false;
    return ok();
  }

  /**
   * DESTROY_QP, then the CQs, then the memory, each only after the firmware confirmed. A
   * refusal or silence ends it: the rings stay allocated (quarantined) until the NIC is
   * closed, and every later destroy is an error.
   */
  destroy(): Result<void> {
    this.destroyed = true;
    this.connected = false;
    // Its rings are gone (or no longer the driver's): no entry is due, so poll and wait read
    // none of that memory again, which a new queue pair may own (docs/api.md, "After destroy").
    this.sqTaken = this.sqProd;
    this.rqTaken = this.rqProd;
    this.destroyBroken = 'an earlier destroy did not finish'; // stays if an exception ends it
    const failures = this.ledger.unwind({ stopAtRefusal: true });
    if (failures.length > 0) {
      this.ledger.abandon(); // the firmware keeps part of it, which may name any of the rings
      this.destroyBroken = failures[0]!;
      return err(`Qp.destroy: ${failures[0]!}`);
    }
    this.destroyBroken = undefined;
    this.rcfw.forgetQp(this.qpn);
    // Nothing is due any more (above): the entry lengths go back for the next queue pair.
    giveEntryLengths(this.sqLength);
    giveEntryLengths(this.rqLength);
    this.sqLength = this.rqLength = DETACHED;
    return ok();
  }
}
