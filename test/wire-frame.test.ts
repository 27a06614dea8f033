import t from 'tap';
import { buildFrame, encodeFrame, frameBytesFor, payloadOffsetFor } from '../drivers/emu/model/wire/build.ts';
import { parseFrame } from '../drivers/emu/model/wire/parse.ts';
import { ParseStatus, parseStatusName } from '../drivers/emu/model/wire/parse-status.ts';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { Opcode } from '../drivers/emu/model/wire/opcodes.ts';
import { DST_MAC, FIXTURES, SEND_ONLY, type Fixture } from './helpers/wire-fixtures.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** The record fields a parse must give back for a fixture. */
function expectedFields(fx: Fixture): Record<string, number> {
  const r = fx.record;
  const want: Record<string, number> = {
    srcIp: r.srcIp, dstIp: r.dstIp, ipId: 0, ttl: 64, tos: 0, udpSrcPort: 0xc001, udpDstPort: 4791,
    opcode: r.opcode, se: r.se, migReq: 0, tver: 0, pkey: 0xffff, resv8a: 0, destQp: r.destQp, ackReq: r.ackReq,
    psn: r.psn, payloadLength: fx.payload.length, packetLength: fx.bytes.length, icrc: fx.icrc,
  };
  if (r.opcode === Opcode.RC_RDMA_READ_REQUEST)
    Object.assign(want, {
      rethVaHi: r.rethVaHi, rethVaLo: r.rethVaLo, rethRkey: r.rethRkey, rethDmaLength: r.rethDmaLength,
    });
  if (r.opcode === Opcode.RC_ACKNOWLEDGE || r.opcode === Opcode.RC_RDMA_READ_RESPONSE_FIRST)
    Object.assign(want, { aethSyndrome: r.aethSyndrome, aethMsn: r.aethMsn });
  return want;
}

function pick(f: RoceFrame, keys: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of keys) out[k] = (f as unknown as Record<string, number>)[k]!;
  return out;
}

for (const fx of FIXTURES) {
  t.test(`${fx.name}: builds the hand-written bytes`, async (t) => {
    const out = new Uint8Array(256).fill(0xee);
    const n = buildFrame(out, fx.record, fx.payload, 0);
    t.equal(n, fx.bytes.length);
    t.equal(hex(out.subarray(0, n)), hex(fx.bytes));
    t.equal(fx.record.icrc, fx.icrc);
  });

  t.test(`${fx.name}: builds in place around a payload already written`, async (t) => {
    const out = new Uint8Array(256);
    out.set(fx.payload, payloadOffsetFor(fx.record.opcode));
    const n = encodeFrame(out, fx.record);
    t.equal(hex(out.subarray(0, n)), hex(fx.bytes));
  });

  t.test(`${fx.name}: parses the hand-written bytes`, async (t) => {
    const f = new RoceFrame();
    t.equal(parseStatusName(parseFrame(fx.bytes, fx.bytes.length, f, DST_MAC)), 'OK');
    const want = expectedFields(fx);
    t.same(pick(f, Object.keys(want)), want);
    t.equal(hex(f.dstMac), '525400770001');
    t.equal(hex(f.srcMac), '02626e000001');
    t.equal(hex(fx.bytes.subarray(f.payloadOffset, f.payloadOffset + f.payloadLength)), hex(fx.payload));
  });

  t.test(`${fx.name}: every truncation is an error, never a throw`, async (t) => {
    const f = new RoceFrame();
    for (let len = 0; len < fx.bytes.length; len++) {
      const status = parseFrame(fx.bytes.subarray(0, len), len, f, null);
      if (status === ParseStatus.OK) t.fail(`OK at ${len} of ${fx.bytes.length} bytes`);
    }
    // Every length below the end of the IPv4 packet is TRUNCATED (nothing else is wrong).
    let allTruncated = true;
    for (let len = 0; len < fx.bytes.length; len++)
      if (parseFrame(fx.bytes, len, f, null) !== ParseStatus.TRUNCATED) allTruncated = false;
    t.ok(allTruncated, 'TRUNCATED for every length short of the packet');
  });

  t.test(`${fx.name}: a changed ICRC byte is BAD_ICRC`, async (t) => {
    const f = new RoceFrame();
    for (let i = 1; i <= 4; i++) {
      const bad = fx.bytes.slice();
      bad[bad.length - i]! ^= 0x01;
      t.equal(parseStatusName(parseFrame(bad, bad.length, f, null)), 'BAD_ICRC', `ICRC byte ${4 - i}`);
    }
  });

  t.test(`${fx.name}: every single-bit flip is caught unless the field is outside every check`, async (t) => {
    // Not covered by the IPv4 checksum or the ICRC, by design: the source MAC (no FCS in a
    // datagram), the UDP checksum and BTH byte 4 (both masked to ones in the ICRC).
    const uncovered = new Set([6, 7, 8, 9, 10, 11, 14 + 20 + 6, 14 + 20 + 7, 14 + 20 + 8 + 4]);
    const f = new RoceFrame();
    const missed: string[] = [];
    for (let i = 0; i < fx.bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const bad = fx.bytes.slice();
        bad[i]! ^= 1 << bit;
        const ok = parseFrame(bad, bad.length, f, DST_MAC) === ParseStatus.OK;
        if (ok !== uncovered.has(i)) missed.push(`byte ${i} bit ${bit}: ${ok ? 'accepted' : 'refused'}`);
      }
    }
    t.same(missed, []);
  });
}

t.test('a frame shorter than 60 bytes is padded to the Ethernet minimum, and the padding is ignored', async (t) => {
  const f = new RoceFrame().copyFrom(SEND_ONLY.record);
  f.payloadLength = 0;
  f.ackReq = 1;
  const out = new Uint8Array(128).fill(0xaa);
  const n = encodeFrame(out, f);
  t.equal(frameBytesFor(Opcode.RC_SEND_ONLY, 0), 60);
  t.equal(n, 60);
  t.equal(f.packetLength, 58, 'IPv4 packet + Ethernet header = 54 + ICRC 4');
  t.same([...out.subarray(58, 60)], [0, 0], 'Ethernet padding is zero');
  t.same([out[16], out[17]], [0, 44], 'IPv4 total length counts no Ethernet padding');
  const p = new RoceFrame();
  t.equal(parseStatusName(parseFrame(out, n, p, null)), 'OK');
  t.equal(p.payloadLength, 0);
  t.equal(parseStatusName(parseFrame(out, 58, p, null)), 'OK', 'also without the padding');
  out[58] = 0x55;
  t.equal(parseStatusName(parseFrame(out, n, p, null)), 'OK', 'padding contents do not matter');
});

t.test('the builder refuses records the wire cannot carry', async (t) => {
  const out = new Uint8Array(256);
  const f = new RoceFrame().copyFrom(SEND_ONLY.record);
  f.opcode = 0x15;
  t.throws(() => encodeFrame(out, f), RangeError, 'reserved opcode');
  f.opcode = Opcode.RC_ACKNOWLEDGE;
  f.payloadLength = 4;
  t.throws(() => encodeFrame(out, f), RangeError, 'payload on an ACK');
  f.opcode = Opcode.RC_SEND_ONLY;
  f.psn = 0x1000000;
  t.throws(() => encodeFrame(out, f), RangeError, 'PSN beyond 24 bits');
  f.psn = 0;
  f.payloadLength = 300;
  t.throws(() => encodeFrame(out, f), RangeError, 'frame larger than the buffer');
});
