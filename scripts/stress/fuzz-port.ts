/**
 * Fuzzing the software NIC's port (issue 5): crafted frames "from the cable" into a victim NIC
 * V, cabled to a peer NIC P (two stepped NICs on one virtual clock). V has a queue pair v1
 * connected to P's p1 (reads not granted: its peer is on another NIC) and two queue pairs v2,
 * v3 connected to each other (each serves the other's reads). Legitimate traffic runs
 * meanwhile: P sends into v1's receives, v2 and v3 read from each other.
 *
 * Frames: random bytes; truncated and bit-flipped frames; every opcode (the 256 values);
 * right, wrong and random PSNs; the peer's, V's own (forged) and random addresses; keys of
 * V's regions, of P's and random ones; addresses inside, across the end of and far from the
 * regions; lengths up to 2^32 - 1; most with a valid ICRC, so they reach the transport.
 *
 * To fuzz the responder's key and range checks too, V also has a queue pair vo connected to
 * P's po that the test widens (MODIFY_QP, access REMOTE_READ | REMOTE_WRITE) beyond what the
 * driver ever grants a peer on another NIC: crafted READs and WRITEs through it meet the
 * regions' own bounds and rights (regions grant remote reads, never remote writes).
 *
 * What must hold, checked as it runs:
 *   - no exception, no internal error in the model, no IOMMU fault;
 *   - every DMA write of V lands in a CQ of one of its queue pairs, in its RoCE rings (CREQ,
 *     NQ), in the first half of one of v1's receive slots (a receive takes 2 KiB of each 4 KiB
 *     slot), or in the destination of v2's and v3's reads; never in a region nobody receives
 *     into (the read source, a "secret" region, P-facing send buffers) nor in a send ring;
 *   - no frame V sends to another NIC carries payload, but READ responses to po (the only
 *     queue pair of P granted reads): no byte of V's memory leaves for a peer that was not
 *     granted reads; every other READ response V sends goes to V itself, to v2 or v3;
 *   - no READ response carries a byte from outside a region: the slack of every region's
 *     buffer (past its last byte) holds a marker no region holds, and no response has it;
 *   - v2's and v3's reads keep returning the exact bytes of their source: no crafted frame
 *     reaches a queue pair whose peer is on this NIC.
 * Queue pairs the fuzz made fail (a crafted request is often a protocol error) are rebuilt.
 */
import { Nic, Qp, Region } from '../../lib/index.ts';
import { nicInternals } from '../../lib/nic.ts';
import type { EmuDevice } from '../../drivers/emu/host/device.ts';
import type { DmaBuffer } from '../../drivers/device.ts';
import { ringBuffers, type RingMemory } from '../../lib/bnxt/ring-memory.ts';
import type { BnxtQp } from '../../lib/bnxt/queue-pair.ts';
import { driverQpOf } from '../../lib/qp.ts';
import * as Q from '../../lib/bnxt/roce-commands.ts';
import { ModifyQpMask, QpAccess, QpType } from '../../firmware-hwrm/roce/index.ts';
import {
  OPCODE_FLAGS, OpFlag, ParseStatus, RoceFrame, parseFrame,
} from '../../drivers/emu/model/wire/index.ts';
import { seeded } from './seeded.ts';
import { FRAME_BYTES, Forger } from './frame-forger.ts';
import { connectedPair, must } from './pairs.ts';

export interface PortFuzzOptions {
  readonly seed: number;
  readonly frames: number;
  readonly progress?: (line: string) => void;
  readonly progressEvery?: number;
}

export interface PortFuzzResult {
  readonly seed: number;
  readonly frames: number;
  /** Crafted frames the parser took (a valid RoCEv2 packet for V's port). */
  readonly parsed: number;
  /** Drops by reason, over the run (V's engine counters). */
  readonly counters: Record<string, number>;
  readonly rebuilds: number;
  readonly readsChecked: number;
  readonly receivesTaken: number;
  readonly wallMs: number;
  readonly violations: readonly string[];
}

const SLOT = 4096;
const RECEIVE = 2048;
const SLOTS = 32;
/** Each region ends 100 bytes before its last page does: those bytes are the slack below. */
const REGION = SLOT * SLOTS - 100;
const SECRET = 0x5e;
/** Fills the bytes of each region's buffer past its end: a READ response must never carry them. */
const SLACK = 0xa7;
const SLACK_RUN = 8;
const MAX_VIOLATIONS = 20;

/** mulberry32 from the tests' seeded helper: every choice comes from the printed seed. */
const prng = seeded;

interface Range { readonly at: number; readonly length: number; readonly what: string }

function iovaOf(r: Region): number {
  return r.vaHi * 4294967296 + r.vaLo;
}

function hwOf(q: Qp): BnxtQp {
  return driverQpOf(q);
}

function cqMemory(q: Qp): DmaBuffer[] {
  const h = hwOf(q);
  return [...ringBuffers(h.scq.memory), ...ringBuffers(h.rcq.memory)];
}

function wqeMemory(q: Qp): DmaBuffer[] {
  const h = hwOf(q) as unknown as { sq: RingMemory; rq: RingMemory };
  return [...ringBuffers(h.sq), ...ringBuffers(h.rq)];
}

let runs = 0;


function emu(n: Nic): EmuDevice['emu'] {
  return (nicInternals(n).device as EmuDevice).emu;
}

function ipOf(n: Nic): number {
  return n.info.ipv4.split('.').reduce((x, b) => ((x << 8) | Number(b)) >>> 0, 0);
}

function inside(list: readonly Range[], iova: number, length: number): Range | undefined {
  for (const m of list) if (iova >= m.at && iova + length <= m.at + m.length) return m;
  return undefined;
}

function touches(list: readonly Range[], iova: number, length: number): Range | undefined {
  for (const m of list) if (iova < m.at + m.length && m.at < iova + length) return m;
  return undefined;
}


export function fuzzPort(options: PortFuzzOptions): PortFuzzResult {
  const seed = options.seed >>> 0;
  const pair = `fuzz-port-${process.pid}-${runs++}`;
  const V = must(Nic.open('emu', { stepped: true, seed, pair, firmwareTimeoutMs: 1000 }), 'Nic.open V');
  const P = must(Nic.open('emu', { stepped: true, seed: seed + 1, pair, firmwareTimeoutMs: 1000 }), 'Nic.open P');
  const started = performance.now();
  try {
    return new PortFuzz(V, P, prng(seed)).run(seed, options, started);
  } finally {
    V.close();
    P.close();
  }
}

/** One run: V's regions and queue pairs, the checks on every DMA write and frame V makes, the traffic. */
class PortFuzz {
  readonly violations: string[] = [];
  violationCount = 0;
  private readonly vMac: Uint8Array;
  private readonly pMac: Uint8Array;
  private readonly vIp: number;
  private readonly pIp: number;
  private readonly slack: Range[] = [];
  /** v1's receives: the first 2 KiB of each 4 KiB slot. */
  private readonly rv1: Region;
  /** v2's and v3's read destinations. */
  private readonly rd: Region;
  /** What v2 and v3 read. */
  private readonly src: Region;
  /** Registered, and nobody's business. */
  private readonly secret: Region;
  /** What P sends from. */
  private readonly rp: Region;
  private readonly keys: number[];
  private readonly bases: number[];
  private v1: Qp;
  private p1: Qp;
  private readonly v2: Qp;
  private readonly v3: Qp;
  private vo: Qp;
  private po: Qp;
  /** Where V may write besides its CQs: its RoCE rings, v1's receive halves, rd. */
  private readonly fixed: Range[];
  private readonly forbidden: Range[];
  private cqs: Range[] = [];
  private wqes: Range[] = [];
  private receivesTaken = 0;
  private readsChecked = 0;
  private readNext = 0;
  private readonly reads: { q: Qp; at: number; from: number; n: number }[] = [];
  private rebuilds = 0;
  private readonly forger: Forger;

  constructor(private readonly V: Nic, private readonly P: Nic, private readonly r: () => number) {
    this.vMac = nicInternals(V).func.info.mac;
    this.pMac = nicInternals(P).func.info.mac;
    this.vIp = ipOf(V);
    this.pIp = ipOf(P);
    this.rv1 = this.region(V, 0);
    this.rd = this.region(V, 0);
    this.src = this.region(V, 0);
    for (let i = 0; i < REGION; i++) this.src.bytes[i] = (i * 7 + (i >>> 9)) & 0xff;
    this.secret = this.region(V, SECRET);
    this.rp = this.region(P, 0x11);
    const regions = [this.secret, this.src, this.rv1, this.rd, this.rp];
    this.keys = regions.map((g) => g.key);
    this.bases = regions.map(iovaOf);
    [this.v1, this.p1] = connectedPair(V, P);
    [this.v2, this.v3] = connectedPair(V, V);
    [this.vo, this.po] = this.connectOpen();
    this.fixed = nicInternals(V).roce.buffers.map((b) => ({ at: b.iova, length: b.length, what: 'RoCE rings' }));
    for (let s = 0; s < SLOTS; s++) {
      this.fixed.push({ at: iovaOf(this.rv1) + s * SLOT, length: RECEIVE, what: 'v1 receive' });
    }
    this.fixed.push({ at: iovaOf(this.rd), length: REGION, what: 'read destination' });
    this.forbidden = [
      { at: iovaOf(this.secret), length: REGION, what: 'the secret region' },
      { at: iovaOf(this.src), length: REGION, what: 'the read source' },
      ...this.slack,
    ];
    this.refreshRanges();
    this.forger = new Forger(r, { vMac: this.vMac, pMac: this.pMac, vIp: this.vIp, pIp: this.pIp },
      this.keys, this.bases, REGION);
  }

  private violation(text: string): void {
    this.violationCount++;
    if (this.violations.length < MAX_VIOLATIONS) this.violations.push(text);
  }

  /** A region filled with `fill`, the slack of its buffer past its end filled with SLACK. */
  private region(n: Nic, fill: number): Region {
    const g = must(Region.alloc(n, REGION), 'Region.alloc');
    g.bytes.fill(fill);
    const buffer = (g as unknown as { driverRegion: { buffer: DmaBuffer } }).driverRegion.buffer;
    if (buffer.length <= REGION) throw new Error('a region\'s buffer has no slack to check');
    buffer.bytes.fill(SLACK, REGION);
    this.slack.push({
      at: buffer.iova + REGION, length: buffer.length - REGION, what: 'a region buffer past the region\'s end',
    });
    return g;
  }

  /** vo <-> po, vo widened to grant remote reads and writes (test only: the driver never does). */
  private connectOpen(): [Qp, Qp] {
    const [a, b] = connectedPair(this.V, this.P);
    must(nicInternals(this.V).roce.rcfw.send(Q.MODIFY_QP, {
      qp_type: QpType.RC, modify_mask: ModifyQpMask.ACCESS, qp_cid: a.number,
      access: QpAccess.LOCAL_WRITE | QpAccess.REMOTE_READ | QpAccess.REMOTE_WRITE,
    }), 'MODIFY_QP access');
    return [a, b];
  }

  private get victims(): Qp[] {
    return [this.v1, this.v2, this.v3, this.vo];
  }

  private refreshRanges(): void {
    this.cqs = this.victims.flatMap((q) => cqMemory(q).map((b) => ({
      at: b.iova, length: b.length, what: `CQ of ${q.number}`,
    })));
    this.wqes = this.victims.flatMap((q) => wqeMemory(q).map((b) => ({
      at: b.iova, length: b.length, what: `send/receive ring of ${q.number}`,
    })));
  }

  /** Every DMA write of V lands where V may write, never in a forbidden range or a send or receive ring. */
  private checkDmaWrite(iova: number, length: number): void {
    const bad = touches(this.forbidden, iova, length) ?? touches(this.wqes, iova, length);
    if (bad) {
      this.violation(`DMA write of ${length} bytes at 0x${iova.toString(16)} into ${bad.what}`);
    } else if (!inside(this.fixed, iova, length) && !inside(this.cqs, iova, length)) {
      this.violation(
        `DMA write of ${length} bytes at 0x${iova.toString(16)}: outside every region or ring the NIC may write`,
      );
    }
  }

  /** No payload to another NIC but READ responses to po; no READ response to an ungranted QP or from slack. */
  private checkTransmit(frame: Uint8Array, length: number, tx: RoceFrame): void {
    if (parseFrame(frame, length, tx, null) !== ParseStatus.OK) {
      this.violation(`V sent a frame its own parser refuses (${length} bytes)`);
      return;
    }
    const toSelf = tx.dstMac.every((b, i) => b === this.vMac[i]);
    const readResponse = (OPCODE_FLAGS[tx.opcode]! & OpFlag.READ) !== 0 &&
      (OPCODE_FLAGS[tx.opcode]! & OpFlag.REQUEST) === 0;
    if (readResponse) {
      const granted = toSelf ? tx.destQp === this.v2.number || tx.destQp === this.v3.number
        : tx.destQp === this.po.number;
      if (!granted) {
        this.violation(
          `V sent a READ response to QP ${tx.destQp} ${toSelf ? 'of its own' : 'of another NIC'}, which was ` +
            `granted no reads`,
        );
      }
      let run = 0;
      for (let i = tx.payloadOffset, end = tx.payloadOffset + tx.payloadLength; i < end && run < SLACK_RUN; i++) {
        run = frame[i] === SLACK ? run + 1 : 0;
      }
      if (run >= SLACK_RUN) this.violation('a READ response carried bytes from past the end of a region');
    } else if (tx.payloadLength > 0 && !toSelf) {
      this.violation(`V sent ${tx.payloadLength} payload bytes (opcode ${tx.opcode}) to another NIC`);
    }
  }

  private keepReceives(): void {
    while (this.v1.room('receive') > 4095 - SLOTS) {
      const k = (4095 - this.v1.room('receive') + this.receivesTaken) % SLOTS;
      this.v1.receive(this.rv1, k * SLOT, RECEIVE);
    }
  }

  /** The legitimate traffic: P sends into v1's receives, v2 and v3 read from each other. */
  private service(): void {
    const { r, v1, p1 } = this;
    // P sends into v1's receives; their content is not checked (a crafted SEND with the
    // right PSN from P's address is, to v1, P: the receive was granted to whoever is P).
    for (let x = p1.pollBytes('send'); x !== -1; x = p1.pollBytes('send'));
    if (p1.failure === undefined && p1.room('send') > 4095 - 4) p1.send(this.rp, 0, r() % (RECEIVE + 1));
    for (let x = v1.pollBytes('receive'); x !== -1; x = v1.pollBytes('receive')) this.receivesTaken++;
    if (v1.failure === undefined) this.keepReceives();
    for (const q of [this.v2, this.v3]) this.serviceReads(q);
    if (this.v2.failure !== undefined || this.v3.failure !== undefined) {
      this.violation(`a queue pair whose peer is on this NIC failed: ${this.v2.failure ?? this.v3.failure}`);
    }
  }

  /** v2's or v3's reads from src into rd: every byte checked; then the next read posted. */
  private serviceReads(q: Qp): void {
    const { r, rd, src } = this;
    for (;;) {
      const got = q.pollBytes('send');
      if (got === -1) break;
      const i = this.reads.findIndex((x) => x.q === q);
      const rd0 = this.reads.splice(i, 1)[0]!;
      if (got !== rd0.n) {
        this.violation(
          `a read of v2/v3 completed ${got < 0 ? `Error ${q.lastError}` : `Ok ${got}`}, expected Ok ${rd0.n}: a ` +
            `crafted frame reached a queue pair whose peer is on this NIC`,
        );
      } else if (Buffer.compare(rd.bytes.subarray(rd0.at, rd0.at + rd0.n),
        src.bytes.subarray(rd0.from, rd0.from + rd0.n)) !== 0) {
        this.violation('a read of v2/v3 returned wrong bytes');
      }
      this.readsChecked++;
    }
    if (q.failure === undefined && q.room('send') > 4095 - 2) {
      const at = (this.readNext++ % SLOTS) * SLOT;
      const n = 1 + (r() % Math.min(SLOT - 1, REGION - at));
      const from = r() % (REGION - n);
      q.read(src, from, rd, at, n);
      this.reads.push({ q, at, from, n });
    }
  }

  /** Queue pairs the crafted frames failed are destroyed and made again. */
  private rebuild(): void {
    const v1Failed = this.v1.failure !== undefined || this.p1.failure !== undefined;
    // vo takes no entries: its engine state says whether a crafted frame failed it.
    const voFailed = emu(this.V).engine.qp(this.vo.number)?.['responder'] !== 'READY';
    if (!v1Failed && !voFailed) return;
    for (const q of [...(v1Failed ? [this.v1, this.p1] : []), ...(voFailed ? [this.vo, this.po] : [])]) {
      const d = q.destroy();
      if (!d.ok) this.violation(`destroy of a failed queue pair: ${d.error}`);
    }
    if (v1Failed) {
      [this.v1, this.p1] = connectedPair(this.V, this.P);
      this.receivesTaken = 0;
    }
    if (voFailed) [this.vo, this.po] = this.connectOpen();
    this.refreshRanges();
    if (v1Failed) this.keepReceives();
    this.rebuilds++;
  }

  run(seed: number, options: PortFuzzOptions, started: number): PortFuzzResult {
    const { V } = this;
    const clock = (nicInternals(V).device as EmuDevice).clock;
    emu(V).model.onDmaWrite((iova: number, length: number) => this.checkDmaWrite(iova, length));
    const tx = new RoceFrame();
    emu(V).engine.onTransmit((frame: Uint8Array, length: number) => this.checkTransmit(frame, length, tx));
    this.keepReceives();
    let parsed = 0;
    const probe = new RoceFrame();
    const every = options.progressEvery ?? Infinity;
    for (let i = 0; i < options.frames && this.violationCount === 0; i++) {
      if (i % 32 === 0) {
        clock.relax();
        this.service();
        this.rebuild();
        this.forger.expectedPsns(this.victims.map((q) => emu(V).engine.qp(q.number)?.['ePsn'] ?? 0),
          this.victims.map((q) => q.number));
      }
      const length = this.forger.forge();
      const frame = this.forger.out.subarray(0, length);
      if (parseFrame(frame, length, probe, this.vMac) === ParseStatus.OK) parsed++;
      emu(V).engine.injectFrame(frame);
      if ((i + 1) % every === 0) {
        options.progress?.(
          `${i + 1} frames, ${parsed} parsed, ${this.readsChecked} reads checked, ${this.rebuilds} rebuilds, ` +
            `${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
      }
    }
    // Let everything in flight settle, then check the reads once more.
    for (let k = 0; k < 50; k++) {
      clock.sleep(10_000);
      this.service();
    }
    const counters = emu(V).engine.counters();
    this.checkModels(counters);
    emu(V).model.onDmaWrite(undefined);
    emu(V).engine.onTransmit(undefined);
    const { violations, violationCount } = this;
    if (violationCount > violations.length) violations.push(`... and ${violationCount - violations.length} more`);
    return {
      seed, frames: options.frames, parsed, counters, rebuilds: this.rebuilds, readsChecked: this.readsChecked,
      receivesTaken: this.receivesTaken, wallMs: performance.now() - started, violations,
    };
  }

  /** No internal error, IOMMU or DMA fault in either model; the secret region and the read source unchanged. */
  private checkModels(counters: Record<string, number>): void {
    const v = emu(this.V);
    if (counters['internalErrors'] !== 0) {
      this.violation(`${counters['internalErrors']} internal errors in V's engine: ${v.engine.lastInternalError()}`);
    }
    if (v.model.iommuFaults() !== 0) this.violation(`${v.model.iommuFaults()} IOMMU faults on V`);
    if (counters['dmaFaults'] !== 0) this.violation(`${counters['dmaFaults']} DMA faults on V`);
    const pc = emu(this.P).engine.counters();
    if (pc['internalErrors'] !== 0) this.violation(`${pc['internalErrors']} internal errors in P's engine`);
    if (this.secret.bytes.some((b) => b !== SECRET)) this.violation('the secret region changed');
    if (this.src.bytes.some((b, i) => b !== ((i * 7 + (i >>> 9)) & 0xff))) this.violation('the read source changed');
  }
}
