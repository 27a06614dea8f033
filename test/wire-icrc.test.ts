/**
 * The ICRC and the IPv4 checksum of built frames, recomputed by Python: with zlib.crc32 and
 * the masking rules of IBA annex A17 (as rxe_icrc.c applies them) written out again in the script, and with scapy's
 * RoCE layer (scapy.contrib.roce) when it is installed.
 */
import t from 'tap';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { buildFrame } from '../drivers/emu/model/wire/build.ts';
import { crc32, crc32Update } from '../drivers/emu/model/wire/crc32.ts';
import { OPCODE_FLAGS, OpFlag, Opcode } from '../drivers/emu/model/wire/opcodes.ts';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { findPython, runPython } from './helpers/python.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';
import { DST_MAC, SRC_MAC } from './helpers/wire-fixtures.ts';

t.test('CRC-32 check value and agreement with zlib at every offset and split', async (t) => {
  const check = new TextEncoder().encode('123456789');
  t.equal(crc32(check), 0xcbf43926, 'the CRC-32 check value');
  t.equal(crc32(new Uint8Array(0)), 0);
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const rnd = seeded(seed);
  const data = new Uint8Array(3000);
  for (let i = 0; i < data.length; i++) data[i] = rnd() & 0xff;
  const bad: string[] = [];
  for (let start = 0; start < 20; start++) {
    for (let end = start; end < 300; end += 1 + (rnd() % 5)) {
      const want = zlibCrc32(data.subarray(start, end)) >>> 0;
      if (crc32(data, start, end) !== want) bad.push(`[${start}, ${end})`);
      const mid = start + ((end - start) >> 1);
      if (crc32Update(crc32(data, start, mid), data, mid, end) !== want) bad.push(`split [${start}, ${mid}, ${end})`);
    }
  }
  t.same(bad, []);
  t.equal(crc32(data), zlibCrc32(data) >>> 0, '3000 bytes');
  t.throws(() => crc32Update(0, data, 10, 3001), RangeError);
});

/** A spread of frames: every RC opcode, payload lengths around every pad count, random fields. */
function makeFrames(seed: number): { hex: string; icrc: number; opcode: number; destQp: number; psn: number }[] {
  const rnd = seeded(seed);
  const out: { hex: string; icrc: number; opcode: number; destQp: number; psn: number }[] = [];
  const buf = new Uint8Array(4200);
  const payload = new Uint8Array(4096);
  for (let i = 0; i < payload.length; i++) payload[i] = rnd() & 0xff;
  const f = new RoceFrame();
  f.dstMac.set(DST_MAC);
  f.srcMac.set(SRC_MAC);
  // 228-256 and 480-513: covered bytes on both sides of where the ICRC goes from the JS CRC to
  // libdeflate's (256, where it is installed) and to zlib's (512, where it is not).
  const lengths = [0, 1, 2, 3, 4, 5, 7, 8, 63, 228, 236, 240, 244, 252, 256, 480, 500, 508, 509, 513, 1024, 4096];
  for (const op of Object.values(Opcode)) {
    const hasPayload = (OPCODE_FLAGS[op]! & OpFlag.PAYLOAD) !== 0;
    for (const len of hasPayload ? lengths : [0]) {
      f.opcode = op;
      f.payloadLength = len;
      f.srcIp = rnd();
      f.dstIp = rnd();
      f.ipId = rnd() & 0xffff;
      f.udpSrcPort = 0xc000 | (rnd() & 0x3fff);
      f.se = rnd() & 1;
      f.migReq = rnd() & 1;
      f.ackReq = rnd() & 1;
      f.pkey = rnd() & 0xffff;
      f.destQp = rnd() & 0xffffff;
      f.psn = rnd() & 0xffffff;
      f.rethVaHi = rnd(); f.rethVaLo = rnd(); f.rethRkey = rnd(); f.rethDmaLength = rnd();
      f.atomicVaHi = rnd(); f.atomicVaLo = rnd(); f.atomicRkey = rnd();
      f.atomicSwapHi = rnd(); f.atomicSwapLo = rnd(); f.atomicCompareHi = rnd(); f.atomicCompareLo = rnd();
      f.aethSyndrome = rnd() & 0xff; f.aethMsn = rnd() & 0xffffff;
      f.atomicAckOrigHi = rnd(); f.atomicAckOrigLo = rnd();
      f.immDt = rnd(); f.iethRkey = rnd();
      const n = buildFrame(buf, f, payload, rnd() % (payload.length - len + 1));
      out.push({
        hex: Buffer.from(buf.subarray(0, n)).toString('hex'), icrc: f.icrc, opcode: op, destQp: f.destQp, psn: f.psn,
      });
    }
  }
  return out;
}

// Python: the RoCEv2 ICRC of IBA annex A17 (as rxe_icrc.c computes it), written out again without our code.
const ZLIB_SCRIPT = String.raw`
import json, struct, sys, zlib
out = []
for h in json.load(sys.stdin):
    fr = bytes.fromhex(h)
    ip = fr[14:]
    ihl = (ip[0] & 15) * 4
    total = struct.unpack('!H', ip[2:4])[0]
    pkt = bytearray(ip[:total])
    s = sum(struct.unpack('!%dH' % (ihl // 2), bytes(pkt[:ihl])))
    while s > 0xffff:
        s = (s & 0xffff) + (s >> 16)
    pkt[1] = 0xff               # TOS
    pkt[8] = 0xff               # TTL
    pkt[10:12] = b'\xff\xff'    # header checksum
    pkt[ihl + 6:ihl + 8] = b'\xff\xff'  # UDP checksum
    pkt[ihl + 8 + 4] = 0xff     # BTH resv8a
    crc = zlib.crc32(b'\xff' * 8 + bytes(pkt[:-4])) & 0xffffffff
    wire = struct.unpack('<I', bytes(pkt[-4:]))[0]
    out.append([crc, wire, s])
print(json.dumps(out))
`;

// Python: scapy's own ICRC (BTH.compute_icrc) and BTH field decoding.
const SCAPY_SCRIPT = String.raw`
import json, struct, sys
from scapy.layers.l2 import Ether
from scapy.contrib.roce import BTH
out = []
for h in json.load(sys.stdin):
    fr = bytes.fromhex(h)
    # Cut the Ethernet padding of short frames: scapy would keep it as the BTH's payload.
    total = struct.unpack('!H', fr[16:18])[0]
    p = Ether(fr[:14 + total])
    b = p[BTH]
    computed = struct.unpack('<I', b.compute_icrc(None))[0]
    out.append([computed, b.icrc, b.opcode, b.dqpn, b.psn])
print(json.dumps(out))
`;

const python = findPython();
const pythonWithScapy = findPython('from scapy.contrib.roce import BTH');

t.test('Python zlib.crc32 with the masking rules gives every built frame\'s ICRC', {
  skip: python ? false : 'python3 is not installed: independent ICRC check skipped',
}, async (t) => {
  const py = python!;
  const seed = testSeed();
  t.comment(`seed ${seed}`);
  const frames = makeFrames(seed);
  const got = runPython<[number, number, number][]>(py, ZLIB_SCRIPT, frames.map((x) => x.hex));
  const bad: string[] = [];
  frames.forEach((x, i) => {
    const [crc, wire, ipSum] = got[i]!;
    if (crc !== x.icrc) bad.push(`#${i} opcode ${x.opcode}: python ${crc.toString(16)} ours ${x.icrc.toString(16)}`);
    if (wire !== x.icrc) bad.push(`#${i}: wire bytes ${wire.toString(16)} are not the ICRC little-endian`);
    if (ipSum !== 0xffff) bad.push(`#${i}: IPv4 header checksum does not verify`);
  });
  t.equal(frames.length, 18 * 22 + 5, 'frames checked: 18 opcodes with payload x 22 lengths, 5 without');
  t.same(bad, []);
});

t.test('scapy\'s RoCE layer computes the same ICRC and reads the same BTH', {
  skip: pythonWithScapy ? false
    : 'python3-scapy is not installed (scapy.contrib.roce not importable): scapy cross-check skipped; CI installs ' +
    'python3-scapy',
}, async (t) => {
  const py = pythonWithScapy!;
  const frames = makeFrames(testSeed());
  const got = runPython<[number, number, number, number, number][]>(py, SCAPY_SCRIPT, frames.map((x) => x.hex));
  const bad: string[] = [];
  frames.forEach((x, i) => {
    const [computed, wire, opcode, dqpn, psn] = got[i]!;
    if (computed !== x.icrc)
      bad.push(`#${i} opcode ${x.opcode}: scapy ${computed.toString(16)} ours ${x.icrc.toString(16)}`);
    if (opcode !== x.opcode || dqpn !== x.destQp || psn !== x.psn)
      bad.push(`#${i}: scapy read opcode ${opcode} qp ${dqpn} psn ${psn}`);
    void wire;
  });
  t.same(bad, []);
});
