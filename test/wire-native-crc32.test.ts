/**
 * The native CRC-32 the ICRC uses for long frames where libdeflate is installed
 * (drivers/emu/host/native-crc32.ts, handed to the model by its host: host/long-crc32.ts): the same
 * function as zlib's at every length, offset and continued prefix, and the ICRC of long frames the
 * same with it and without it (child processes compute them by the model's JS CRC alone, by the
 * host's with RIG_BNXT_NO_NATIVE_CRC=1, node:zlib's, and by the host's as it is here).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { nativeCrc32 } from '../drivers/emu/host/native-crc32.ts';
import { rangeView } from '../drivers/emu/model/wire/range-view.ts';
import { computeIcrc } from '../drivers/emu/model/wire/icrc.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';

const native = nativeCrc32();

t.test('libdeflate CRC-32 agrees with zlib at every offset, length and prefix', { skip: native === null
  ? 'libdeflate (Debian libdeflate0) or koffi not loadable here: the ICRC uses node:zlib' : false }, async (t) => {
  const rnd = seeded(testSeed());
  const data = new Uint8Array(5000);
  for (let i = 0; i < data.length; i++) data[i] = rnd() & 0xff;
  const bad: string[] = [];
  for (let start = 0; start < 16; start++) {
    for (let len = 0; len < 4200; len += 1 + (rnd() % 97)) {
      const want = zlibCrc32(data.subarray(start, start + len)) >>> 0;
      if (native!.crc32(0, rangeView(data, start, data.length), len) !== want) bad.push(`[${start}, +${len})`);
      const cut = len >> 1;
      const prefix = zlibCrc32(data.subarray(start, start + cut)) >>> 0;
      const continued = native!.crc32(prefix, data.subarray(start + cut), len - cut);
      if (continued !== want) bad.push(`continued [${start}, +${len})`);
    }
  }
  t.same(bad, []);
});

t.test('rangeView keeps one view per array until the range moves', async (t) => {
  const a = new Uint8Array(64);
  const v = rangeView(a, 10, a.length);
  t.equal(v.byteOffset, 10);
  t.equal(v.length, 54);
  t.equal(rangeView(a, 10, a.length), v, 'the same start: the same view');
  const w = rangeView(a, 12, a.length);
  t.not(w, v);
  t.equal(w.byteOffset, 12);
});

/**
 * ICRCs of packets whose covered bytes run from 200 to 4200, over random contents, as a JSON array
 * after the name of the long frames' CRC: the model's JS CRC alone ('js'), or with the host's ('host').
 */
const ICRC_SCRIPT = `
import { computeIcrc, useLongCrc32 } from './drivers/emu/model/wire/icrc.ts';
import { hostLongCrc32 } from './drivers/emu/host/long-crc32.ts';
import { seeded } from './scripts/stress/seeded.ts';
const withHost = process.argv.at(-2) === 'host';
if (withHost) useLongCrc32(hostLongCrc32);
const rnd = seeded(Number(process.argv.at(-1)));
const frame = new Uint8Array(4300);
for (let i = 0; i < frame.length; i++) frame[i] = rnd() & 0xff;
const out = [];
for (let end = 14 + 40 + 200 + 4; end < 4300; end += 1 + (rnd() % 61)) out.push(computeIcrc(frame, 14, end));
console.log(JSON.stringify({ crc: withHost ? hostLongCrc32()?.name ?? 'JS' : 'JS', icrcs: out }));
`;

t.test('long frames get the same ICRC with the native CRC-32 and without it', async (t) => {
  const seed = testSeed();
  const run = (crc: 'js' | 'host', env: Record<string, string>) => {
    const r = spawnSync(process.execPath, ['--import', './scripts/register-ts.mjs', '--input-type=module', '-e',
      ICRC_SCRIPT, '--', crc, String(seed)], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`child failed: ${r.stderr}`);
    return JSON.parse(r.stdout) as { crc: string; icrcs: number[] };
  };
  const js = run('js', {});
  const zlib = run('host', { RIG_BNXT_NO_NATIVE_CRC: '1' });
  const here = run('host', {});
  t.ok(js.icrcs.length > 50, `${js.icrcs.length} packets`);
  t.equal(js.crc, 'JS');
  t.equal(zlib.crc, 'node:zlib', 'the host without libdeflate hands in node:zlib\'s CRC');
  t.equal(here.crc, native === null ? 'node:zlib' : 'libdeflate', 'and libdeflate\'s where it loads');
  t.same(zlib.icrcs, js.icrcs, 'node:zlib\'s CRC gives the JS CRC\'s ICRCs');
  t.same(here.icrcs, js.icrcs, 'and so does libdeflate\'s, where it loads');
  const without = js.icrcs;
  // And this process's own ICRC (the JS CRC: no model here handed it another) matches the first of them.
  const rnd = seeded(seed);
  const frame = new Uint8Array(4300);
  for (let i = 0; i < frame.length; i++) frame[i] = rnd() & 0xff;
  t.equal(computeIcrc(frame, 14, 14 + 40 + 200 + 4), without[0]);
});
