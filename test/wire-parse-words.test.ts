// parseReceived reads a frame's headers as words when the frame buffer carries its memory's word view
// (frame-memory.ts: every buffer of the port and the cables): the hand-written fixtures parse to their
// records that way, and any change to a frame (a byte flipped, the frame cut short) gives the status and
// the fields the byte-wise path gives for the same bytes in an array made elsewhere: parseWords, the
// copy, against parse, its definition (test/tidy.test.ts PERF_FORKS).
import t from 'tap';
import { parseReceived } from '../drivers/emu/model/wire/parse.ts';
import { frameBuffer, ownWordView } from '../drivers/emu/model/wire/frame-memory.ts';
import { ParseStatus, parseStatusName } from '../drivers/emu/model/wire/parse-status.ts';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { DST_MAC, FIXTURES, fixIpChecksum } from './helpers/wire-fixtures.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';

/** The fields parseReceived fills on OK. */
const FIELDS = [
  'opcode', 'se', 'pkey', 'destQp', 'ackReq', 'psn', 'srcIp', 'dstIp', 'payloadOffset', 'payloadLength',
  'rethVaHi', 'rethVaLo', 'rethRkey', 'rethDmaLength', 'aethSyndrome', 'aethMsn', 'immDt', 'iethRkey',
] as const;

const buf = frameBuffer(256);
/** The same bytes in an array with no word view: read byte by byte. */
const plain = new Uint8Array(256);
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const words = LITTLE_ENDIAN ? ownWordView(buf) ?? null : null;
const byWords = new RoceFrame();
const byBytes = new RoceFrame();

function fields(f: RoceFrame): Record<string, number> {
  const o: Record<string, number> = {};
  for (const k of FIELDS) o[k] = f[k];
  return o;
}

t.test('the frame buffers take the word path on this machine', async (t) => {
  t.ok(words !== null || !LITTLE_ENDIAN, 'little-endian: a word view');
  t.equal(ownWordView(plain), undefined, 'an array made elsewhere has none');
});

t.test('each fixture parses to its record by words', async (t) => {
  if (words === null) return;
  for (const fx of FIXTURES) {
    buf.set(fx.bytes);
    for (const trusted of [false, true]) {
      const st = parseReceived(buf, fx.bytes.length, byWords, DST_MAC, trusted);
      t.equal(parseStatusName(st), 'OK', `${fx.name} trusted ${trusted}`);
      for (const k of FIELDS) {
        if (k === 'payloadOffset') continue;
        if (fx.record[k] !== new RoceFrame()[k]) t.equal(byWords[k], fx.record[k], `${fx.name} ${k}`);
      }
      t.equal(byWords.srcIp, fx.record.srcIp, `${fx.name} srcIp`);
      t.equal(byWords.dstIp, fx.record.dstIp, `${fx.name} dstIp`);
      t.equal(byWords.payloadLength, fx.payload.length, `${fx.name} payload length`);
      t.same(buf.subarray(byWords.payloadOffset, byWords.payloadOffset + fx.payload.length), fx.payload,
        `${fx.name} payload offset`);
    }
  }
});

t.test('a changed or cut frame: the same status and fields by words as by bytes', async (t) => {
  if (words === null) return;
  const seed = testSeed();
  const next = seeded(seed);
  const rnd = (): number => next() / 2 ** 32;
  const other = Uint8Array.from([0x52, 0x54, 0x00, 0x77, 0x00, 0x02]);
  const seen = new Set<number>();
  let mismatches = 0;
  for (let n = 0; n < 20000; n++) {
    const fx = FIXTURES[n % FIXTURES.length]!;
    buf.fill(0);
    buf.set(fx.bytes);
    let length = fx.bytes.length;
    const changes = 1 + Math.floor(rnd() * 3);
    for (let c = 0; c < changes; c++) {
      const r = rnd();
      if (r < 0.15) length = Math.floor(rnd() * (length + 1));
      else {
        // Mostly in the headers, where the checks are.
        const at = r < 0.85 ? Math.floor(rnd() * 54) : Math.floor(rnd() * fx.bytes.length);
        buf[at] = rnd() < 0.5 ? buf[at]! ^ (1 << Math.floor(rnd() * 8)) : Math.floor(rnd() * 256);
      }
    }
    // Half the time the IPv4 checksum is made right again, so the checks after it are reached too.
    if (rnd() < 0.5) fixIpChecksum(buf);
    const mac = rnd() < 0.1 ? other : rnd() < 0.1 ? null : DST_MAC;
    const trusted = rnd() < 0.5;
    byWords.copyFrom(new RoceFrame());
    byBytes.copyFrom(new RoceFrame());
    plain.set(buf);
    const a = parseReceived(buf, length, byWords, mac, trusted);
    const b = parseReceived(plain, length, byBytes, mac, trusted);
    seen.add(b);
    const same = a === b && (a !== ParseStatus.OK || FIELDS.every((k) => byWords[k] === byBytes[k]));
    if (!same && mismatches++ < 5) {
      t.fail(`seed ${seed} case ${n} (${fx.name}, length ${length}, trusted ${trusted})`, {
        found: [parseStatusName(a), fields(byWords)], wanted: [parseStatusName(b), fields(byBytes)],
      });
    }
  }
  t.equal(mismatches, 0, `every case agrees (seed ${seed})`);
  t.ok(seen.size >= 15, `the changes reached many checks: ${[...seen].map(parseStatusName).join(' ')}`);
});
