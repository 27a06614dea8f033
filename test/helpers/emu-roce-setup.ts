/**
 * A software NIC driven by raw bytes, for the RoCE firmware tests: the model runs stepped in
 * this thread; BAR0 writes go through its write queue as a driver's would; DMA buffers are
 * SharedArrayBuffers mapped into its IOMMU. `bringUp` does the HWRM part of a P5 bring-up
 * (VER_GET, FUNC_DRV_RGTR, backing store, the CREQ and an NQ, a RoCE statistics context);
 * `TestCmdq` is a minimal RCFW channel: it posts commands and reads the CREQ byte by byte.
 */
import { NicModel, BAR0_BYTES, BAR2_BYTES } from '../../drivers/emu/model/nic-model.ts';
import { allocWriteQueue, WriteKind } from '../../drivers/emu/model/write-queue.ts';
import { WriteQueueProducer } from '../../drivers/emu/host/write-queue-producer.ts';
import { allocWake } from '../../drivers/emu/host/wake.ts';
import { hostServices } from '../../drivers/emu/host/services.ts';
import type { EmuConfig, FirmwareName } from '../../drivers/emu/model/config.ts';
import * as H from '../../firmware-hwrm/hwrm/index.ts';
import type { FieldSpec, Layout, Values } from '../../firmware-hwrm/layout.ts';
import * as R from '../../firmware-hwrm/roce/index.ts';
import type { EmuQp, EngineHooks } from '../../drivers/emu/model/objects.ts';

export interface DmaBuf {
  readonly iova: number;
  readonly length: number;
  readonly bytes: Uint8Array;
  readonly view: DataView;
}

export class EmuRig {
  readonly model: NicModel;
  /** What the firmware told the engine (the engine's own hooks are replaced by recorders). */
  readonly hookCalls: {
    readonly hook: 'qpStateChanged' | 'qpDestroyed'; readonly qpn: number; readonly from?: number; readonly to?: number;
  }[] = [];
  private readonly queue: WriteQueueProducer;
  private nextIova = 2 ** 32;
  private nowNs = 0;
  private seq = 0;
  private readonly resp: DmaBuf;
  private readonly shortReq: DmaBuf;

  constructor(options: { mtu?: number; firmware?: FirmwareName; chip?: string } = {}) {
    const config: EmuConfig = {
      mac: Uint8Array.from([0x02, 0x62, 0x6e, 0, 0, 1]), ipv4: Uint8Array.from([10, 0, 0, 1]), mtu: options.mtu ?? 1500,
      cable: { kind: 'loop' }, pcapPath: undefined, seed: 1, mode: 'stepped', firmware: options.firmware,
      // The rig speaks P5's flows by hand (context memory V1, doorbells at 0x10000): a BCM57508
      // unless a test names another chip, whatever RIG_BNXT_CHIP says.
      chip: options.chip ?? 'BCM57508',
    };
    const queue = allocWriteQueue();
    this.model = new NicModel({
      config, queue, bar0: new SharedArrayBuffer(BAR0_BYTES), bar2: new SharedArrayBuffer(BAR2_BYTES),
    }, hostServices(config.mode, allocWake()));
    this.queue = new WriteQueueProducer(queue, () => this.run());
    // The firmware holds the engine as its EngineHooks: recorders take the engine's place.
    const hooks: EngineHooks = this.model.engine;
    hooks.qpStateChanged = (qp: EmuQp, from: number) => {
      this.hookCalls.push({ hook: 'qpStateChanged', qpn: qp.qpn, from, to: qp.state });
    };
    hooks.qpDestroyed = (qp: EmuQp) => { this.hookCalls.push({ hook: 'qpDestroyed', qpn: qp.qpn }); };
    this.resp = this.alloc(4096);
    this.shortReq = this.alloc(4096);
  }

  /** Lets the model take every queued write. */
  run(): void {
    this.nowNs += 1000;
    this.model.runOnce(this.nowNs);
  }

  bar0Write32(offset: number, value: number): void {
    this.queue.push(WriteKind.Bar0Write32, offset, value >>> 0, 0);
  }

  /** One 64-bit doorbell store into BAR2 (hi << 32 | lo). */
  bar2Doorbell64(offset: number, lo: number, hi: number): void {
    this.queue.push(WriteKind.Bar2Doorbell64, offset, lo >>> 0, hi >>> 0);
  }

  /** Zeroed host memory mapped at a fresh IOVA (4 KiB aligned, never reused). */
  alloc(length: number): DmaBuf {
    const size = Math.max(4096, Math.ceil(length / 4096) * 4096);
    const sab = new SharedArrayBuffer(size);
    const iova = this.nextIova;
    this.nextIova += size + 4096; // a guard page between buffers: running off the end is a fault
    this.model.iommu.map(iova, sab, size);
    return { iova, length: size, bytes: new Uint8Array(sab), view: new DataView(sab) };
  }

  /** Sends one HWRM request (window or short mode) and returns the response bytes; throws on an HWRM error. */
  hwrm<Q extends Record<string, FieldSpec>>(
    cmd: H.HwrmCommand<Q, Record<string, FieldSpec>>, values: Partial<Values<Q>>,
  ): Uint8Array {
    const seqId = this.seq++ & 0xffff;
    const reqType = cmd.req_type;
    const bytes = cmd.request.encode(
      { ...values, req_type: reqType, cmpl_ring: 0xffff, seq_id: seqId, target_id: 0xffff,
        resp_addr: this.resp.iova } as unknown as Partial<Values<Q>>,
    );
    this.resp.bytes.fill(0);
    let window = bytes;
    if (bytes.length > 128) {
      this.shortReq.bytes.set(bytes);
      window = H.HwrmShortInput.encode({
        req_type: reqType, signature: H.SHORT_REQ_SIGNATURE_SHORT_CMD, target_id: 0, size: bytes.length,
        req_addr: this.shortReq.iova,
      });
    }
    const padded = new Uint8Array(Math.ceil(window.length / 4) * 4);
    padded.set(window);
    const dv = new DataView(padded.buffer);
    for (let at = 0; at < padded.length; at += 4) this.bar0Write32(at, dv.getUint32(at, true));
    this.bar0Write32(0x100, 1);
    this.run();
    const out = this.resp.bytes.slice(0, 1024);
    const hdr = H.HwrmOutput.decode(out);
    if (hdr.seq_id !== seqId) throw new Error(`HWRM 0x${reqType.toString(16)}: no response`);
    if (hdr.error_code !== 0) throw new Error(`HWRM 0x${reqType.toString(16)}: error ${hdr.error_code}`);
    return out;
  }
}

export interface BringUpOptions {
  /** Backing-store entries (QPs include QP0/QP1). */
  readonly qpEntries?: number;
  readonly cqEntries?: number;
  readonly mravEntries?: number;
  /** CREQ depth in entries (at least 16) and whether it sits behind a page table. */
  readonly creqDepth?: number;
  readonly creqPaged?: boolean;
  /** Skip parts of the bring-up (to test the firmware's preconditions). */
  readonly noBackingStore?: boolean;
  /** The old driver's MRAV count: a plain entry count, no MRAV_RESERVATION_SPLIT. */
  readonly mravUnsplit?: boolean;
  /** Fast-path TQM rings to enable instead of one per CoS queue. */
  readonly tqmRings?: number;
  /** Hand over context memory left zeroed (the firmware asks for its initializer). */
  readonly uninitialisedContext?: boolean;
  readonly statCtxFlags?: number;
}

export interface HwrmSetup {
  readonly creq: DmaBuf;
  readonly creqDepth: number;
  readonly creqRingId: number;
  /** A second NQ, for CQ notifications. */
  readonly nq: DmaBuf;
  readonly nqDepth: number;
  readonly nqRingId: number;
  readonly statCtxId: number;
}

/**
 * The HWRM steps a P5 bring-up takes before the RoCE channel (as Linux bnxt_en bnxt_fw_init_one and
 * bnxt_re main.c bnxt_re_dev_init take them).
 */
export function bringUp(rig: EmuRig, o: BringUpOptions = {}): HwrmSetup {
  rig.hwrm(H.HWRM_COMMANDS.VER_GET, {
    hwrm_intf_maj: H.HWRM_VERSION_MAJOR, hwrm_intf_min: H.HWRM_VERSION_MINOR, hwrm_intf_upd: H.HWRM_VERSION_UPDATE,
  });
  rig.hwrm(H.HWRM_COMMANDS.FUNC_DRV_RGTR, { os_type: 0 });
  if (!o.noBackingStore) backingStore(rig, o);
  // The new resource manager hands out only what FUNC_CFG reserved: the CREQ and NQ (MSI-X
  // vectors on P5) and the statistics context, as bnxt_en reserves bnxt_re's share.
  const EN = H.FUNC_CFG_REQ_ENABLES;
  rig.hwrm(H.HWRM_COMMANDS.FUNC_CFG, {
    fid: H.HWRM_FID_SELF, enables: EN.NUM_MSIX | EN.NUM_STAT_CTXS, num_msix: 4, num_stat_ctxs: 2,
  });
  const creqDepth = o.creqDepth ?? 64;
  const creq = rig.alloc(creqDepth * 16);
  let creqTable = creq.iova;
  if (o.creqPaged) {
    const table = rig.alloc(4096);
    for (let p = 0; p * 4096 < creqDepth * 16; p++)
      table.view.setBigUint64(p * 8, BigInt(creq.iova + p * 4096) | 1n, true);
    creqTable = table.iova;
  }
  const creqRingId = ringAlloc(rig, creqTable, o.creqPaged ? 1 : 0, creqDepth, 0);
  const nqDepth = 64;
  const nq = rig.alloc(nqDepth * 16);
  const nqRingId = ringAlloc(rig, nq.iova, 0, nqDepth, 1);
  const stats = rig.alloc(4096);
  const out = rig.hwrm(H.HWRM_COMMANDS.STAT_CTX_ALLOC, {
    stats_dma_addr: stats.iova, stats_dma_length: 160,
    stat_ctx_flags: o.statCtxFlags ?? H.STAT_CTX_ALLOC_REQ_STAT_CTX_FLAGS.ROCE,
  });
  const statCtxId = H.StatCtxAllocOutput.decode(out).stat_ctx_id;
  return { creq, creqDepth, creqRingId, nq, nqDepth, nqRingId, statCtxId };
}

/** FUNC_BACKING_STORE_QCAPS and CFG: context memory as bnxt_en hands it over (initialised, split, TQM rings). */
function backingStore(rig: EmuRig, o: BringUpOptions): void {
  const qcaps = rig.hwrm(H.HWRM_COMMANDS.FUNC_BACKING_STORE_QCAPS, {});
  const caps = H.FuncBackingStoreQcapsOutput.decode(qcaps);
  const qp = o.qpEntries ?? 64;
  const cq = o.cqEntries ?? 64;
  const mrav = o.mravEntries ?? 64;
  const tim = 16;
  const EN = H.FUNC_BACKING_STORE_CFG_REQ_ENABLES;
  const INIT = H.FUNC_BACKING_STORE_QCAPS_RESP_CTX_INIT_MASK;
  // Context memory initialised as bnxt_en's bnxt_init_ctx_mem does (unless a test leaves it out).
  const area = (entries: number, size: number, mask: number, offset: number): number => {
    const b = rig.alloc(entries * size);
    if (!o.uninitialisedContext && (caps.ctx_init_mask & mask) !== 0) {
      // Entries counted from each 4 KiB page's start, as bnxt_init_ctx_mem writes them per page.
      for (let page = 0; page < entries * size; page += 4096) {
        for (let i = 0; i < 4096 && page + i + offset * 4 < entries * size; i += size) {
          b.bytes[page + i + offset * 4] = caps.ctx_kind_initializer;
        }
      }
    }
    return b.iova;
  };
  // One fast-path TQM ring per CoS queue where QCAPS gives no count (2 queues on the model's port).
  const tqmRings = o.tqmRings ?? (caps.tqm_fp_rings_count || 2);
  const tqm: Record<string, number> = {};
  let tqmEnables = 0;
  for (let i = 0; i < tqmRings; i++) {
    tqm[`tqm_ring${i}_page_dir`] = rig.alloc(64 * 16).iova;
    tqm[`tqm_ring${i}_num_entries`] = 64;
    tqmEnables |= EN.TQM_RING0 << i;
  }
  const units = o.mravUnsplit ? 0 : caps.mrav_num_entries_units;
  rig.hwrm(H.HWRM_COMMANDS.FUNC_BACKING_STORE_CFG, {
    ...tqm, tqm_entry_size: 16,
    // MRs only (no AHs), split as QCAPS's units ask (flag MRAV_RESERVATION_SPLIT).
    flags: units ? H.FUNC_BACKING_STORE_CFG_REQ_FLAGS.MRAV_RESERVATION_SPLIT : 0,
    enables: EN.QP | EN.CQ | EN.MRAV | EN.TIM | tqmEnables,
    qpc_page_dir: area(qp, 448, INIT.QP, caps.qp_init_offset), qp_num_entries: qp, qp_entry_size: 448,
    cq_page_dir: area(cq, 64, INIT.CQ, caps.cq_init_offset), cq_num_entries: cq, cq_entry_size: 64,
    mrav_page_dir: area(mrav, 128, INIT.MRAV, caps.mrav_init_offset),
    mrav_num_entries: units ? ((mrav / units) << 16) >>> 0 : mrav,
    mrav_entry_size: 128,
    tim_page_dir: rig.alloc(tim * 16).iova, tim_num_entries: tim, tim_entry_size: 16,
  });
}

function ringAlloc(rig: EmuRig, table: number, depth: number, length: number, logicalId: number): number {
  const out = rig.hwrm(H.HWRM_COMMANDS.RING_ALLOC, {
    ring_type: H.RING_ALLOC_REQ_RING_TYPE.NQ, page_tbl_addr: table, page_size: 12, page_tbl_depth: depth, length,
    logical_id: logicalId, int_mode: H.RING_ALLOC_REQ_INT_MODE.MSIX,
  });
  return H.RingAllocOutput.decode(out).ring_id;
}

/** Reads 16-byte entries of an NQ-type ring (the CREQ or an NQ) the way the drivers do. */
export class RingReader {
  /** Free-running consumer. */
  cons = 0;
  constructor(readonly buf: DmaBuf, readonly depth: number) {}

  /** The next entry if its valid bit (byte 8 bit 0) says this pass wrote it. */
  next(): Uint8Array | undefined {
    const slot = this.cons % this.depth;
    const expected = Math.floor(this.cons / this.depth) % 2 === 0 ? 1 : 0;
    if ((this.buf.bytes[slot * 16 + 8]! & 1) !== expected) return undefined;
    this.cons++;
    return this.buf.bytes.slice(slot * 16, slot * 16 + 16);
  }

  get index(): number {
    return this.cons % this.depth;
  }

  get epoch(): number {
    return Math.floor(this.cons / this.depth) % 2;
  }
}

/** A minimal RCFW channel: the CMDQ in host memory, the mailbox, producer and trigger registers. */
export class TestCmdq {
  readonly cmdq: DmaBuf;
  readonly creq: RingReader;
  prod = 0;
  first = true;
  cookie = 0;

  /** Ring a CREQ doorbell after each entry taken, as the drivers do. */
  autoDoorbell: boolean;

  constructor(
    readonly rig: EmuRig, readonly setup: HwrmSetup, readonly depth = 256, options: { autoDoorbell?: boolean } = {},
  ) {
    this.cmdq = rig.alloc(depth * 16);
    this.creq = new RingReader(setup.creq, setup.creqDepth);
    this.autoDoorbell = options.autoDoorbell ?? true;
  }

  /** Writes the cmdq_init mailbox (BAR0 0x600..0x60C). */
  start(): void {
    this.rig.bar0Write32(0x600, this.cmdq.iova % 2 ** 32);
    this.rig.bar0Write32(0x604, Math.floor(this.cmdq.iova / 2 ** 32));
    this.rig.bar0Write32(0x608, ((this.depth << 2) | 0) | (this.setup.creqRingId << 16));
    this.rig.bar0Write32(0x60c, 0);
    this.rig.run();
  }

  /** Copies raw command bytes into the CMDQ (unit by unit, wrapping) without telling the firmware. */
  place(bytes: Uint8Array): void {
    const units = Math.ceil(bytes.length / 16);
    for (let u = 0; u < units; u++) {
      const slot = ((this.prod + u) % this.depth) * 16;
      this.cmdq.bytes.fill(0, slot, slot + 16);
      this.cmdq.bytes.set(bytes.subarray(u * 16, Math.min(bytes.length, u * 16 + 16)), slot);
    }
    this.prod += units;
  }

  /** Writes the producer register (bit 31 on the first) and the trigger, and lets the model run. */
  ring(prod = this.prod): void {
    this.rig.bar0Write32(0x60c, ((prod & 0xffff) | (this.first ? 0x8000_0000 : 0)) >>> 0);
    this.first = false;
    this.rig.bar0Write32(0x700, 1);
    this.rig.run();
  }

  /** Encodes a command with `layout`, the next cookie and cmd_size, places and rings it. Returns the cookie. */
  send<S extends Record<string, FieldSpec>>(
    layout: Layout<S>, values: Partial<Values<S>>, options: { ring?: boolean } = {},
  ): number {
    const cookie = this.cookie++ & 0x1fff;
    const bytes = layout.encode(
      { ...values, cmd_size: Math.ceil(layout.size / 16), cookie } as unknown as Partial<Values<S>>,
    );
    this.place(bytes);
    if (options.ring ?? true) this.ring();
    return cookie;
  }

  /** The next CREQ entry (and, like a driver, a CREQ doorbell with the new consumer). */
  take(): Uint8Array | undefined {
    const e = this.creq.next();
    if (e && this.autoDoorbell) this.doorbell();
    return e;
  }

  doorbell(): void {
    this.rig.model.roce.creqDoorbell(this.creq.index, this.creq.epoch);
    this.rig.run();
  }

  /** Sends a command and returns its answer (throws if none came). */
  call<S extends Record<string, FieldSpec>>(layout: Layout<S>, values: Partial<Values<S>>): Uint8Array {
    this.send(layout, values);
    const e = this.take();
    if (!e) throw new Error(`${layout.name}: no CREQ entry`);
    return e;
  }
}

/** Status byte, cookie, xid of a CREQ entry (offsets 1, 2, 4: roce_hsi.h creq_qp_event). */
export function creqStatus(e: Uint8Array): number {
  return e[1]!;
}
export function creqXid(e: Uint8Array): number {
  return new DataView(e.buffer, e.byteOffset).getUint32(4, true);
}

function expectOk(what: string, e: Uint8Array): Uint8Array {
  if (e[1] !== 0) throw new Error(`${what}: status ${e[1]}`);
  return e;
}

/** A started channel on a brought-up function, with INITIALIZE_FW done unless `init` is false. */
export function openRoce(
  options: BringUpOptions & { init?: boolean; mtu?: number; cmdqDepth?: number; firmware?: FirmwareName } = {},
): { rig: EmuRig; setup: HwrmSetup; q: TestCmdq } {
  const rig = new EmuRig({ mtu: options.mtu, firmware: options.firmware });
  const setup = bringUp(rig, options);
  const q = new TestCmdq(rig, setup, options.cmdqDepth ?? 256);
  q.start();
  if (options.init ?? true)
    expectOk('INITIALIZE_FW', q.call(R.CmdqInitializeFw, {
      opcode: R.RoceOpcode.INITIALIZE_FW, stat_ctx_id: setup.statCtxId,
    }));
  return { rig, setup, q };
}

export interface TestCq {
  readonly id: number;
  readonly ring: DmaBuf;
}

export function makeCq(q: TestCmdq, cqSize = 16, handle = 0x1122_3344_5566_7788n): TestCq {
  const ring = q.rig.alloc(cqSize * 32);
  const e = expectOk('CREATE_CQ', q.call(R.CmdqCreateCq, {
    opcode: R.RoceOpcode.CREATE_CQ, cq_handle: handle, lvl: 0, pg_size: 0, cnq_id: q.setup.nqRingId, dpi: 0,
    cq_size: cqSize, pbl: ring.iova,
  }));
  return { id: creqXid(e), ring };
}

export interface TestQpMemory {
  readonly sq: DmaBuf;
  readonly rq: DmaBuf;
  readonly orrq: DmaBuf;
  readonly irrq: DmaBuf;
}

/** Memory for an RC QP: SQ ring + PSN search area, RQ ring, ORRQ (1 page), IRRQ (2 pages). */
export function qpMemory(rig: EmuRig, sqSize: number, rqSize: number): TestQpMemory {
  return {
    sq: rig.alloc(sqSize * 144), rq: rig.alloc(Math.max(1, rqSize) * 128), orrq: rig.alloc(4096), irrq: rig.alloc(8192),
  };
}

export function createQpValues(
  scq: number, rcq: number, m: TestQpMemory, sqSize = 16, rqSize = 16,
): Partial<Values<typeof R.CmdqCreateQp.fields>> {
  return {
    opcode: R.RoceOpcode.CREATE_QP, qp_handle: 0xa1a2_a3a4_a5a6_a7a8n,
    qp_flags: R.CreateQpFlags.RESERVED_LKEY_ENABLE | R.CreateQpFlags.FR_PMR_ENABLED, type: R.QpType.RC,
    sq_lvl: 0, sq_pg_size: 0, rq_lvl: 0, rq_pg_size: 0, dpi: 1, sq_size: sqSize, rq_size: rqSize, sq_sge: 6, rq_sge: 6,
    scq_cid: scq, rcq_cid: rcq, pd_id: 1, sq_pbl: m.sq.iova, rq_pbl: m.rq.iova, irrq_addr: m.irrq.iova,
    orrq_addr: m.orrq.iova,
  };
}

export function makeQp(q: TestCmdq, scq: number, rcq: number, sqSize = 16, rqSize = 16): number {
  const m = qpMemory(q.rig, sqSize, rqSize);
  return creqXid(expectOk('CREATE_QP', q.call(R.CmdqCreateQp, createQpValues(scq, rcq, m, sqSize, rqSize))));
}

export const PEER_GID = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2]);
export const PEER_MAC = Uint8Array.from([0x02, 0x62, 0x6e, 0, 0, 2]);

export function addGid(
  q: TestCmdq, gid = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1]),
): number {
  return creqXid(expectOk('ADD_GID', q.call(R.CmdqAddGid, {
    opcode: R.RoceOpcode.ADD_GID, gid: R.gidWords(gid), src_mac: R.macWords(q.rig.model.config.mac),
  })));
}

/** MODIFY_QP values of the kernel's three RC transitions (Linux bnxt_re qplib_fp.c bnxt_qplib_modify_qp). */
export function toInitValues(qpn: number): Partial<Values<typeof R.CmdqModifyQp.fields>> {
  return {
    opcode: R.RoceOpcode.MODIFY_QP, qp_cid: qpn, modify_mask: R.RcTransitionMask.RESET_TO_INIT,
    new_state: R.QpState.INIT, access: R.QpAccess.LOCAL_WRITE | R.QpAccess.REMOTE_WRITE | R.QpAccess.REMOTE_READ,
    pkey: 0xffff,
  };
}

export function toRtrValues(
  qpn: number, sgidIndex: number, destQpn = 0x123,
): Partial<Values<typeof R.CmdqModifyQp.fields>> {
  return {
    opcode: R.RoceOpcode.MODIFY_QP, qp_cid: qpn, modify_mask: R.RcTransitionMask.INIT_TO_RTR, new_state: R.QpState.RTR,
    network_type: R.NetworkType.ROCEV2_IPV4, dgid: PEER_GID, flow_label: 0, sgid_index: sgidIndex, hop_limit: 64,
    traffic_class: 0, dest_mac: PEER_MAC, path_mtu: R.PathMtu.MTU_1024, rq_psn: 0x00abcdef, max_dest_rd_atomic: 254,
    min_rnr_timer: 12, dest_qp_id: destQpn, vlan_id: 0xfff,
  };
}

export function toRtsValues(qpn: number): Partial<Values<typeof R.CmdqModifyQp.fields>> {
  return {
    opcode: R.RoceOpcode.MODIFY_QP, qp_cid: qpn, modify_mask: R.RcTransitionMask.RTR_TO_RTS, new_state: R.QpState.RTS,
    timeout: 14, retry_cnt: 7, rnr_retry: 7, max_rd_atomic: 127, sq_psn: 0x00123456,
  };
}

export function modify(q: TestCmdq, values: Partial<Values<typeof R.CmdqModifyQp.fields>>): Uint8Array {
  return q.call(R.CmdqModifyQp, values);
}
