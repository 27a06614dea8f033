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
import { Nic, Qp, Region } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/device.ts';
import type { DmaBuffer } from '../drivers/device.ts';
import { ringBuffers, type RingMemory } from '../lib/bnxt/ring-memory.ts';
import type { BnxtQp } from '../lib/bnxt/queue-pair.ts';
import { driverQpOf } from '../lib/qp.ts';
import * as Q from '../lib/bnxt/roce-commands.ts';
import { ModifyQpMask, QpAccess, QpType } from '../firmware-hwrm/roce/index.ts';
import {
  OPCODE_FLAGS, OpFlag, Opcode, ParseStatus, RoceFrame, encodeFrame, icrcInt32, parseFrame, payloadOffsetFor, writeIcrc,
} from '../drivers/emu/wire/index.ts';
import { seeded } from './helpers/seeded.ts';

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
const FRAME_BYTES = 9216;
const MAX_VIOLATIONS = 20;
const VALID_OPCODES = Object.values(Opcode);

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

export function fuzzPort(options: PortFuzzOptions): PortFuzzResult {
  const seed = options.seed >>> 0;
  const r = prng(seed);
  const violations: string[] = [];
  let violationCount = 0;
  const violation = (text: string) => {
    violationCount++;
    if (violations.length < MAX_VIOLATIONS) violations.push(text);
  };
  const pair = `fuzz-port-${process.pid}-${runs++}`;
  const must = <T>(x: { ok: true; value: T } | { ok: false; error: string }, what: string): T => {
    if (!x.ok) throw new Error(`${what}: ${x.error}`);
    return x.value;
  };
  const V = must(Nic.open('emu', { stepped: true, seed, pair, firmwareTimeoutMs: 1000 }), 'Nic.open V');
  const P = must(Nic.open('emu', { stepped: true, seed: seed + 1, pair, firmwareTimeoutMs: 1000 }), 'Nic.open P');
  const started = performance.now();
  try {
    const dev = (n: Nic) => nicInternals(n).device as EmuDevice;
    const controls = (n: Nic) => dev(n).emu;
    const clock = dev(V).clock;
    const vMac = nicInternals(V).func.info.mac;
    const pMac = nicInternals(P).func.info.mac;
    const ipOf = (n: Nic) => n.info.ipv4.split('.').reduce((x, b) => ((x << 8) | Number(b)) >>> 0, 0);
    const vIp = ipOf(V);
    const pIp = ipOf(P);

    const slack: Range[] = [];
    const region = (n: Nic, fill: number) => {
      const g = must(Region.alloc(n, REGION), 'Region.alloc');
      g.bytes.fill(fill);
      const buffer = (g as unknown as { driverRegion: { buffer: DmaBuffer } }).driverRegion.buffer;
      if (buffer.length <= REGION) throw new Error('a region\'s buffer has no slack to check');
      buffer.bytes.fill(SLACK, REGION);
      if (buffer.length > REGION)
        slack.push({
          at: buffer.iova + REGION, length: buffer.length - REGION, what: 'a region buffer past the region\'s end',
        });
      return g;
    };
    const rv1 = region(V, 0); // v1's receives: the first 2 KiB of each 4 KiB slot
    const rd = region(V, 0); // v2's and v3's read destinations
    const src = region(V, 0); // what v2 and v3 read
    for (let i = 0; i < REGION; i++) src.bytes[i] = (i * 7 + (i >>> 9)) & 0xff;
    const secret = region(V, SECRET); // registered, and nobody's business
    const rp = region(P, 0x11); // what P sends from
    const keys = [secret.key, src.key, rv1.key, rd.key, rp.key];
    const bases = [iovaOf(secret), iovaOf(src), iovaOf(rv1), iovaOf(rd), iovaOf(rp)];

    const connect = (x: Nic, y: Nic): [Qp, Qp] => {
      const a = must(Qp.make(x), 'Qp.make');
      const b = must(Qp.make(y), 'Qp.make');
      must(a.connect(b.endpoint), 'connect');
      must(b.connect(a.endpoint), 'connect');
      return [a, b];
    };
    let [v1, p1] = connect(V, P);
    let [v2, v3] = connect(V, V);
    /** vo <-> po, vo widened to grant remote reads and writes (test only: the driver never does). */
    const connectOpen = (): [Qp, Qp] => {
      const [a, b] = connect(V, P);
      must(nicInternals(V).roce.rcfw.send(Q.MODIFY_QP, {
        qp_type: QpType.RC, modify_mask: ModifyQpMask.ACCESS, qp_cid: a.number,
        access: QpAccess.LOCAL_WRITE | QpAccess.REMOTE_READ | QpAccess.REMOTE_WRITE,
      }), 'MODIFY_QP access');
      return [a, b];
    };
    let [vo, po] = connectOpen();

    // Where V may write: its RoCE rings, its queue pairs' CQs, v1's receive halves, rd.
    const fixed: Range[] = nicInternals(V).roce.buffers.map(
      (b) => ({ at: b.iova, length: b.length, what: 'RoCE rings' }),
    );
    for (let s = 0; s < SLOTS; s++) fixed.push({ at: iovaOf(rv1) + s * SLOT, length: RECEIVE, what: 'v1 receive' });
    fixed.push({ at: iovaOf(rd), length: REGION, what: 'read destination' });
    let cqs: Range[] = [];
    const forbidden: Range[] = [
      { at: iovaOf(secret), length: REGION, what: 'the secret region' },
      { at: iovaOf(src), length: REGION, what: 'the read source' },
      ...slack,
    ];
    let wqes: Range[] = [];
    const refreshRanges = () => {
      cqs = [v1, v2, v3, vo].flatMap((q) => cqMemory(q).map((b) => ({
        at: b.iova, length: b.length, what: `CQ of ${q.number}`,
      })));
      wqes = [v1, v2, v3, vo].flatMap((q) => wqeMemory(q).map((b) => ({
        at: b.iova, length: b.length, what: `send/receive ring of ${q.number}`,
      })));
    };
    refreshRanges();
    const inside = (list: readonly Range[], iova: number, length: number) => {
      for (const m of list) if (iova >= m.at && iova + length <= m.at + m.length) return m;
      return undefined;
    };
    const touches = (list: readonly Range[], iova: number, length: number) => {
      for (const m of list) if (iova < m.at + m.length && m.at < iova + length) return m;
      return undefined;
    };
    controls(V).model.onDmaWrite((iova: number, length: number) => {
      const bad = touches(forbidden, iova, length) ?? touches(wqes, iova, length);
      if (bad) violation(`DMA write of ${length} bytes at 0x${iova.toString(16)} into ${bad.what}`);
      else if (!inside(fixed, iova, length) && !inside(cqs, iova, length))
        violation(
          `DMA write of ${length} bytes at 0x${iova.toString(16)}: outside every region or ring the NIC may write`,
        );
    });
    const tx = new RoceFrame();
    controls(V).engine.onTransmit((frame: Uint8Array, length: number) => {
      if (parseFrame(frame, length, tx, null) !== ParseStatus.OK) {
        violation(`V sent a frame its own parser refuses (${length} bytes)`);
        return;
      }
      const toSelf = tx.dstMac.every((b, i) => b === vMac[i]);
      const readResponse = (OPCODE_FLAGS[tx.opcode]! & OpFlag.READ) !== 0 &&
        (OPCODE_FLAGS[tx.opcode]! & OpFlag.REQUEST) === 0;
      if (readResponse) {
        const granted = toSelf ? tx.destQp === v2.number || tx.destQp === v3.number : tx.destQp === po.number;
        if (!granted)
          violation(
            `V sent a READ response to QP ${tx.destQp} ${toSelf ? 'of its own' : 'of another NIC'}, which was ` +
              `granted no reads`,
          );
        let run = 0;
        for (let i = tx.payloadOffset, end = tx.payloadOffset + tx.payloadLength; i < end && run < SLACK_RUN; i++)
          run = frame[i] === SLACK ? run + 1 : 0;
        if (run >= SLACK_RUN) violation('a READ response carried bytes from past the end of a region');
      } else if (tx.payloadLength > 0 && !toSelf)
        violation(`V sent ${tx.payloadLength} payload bytes (opcode ${tx.opcode}) to another NIC`);
    });

    // ---- legitimate traffic ---------------------------------------------------------------
    let receivesTaken = 0;
    let readsChecked = 0;
    let readNext = 0;
    const reads: { q: Qp; at: number; from: number; n: number }[] = [];
    const keepReceives = () => {
      while (v1.room('receive') > 4095 - SLOTS) {
        const k = (4095 - v1.room('receive') + receivesTaken) % SLOTS;
        v1.receive(rv1, k * SLOT, RECEIVE);
      }
    };
    const service = () => {
      // P sends into v1's receives; their content is not checked (a crafted SEND with the
      // right PSN from P's address is, to v1, P: the receive was granted to whoever is P).
      for (let x = p1.pollBytes('send'); x !== -1; x = p1.pollBytes('send'));
      if (p1.failure === undefined && p1.room('send') > 4095 - 4) p1.send(rp, 0, r() % (RECEIVE + 1));
      for (let x = v1.pollBytes('receive'); x !== -1; x = v1.pollBytes('receive')) receivesTaken++;
      if (v1.failure === undefined) keepReceives();
      // v2 and v3 read from src into rd: every byte checked.
      for (const q of [v2, v3]) {
        for (;;) {
          const got = q.pollBytes('send');
          if (got === -1) break;
          const i = reads.findIndex((x) => x.q === q);
          const rd0 = reads.splice(i, 1)[0]!;
          if (got !== rd0.n)
            violation(
              `a read of v2/v3 completed ${got < 0 ? `Error ${q.lastError}` : `Ok ${got}`}, expected Ok ${rd0.n}: a ` +
                `crafted frame reached a queue pair whose peer is on this NIC`,
            );
          else if (Buffer.compare(rd.bytes.subarray(rd0.at, rd0.at + rd0.n),
            src.bytes.subarray(rd0.from, rd0.from + rd0.n)) !== 0) violation('a read of v2/v3 returned wrong bytes');
          readsChecked++;
        }
        if (q.failure === undefined && q.room('send') > 4095 - 2) {
          const at = (readNext++ % SLOTS) * SLOT;
          const n = 1 + (r() % Math.min(SLOT - 1, REGION - at));
          const from = r() % (REGION - n);
          q.read(src, from, rd, at, n);
          reads.push({ q, at, from, n });
        }
      }
      if (v2.failure !== undefined || v3.failure !== undefined)
        violation(`a queue pair whose peer is on this NIC failed: ${v2.failure ?? v3.failure}`);
    };
    let rebuilds = 0;
    const rebuild = () => {
      const v1Failed = v1.failure !== undefined || p1.failure !== undefined;
      // vo takes no entries: its engine state says whether a crafted frame failed it.
      const voFailed = controls(V).engine.qp(vo.number)?.['responder'] !== 'READY';
      if (!v1Failed && !voFailed) return;
      for (const q of [...(v1Failed ? [v1, p1] : []), ...(voFailed ? [vo, po] : [])]) {
        const d = q.destroy();
        if (!d.ok) violation(`destroy of a failed queue pair: ${d.error}`);
      }
      if (v1Failed) {
        [v1, p1] = connect(V, P);
        receivesTaken = 0;
      }
      if (voFailed) [vo, po] = connectOpen();
      refreshRanges();
      if (v1Failed) keepReceives();
      rebuilds++;
    };
    keepReceives();

    // ---- crafted frames ---------------------------------------------------------------------
    const f = new RoceFrame();
    const out = new Uint8Array(FRAME_BYTES);
    let ePsn = [0, 0, 0, 0];
    const refreshPsn = () => {
      ePsn = [v1, v2, v3, vo].map((q) => (controls(V).engine.qp(q.number)?.['ePsn'] ?? 0));
    };
    const randomMac = (m: Uint8Array) => { for (let i = 0; i < 6; i++) m[i] = r(); };
    const forge = (): number => {
      const kind = r() % 100;
      if (kind < 4) {
        const n = r() % 700;
        for (let i = 0; i < n; i++) out[i] = r();
        return n;
      }
      // Half the frames are near-valid (each field right 9 times in 10), so some reach the
      // deepest checks (keys, ranges, rights); the other half are wild (each field right half the time).
      const near = r() % 2 === 0;
      const right = () => r() % 10 < (near ? 9 : 5);
      const valid = r() % 10 !== 0;
      const opcode = valid ? VALID_OPCODES[r() % VALID_OPCODES.length]! : r() % 256;
      const buildAs = (OPCODE_FLAGS[opcode]! & OpFlag.VALID) !== 0 ? opcode : Opcode.RC_SEND_ONLY;
      const flags = OPCODE_FLAGS[buildAs]!;
      if (right()) f.dstMac.set(vMac); else randomMac(f.dstMac);
      if (right()) f.srcMac.set(pMac); else if (r() % 2 === 0) f.srcMac.set(vMac); else randomMac(f.srcMac);
      f.srcIp = right() ? pIp : r() % 2 === 0 ? vIp : r();
      f.dstIp = right() ? vIp : r();
      const target = r() % 20;
      const qi = target < 6 ? 0 : target < 10 ? 1 : target < 13 ? 2 : target < 19 ? 3 : -1;
      f.destQp = qi >= 0 ? [v1, v2, v3, vo][qi]!.number : r() & 0xffffff;
      f.psn = qi >= 0 && right() ? (r() % 4 === 0 ? (ePsn[qi]! + (r() % 5) - 2) & 0xffffff : ePsn[qi]!)
        : r() & 0xffffff;
      f.pkey = right() || r() % 2 === 0 ? 0xffff : r() & 0xffff;
      f.ackReq = r() & 1;
      f.se = r() % 8 === 0 ? 1 : 0;
      if (flags & OpFlag.RETH) {
        const k = right() ? r() % 5 : r() % 7;
        f.rethRkey = k < 5 ? keys[k]! : r();
        const base = k < 5 ? bases[k]! : r() * 4096;
        const w = right() ? 1 : r() % 6;
        const va = w === 0 ? base : w === 1 ? base + (r() % REGION) : w === 2 ? base + REGION - (r() % 64) : w === 3
          ? base - (r() % 4096) : w === 4 ? r() * 65536 + r() : base + REGION;
        f.rethVaHi = Math.floor(va / 4294967296) >>> 0;
        f.rethVaLo = va >>> 0;
        const l = right() ? 2 : r() % 8;
        f.rethDmaLength = l === 0 ? 0 : l === 1 ? 1 + (r() % 64) : l === 2 ? r() % 8192 : l === 3 ? REGION : l === 4
          ? REGION + 1 : l === 5 ? 0x80000000 : l === 6 ? 0xffffffff : r();
      }
      if (flags & OpFlag.AETH) {
        f.aethSyndrome = r() % 3 === 0 ? 0 : r() & 0xff;
        f.aethMsn = r() & 0xffffff;
      }
      if (flags & OpFlag.IMMDT) f.immDt = r();
      if (flags & OpFlag.IETH) f.iethRkey = keys[r() % keys.length]!;
      if (flags & OpFlag.ATOMIC_ETH) {
        f.atomicRkey = keys[r() % keys.length]!;
        f.atomicVaHi = 0;
        f.atomicVaLo = bases[r() % bases.length]! >>> 0;
      }
      f.payloadLength = (flags & OpFlag.PAYLOAD) !== 0 ? (r() % 3 === 0 ? r() % 64 : r() % 4200) : 0;
      if ((flags & OpFlag.WRITE) !== 0 && (flags & OpFlag.FIRST) !== 0 && right()) {
        // A WRITE whose lengths agree (ONLY: the RETH length is the payload; FIRST: one MTU of more).
        if ((flags & OpFlag.LAST) !== 0) f.payloadLength = f.rethDmaLength = Math.min(f.rethDmaLength, 4096);
        else {
          f.payloadLength = 4096;
          if (f.rethDmaLength <= 4096) f.rethDmaLength = 4097 + (r() % 8192);
        }
      }
      // Payload: random bytes, in place after the headers (the builder covers them with the ICRC).
      const p0 = payloadOffsetFor(buildAs);
      for (let i = 0; i < f.payloadLength; i += 4) {
        const v = r();
        out[p0 + i] = v; out[p0 + i + 1] = v >>> 8; out[p0 + i + 2] = v >>> 16; out[p0 + i + 3] = v >>> 24;
      }
      let length: number;
      try {
        f.opcode = buildAs;
        length = encodeFrame(out, f);
      } catch {
        const n = r() % 300;
        for (let i = 0; i < n; i++) out[i] = r();
        return n;
      }
      if (opcode !== buildAs) out[42] = opcode; // an opcode no table knows, in a frame otherwise whole
      const mutation = r() % 100;
      if (mutation < 8) {
        length = r() % length; // truncated
      } else if (mutation < 16) {
        const flips = 1 + (r() % 4);
        for (let i = 0; i < flips; i++) out[14 + (r() % (length - 14))] ^= 1 + (r() % 255);
      }
      // Most frames get a valid ICRC (over whatever the headers now say), so they pass the parser.
      if (mutation >= 8 && r() % 10 < 9 && f.packetLength <= length)
        writeIcrc(out, f.packetLength, icrcInt32(out, 14, f.packetLength));
      return length;
    };

    let parsed = 0;
    const probe = new RoceFrame();
    const every = options.progressEvery ?? Infinity;
    for (let i = 0; i < options.frames && violationCount === 0; i++) {
      if (i % 32 === 0) {
        clock.relax();
        service();
        rebuild();
        refreshPsn();
      }
      const length = forge();
      const frame = out.subarray(0, length);
      if (parseFrame(frame, length, probe, vMac) === ParseStatus.OK) parsed++;
      controls(V).engine.injectFrame(frame);
      if ((i + 1) % every === 0)
        options.progress?.(
          `${i + 1} frames, ${parsed} parsed, ${readsChecked} reads checked, ${rebuilds} rebuilds, ` +
            `${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
    }
    // Let everything in flight settle, then check the reads once more.
    for (let k = 0; k < 50; k++) {
      clock.sleep(10_000);
      service();
    }
    const counters = controls(V).engine.counters();
    if (counters['internalErrors'] !== 0)
      violation(
        `${counters['internalErrors']} internal errors in V's engine: ${controls(V).engine.lastInternalError()}`,
      );
    if (controls(V).model.iommuFaults() !== 0) violation(`${controls(V).model.iommuFaults()} IOMMU faults on V`);
    if (counters['dmaFaults'] !== 0) violation(`${counters['dmaFaults']} DMA faults on V`);
    const pc = controls(P).engine.counters();
    if (pc['internalErrors'] !== 0) violation(`${pc['internalErrors']} internal errors in P's engine`);
    if (secret.bytes.some((b) => b !== SECRET)) violation('the secret region changed');
    if (src.bytes.some((b, i) => b !== ((i * 7 + (i >>> 9)) & 0xff))) violation('the read source changed');
    controls(V).model.onDmaWrite(undefined);
    controls(V).engine.onTransmit(undefined);
    if (violationCount > violations.length) violations.push(`... and ${violationCount - violations.length} more`);
    return {
      seed, frames: options.frames, parsed, counters, rebuilds, readsChecked, receivesTaken,
      wallMs: performance.now() - started, violations,
    };
  } finally {
    V.close();
    P.close();
  }
}
