/**
 * A QP's frames built from its header template (build.ts encodeFrameWith, the port's path) are
 * byte for byte the frames encodeFrame builds, for every RC opcode, random paths, PSNs, lengths
 * and flags, in frame buffers that are word-aligned (frame-memory.ts) and in ones that are not.
 * Their ICRC is checked again with a bitwise CRC-32 written here and the masking rules of IBA
 * annex A17 (as rxe_icrc.c applies them), and so is the ICRC's register from a template
 * (icrc.ts templateHeadersRegister, CRC-32's linearity) for random headers: neither expected
 * value comes from the code under test.
 */
import t from 'tap';
import { HeaderTemplate, encodeFrame, encodeFrameWith, frameWordsOf } from '../drivers/emu/model/wire/build.ts';
import { completeIcrc, templateHeadersRegister } from '../drivers/emu/model/wire/icrc.ts';
import { frameBuffer } from '../drivers/emu/model/wire/frame-memory.ts';
import { OPCODE_FLAGS, OpFlag, Opcode } from '../drivers/emu/model/wire/opcodes.ts';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { parseFrame } from '../drivers/emu/model/wire/parse.ts';
import { ParseStatus } from '../drivers/emu/model/wire/parse-status.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';
import { ACCESS_MR, TestNic } from './helpers/emu-engine-harness.ts';

/** CRC-32's register (reflected 0xEDB88320, no inversions) after folding `bytes` bit by bit into `reg`. */
function crcBits(reg: number, bytes: ArrayLike<number>): number {
  let c = reg >>> 0;
  for (let i = 0; i < bytes.length; i++) {
    c ^= bytes[i]!;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return c >>> 0;
}

/** The ICRC of the RoCEv2 frame `fr` (IPv4 at 14), from the masking rules alone. */
function icrcOf(fr: Uint8Array): number {
  const total = (fr[16]! << 8) | fr[17]!;
  const pkt = Array.from(fr.subarray(14, 14 + total - 4));
  pkt[1] = 0xff; // TOS
  pkt[8] = 0xff; // TTL
  pkt[10] = pkt[11] = 0xff; // IPv4 header checksum
  pkt[26] = pkt[27] = 0xff; // UDP checksum
  pkt[32] = 0xff; // BTH resv8a
  return ~crcBits(0xffffffff, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ...pkt]) >>> 0;
}

const OPCODES = Object.values(Opcode) as number[];
const LENGTHS = [0, 1, 2, 3, 4, 5, 7, 8, 60, 63, 64, 65, 200, 228, 252, 256, 257, 480, 508, 512, 1024, 4096];

function randomPath(f: RoceFrame, rnd: () => number): void {
  for (let i = 0; i < 6; i++) {
    f.dstMac[i] = rnd() & 0xff;
    f.srcMac[i] = rnd() & 0xff;
  }
  f.srcIp = rnd();
  f.dstIp = rnd();
  f.udpSrcPort = 0xc000 | (rnd() & 0x3fff);
  f.pkey = rnd() & 0xffff;
  f.destQp = rnd() & 0xffffff;
}

function randomFields(f: RoceFrame, rnd: () => number): void {
  f.ipId = rnd() & 0xffff;
  f.se = rnd() & 1;
  f.migReq = rnd() & 1;
  f.ackReq = rnd() & 1;
  f.psn = rnd() & 0xffffff;
  f.rethVaHi = rnd(); f.rethVaLo = rnd(); f.rethRkey = rnd(); f.rethDmaLength = rnd();
  f.atomicVaHi = rnd(); f.atomicVaLo = rnd(); f.atomicRkey = rnd();
  f.atomicSwapHi = rnd(); f.atomicSwapLo = rnd(); f.atomicCompareHi = rnd(); f.atomicCompareLo = rnd();
  f.aethSyndrome = rnd() & 0xff; f.aethMsn = rnd() & 0xffffff;
  f.atomicAckOrigHi = rnd(); f.atomicAckOrigLo = rnd();
  f.immDt = rnd(); f.iethRkey = rnd();
}

t.test('encodeFrameWith writes encodeFrame\'s bytes for every RC opcode, aligned or not', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const rnd = seeded(seed);
  // A frame buffer as the port's (its byte 2 word-aligned), and one a byte off.
  const buffers = [frameBuffer(4200), new Uint8Array(4201).subarray(1)];
  const plain = frameBuffer(4200);
  const f = new RoceFrame();
  const h = new HeaderTemplate();
  const bad: string[] = [];
  let frames = 0;
  for (const out of buffers) {
    for (const op of OPCODES) {
      const lengths = (OPCODE_FLAGS[op]! & OpFlag.PAYLOAD) !== 0 ? LENGTHS : [0];
      for (const len of lengths) {
        randomPath(f, rnd);
        h.set(f);
        randomFields(f, rnd);
        f.opcode = op;
        f.payloadLength = len;
        for (let i = 0; i < out.length; i++) out[i] = rnd() & 0xff; // every byte the builder leaves shows
        plain.set(out.subarray(0, 4200));
        const n = encodeFrame(plain, f);
        const want = [f.padCount, f.payloadOffset, f.packetLength, f.icrc];
        f.padCount = f.payloadOffset = f.packetLength = f.icrc = -1;
        // The template holds the path: the record's own path fields are not read.
        randomPath(f, rnd);
        const m = encodeFrameWith(out, f, h, frameWordsOf(out), false);
        frames++;
        const tag = `opcode ${op} length ${len} ${out.byteOffset % 4 === 2 ? 'aligned' : 'unaligned'}`;
        if (m !== n) bad.push(`${tag}: ${m} bytes, encodeFrame ${n}`);
        else if (!Buffer.from(out.subarray(0, n)).equals(Buffer.from(plain.subarray(0, n)))) bad.push(`${tag}: bytes`);
        const got = [f.padCount, f.payloadOffset, f.packetLength, f.icrc];
        if (got.join() !== want.join()) bad.push(`${tag}: record ${got.join()}, encodeFrame's ${want.join()}`);
        const bitwise = icrcOf(out);
        if (bitwise !== f.icrc) bad.push(`${tag}: ICRC ${f.icrc.toString(16)}, bitwise ${bitwise.toString(16)}`);
      }
    }
  }
  t.equal(frames, 2 * (18 * LENGTHS.length + 5), 'frames compared');
  t.same(bad, []);
});

t.test('a frame built with its ICRC deferred is encodeFrame\'s once completeIcrc wrote it', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const rnd = seeded(seed);
  const out = frameBuffer(4200);
  const plain = frameBuffer(4200);
  const words = frameWordsOf(out);
  const f = new RoceFrame();
  const h = new HeaderTemplate();
  const bad: string[] = [];
  for (const op of OPCODES) {
    for (const len of (OPCODE_FLAGS[op]! & OpFlag.PAYLOAD) !== 0 ? LENGTHS : [0]) {
      randomPath(f, rnd);
      h.set(f);
      randomFields(f, rnd);
      f.opcode = op;
      f.payloadLength = len;
      for (let i = 0; i < out.length; i++) out[i] = plain[i] = rnd() & 0xff;
      const n = encodeFrame(plain, f);
      const m = encodeFrameWith(out, f, h, words, true);
      completeIcrc(out, m);
      if (m !== n || !Buffer.from(out.subarray(0, n)).equals(Buffer.from(plain.subarray(0, n))))
        bad.push(`opcode ${op} length ${len}`);
    }
  }
  t.same(bad, []);
});

t.test('the ICRC register from a template is the bitwise CRC-32 of the masked headers', async (t) => {
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const rnd = seeded(seed);
  const lrh = crcBits(0xffffffff, [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
  const bad: string[] = [];
  for (let i = 0; i < 2000; i++) {
    // 40 random masked header bytes (IPv4, UDP, BTH, masked fields as ones), then the same with the
    // per-frame bytes cleared: the template's part.
    const block = Array.from({ length: 40 }, () => rnd() & 0xff);
    block[1] = block[8] = block[10] = block[11] = block[26] = block[27] = block[32] = 0xff;
    const ipLength = 44 + (rnd() % 0xffd0);
    block[2] = ipLength >>> 8;
    block[3] = ipLength & 0xff;
    block[24] = (ipLength - 20) >>> 8;
    block[25] = (ipLength - 20) & 0xff;
    const template = block.slice();
    for (const at of [2, 3, 4, 5, 24, 25, 28, 29, 36, 37, 38, 39]) template[at] = 0;
    const id = (block[4]! << 8) | block[5]!;
    const psn = (block[37]! << 16) | (block[38]! << 8) | block[39]!;
    const fast = templateHeadersRegister(crcBits(lrh, template) | 0, ipLength, id, block[28]!, block[29]!, block[36]!,
      psn) >>> 0;
    const want = crcBits(lrh, block);
    if (fast !== want) bad.push(`#${i}: ${fast.toString(16)}, bitwise ${want.toString(16)}`);
  }
  t.same(bad, []);
});

t.test('encodeFrameWith refuses what encodeFrame refuses; a template is for its own path only', async (t) => {
  const f = new RoceFrame();
  f.destQp = 0x123456;
  f.pkey = 0xffff;
  f.dstIp = 0x0a4d0001;
  f.udpSrcPort = 0xc001;
  f.dstMac.set([2, 0, 0, 0, 0, 9]);
  const h = new HeaderTemplate();
  t.notOk(h.holds(f.dstMac, f.dstIp, f.udpSrcPort, f.pkey, f.destQp), 'an empty template holds no path');
  h.set(f);
  t.ok(h.holds(f.dstMac, f.dstIp, f.udpSrcPort, f.pkey, f.destQp));
  t.notOk(h.holds(Uint8Array.from([2, 0, 0, 0, 0, 8]), f.dstIp, f.udpSrcPort, f.pkey, f.destQp), 'another MAC');
  t.notOk(h.holds(Uint8Array.from([3, 0, 0, 0, 0, 9]), f.dstIp, f.udpSrcPort, f.pkey, f.destQp), 'another MAC');
  t.notOk(h.holds(f.dstMac, f.dstIp + 1, f.udpSrcPort, f.pkey, f.destQp), 'another address');
  t.notOk(h.holds(f.dstMac, f.dstIp, f.udpSrcPort + 1, f.pkey, f.destQp), 'another port');
  t.notOk(h.holds(f.dstMac, f.dstIp, f.udpSrcPort, 0x8001, f.destQp), 'another P_Key');
  t.notOk(h.holds(f.dstMac, f.dstIp, f.udpSrcPort, f.pkey, 0x123457), 'another QP');
  const out = frameBuffer(2048);
  const bad = (o: Partial<RoceFrame>, buffer = out): void => {
    const g = new RoceFrame().copyFrom(f);
    Object.assign(g, { opcode: Opcode.RC_SEND_ONLY, payloadLength: 8, psn: 1 }, o);
    t.throws(() => encodeFrame(buffer, g), RangeError, `encodeFrame ${JSON.stringify(o)}`);
    const words = frameWordsOf(buffer);
    t.throws(() => encodeFrameWith(buffer, g, h, words, false), RangeError, `encodeFrameWith ${JSON.stringify(o)}`);
  };
  bad({ opcode: 0x15 });
  bad({ opcode: 0x64 });
  bad({ payloadLength: -1 });
  bad({ payloadLength: 1.5 });
  bad({ opcode: Opcode.RC_ACKNOWLEDGE, payloadLength: 4 });
  bad({ psn: 0x1000000 });
  bad({ payloadLength: 70000 });
  bad({}, new Uint8Array(60));
  f.destQp = 0x1000000;
  t.throws(() => new HeaderTemplate().set(f), RangeError, 'a destination QP of more than 24 bits');
});

t.test('the port\'s frames follow a QP\'s path when it changes', async (t) => {
  const nic = new TestNic();
  const [a, b] = nic.pair();
  const payload = nic.alloc(64);
  const mr = nic.mr(payload, ACCESS_MR.LOCAL_WRITE);
  const sent: Uint8Array[] = [];
  nic.model.controls.engine.onTransmit((frame, length) => { sent.push(frame.slice(0, length)); });
  const rf = new RoceFrame();
  const send = (): RoceFrame => {
    sent.length = 0;
    b.recv([{ va: payload.iova, lkey: mr.key, size: 64 }]);
    a.post({ sges: [{ va: payload.iova, lkey: mr.key, size: 64 }] });
    nic.runFor(1e6);
    const mac = sent[0]!.subarray(0, 6).slice();
    t.equal(parseFrame(sent[0]!, sent[0]!.length, rf, mac), ParseStatus.OK, 'the SEND parses (IPv4 checksum, ICRC)');
    t.equal(icrcOf(sent[0]!), rf.icrc, 'its ICRC, bitwise');
    return rf;
  };
  const first = send();
  t.equal(first.destQp, b.qpn);
  t.equal(first.pkey, 0xffff);
  // MODIFY_QP (RTS to RTS) may change the P_Key index and the address vector: the next frame has them.
  a.qp.pkey = 0x8123;
  a.qp.destMac.set([0x52, 0x54, 0, 0x12, 0x34, 0x56]);
  const second = send();
  t.equal(second.pkey, 0x8123, 'the new P_Key');
  t.same([...sent[0]!.subarray(0, 6)], [0x52, 0x54, 0, 0x12, 0x34, 0x56], 'the new destination MAC');
  nic.close();
});
