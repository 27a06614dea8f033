// Issue 10: the hot-path word accessors are generated from the Layout tables. A checked-in file
// that differs from what the tables generate fails here; so does an accessor that reads or
// writes other bits than its table says (each is checked against Layout.encode / decode).
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FieldSpec, Layout } from '../firmware-hwrm/layout.ts';
import { layout, u8, u16, u32, bytes } from '../firmware-hwrm/layout.ts';
import { generatedFiles } from '../scripts/accessors/generate.ts';
import { ACCESSOR_TARGETS } from '../scripts/accessors/targets.ts';
import { camel, emitLayout } from '../scripts/accessors/emit.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const seed = testSeed();
const random = seeded(seed);
/** The structure sits at this word of a larger array, so every accessor must honour `w`. */
const AT = 3;

type Module = Record<string, unknown>;
type Fn = (...args: number[]) => number;

function pascal(snake: string): string {
  const c = camel(snake);
  return c[0]!.toUpperCase() + c.slice(1);
}

function fn(m: Module, name: string): Fn {
  const f = m[name];
  if (typeof f !== 'function') throw new Error(`no accessor ${name}`);
  return f as Fn;
}

function bitsOf(f: FieldSpec): number {
  if (f.bits !== undefined) return f.bits;
  return { u8: 8, u16: 16, u32: 32, u64: 64, u64n: 64, bytes: 0 }[f.kind];
}

/** A random value that fits the field (a u64 stays below 2^53 so it is exact as a number). */
function valueFor(f: FieldSpec): number | bigint {
  const b = bitsOf(f);
  if (f.kind === 'u64n') return (BigInt(random()) << 32n) | BigInt(random());
  if (b === 64) return random() + (random() & 0x1fffff) * 2 ** 32;
  return b === 32 ? random() : random() % 2 ** b;
}

function words(bytesIn: Uint8Array): Uint32Array {
  const u = new Uint32Array(AT + bytesIn.length / 4 + 2);
  u.set(new Uint32Array(bytesIn.buffer, bytesIn.byteOffset, bytesIn.length / 4), AT);
  return u;
}

function structBytes(u: Uint32Array, size: number): Uint8Array {
  return new Uint8Array(u.buffer, AT * 4, size);
}

/** Random bytes, except that a u64 number field stays below 2^53 (the table decodes it exactly then). */
function randomBytes(l: Layout<Record<string, FieldSpec>>): Uint8Array {
  const b = new Uint8Array(l.size);
  for (let i = 0; i < l.size; i++) b[i] = random() & 0xff;
  for (const f of Object.values(l.fields)) {
    if (f.kind === 'u64' && f.bits === undefined) b[f.offset + 7] = 0, b[f.offset + 6]! &= 0x1f;
  }
  return b;
}

t.comment(`seed ${seed} (SEED=${seed} replays it)`);

t.test('every generated accessor file is what its tables generate', async (t) => {
  for (const { path, text } of generatedFiles()) {
    t.equal(readFileSync(root + path, 'utf8'), text, `${path} is fresh (npm run generate)`);
  }
});

t.test('getters, setters and word packers read and write exactly the bits their table names', async (t) => {
  for (const target of ACCESSOR_TARGETS) {
    const m = (await import(`../${target.path}`)) as Module;
    for (const [l] of target.layouts) await checkLayout(t, m, l as Layout<Record<string, FieldSpec>>);
  }
});

async function checkLayout(t: Test, m: Module, l: Layout<Record<string, FieldSpec>>): Promise<void> {
  const prefix = camel(l.name);
  const Prefix = pascal(l.name);
  const C = l.name.toUpperCase();
  t.equal(m[`${C}_WORDS`], l.size / 4, `${l.name}: ${l.size / 4} words`);
  for (let round = 0; round < 8; round++) {
    const original = randomBytes(l);
    const decoded = l.decode(original);
    for (const [name, f] of Object.entries(l.fields)) {
      const F = pascal(name);
      const u = words(original);
      const wide = bitsOf(f) === 64;
      if (wide) {
        const want = BigInt(decoded[name] as number | bigint);
        const hi = BigInt(fn(m, `${prefix}${F}Hi`)(u as never, AT));
        const got = (hi << 32n) | BigInt(fn(m, `${prefix}${F}Lo`)(u as never, AT));
        if (got !== want) t.fail(`${l.name}.${name}: read 0x${got.toString(16)}, table says 0x${want.toString(16)}`);
        const v = BigInt(valueFor(f));
        fn(m, `set${Prefix}${F}`)(u as never, AT, Number(v & 0xffffffffn), Number(v >> 32n));
        const after = l.decode(structBytes(u, l.size));
        if (BigInt(after[name] as number | bigint) !== v) t.fail(`${l.name}.${name}: set wrote the wrong bits`);
        checkOthersKept(t, l, name, decoded, after);
        continue;
      }
      const got = fn(m, `${prefix}${F}`)(u as never, AT);
      if (got !== decoded[name]) t.fail(`${l.name}.${name}: read ${got}, table says ${String(decoded[name])}`);
      const word = m[`${C}_${name.toUpperCase()}_WORD`] as number;
      const shift = m[`${C}_${name.toUpperCase()}_SHIFT`] as number;
      const mask = m[`${C}_${name.toUpperCase()}_MASK`] as number;
      if (mask !== 2 ** bitsOf(f) - 1) t.fail(`${l.name}.${name}: MASK ${mask} is not ${bitsOf(f)} bits`);
      const of = m[`${prefix}${F}Of`] as Fn | undefined;
      if (of) {
        if (of(u[AT + word]!) !== decoded[name]) t.fail(`${l.name}.${name}: ...Of reads other bits`);
        if (((u[AT + word]! >>> shift) & mask) >>> 0 !== decoded[name]) {
          t.fail(`${l.name}.${name}: WORD/SHIFT/MASK name other bits`);
        }
      }
      const v = valueFor(f) as number;
      fn(m, `set${Prefix}${F}`)(u as never, AT, v);
      const after = l.decode(structBytes(u, l.size));
      if (after[name] !== v) t.fail(`${l.name}.${name}: set ${v}, table reads ${String(after[name])}`);
      checkOthersKept(t, l, name, decoded, after);
    }
    checkPackers(t, m, l);
  }
  t.pass(`${l.name}: ${Object.keys(l.fields).length} fields`);
}

function checkOthersKept(
  t: Test, l: Layout<Record<string, FieldSpec>>, name: string,
  before: Record<string, unknown>, after: Record<string, unknown>,
): void {
  for (const other of Object.keys(l.fields)) {
    if (other !== name && String(after[other]) !== String(before[other])) {
      t.fail(`${l.name}: setting ${name} changed ${other}`);
    }
  }
}

/** Each word packer equals the table's encoding of the same values in that word. */
function checkPackers(t: Test, m: Module, l: Layout<Record<string, FieldSpec>>): void {
  const prefix = camel(l.name);
  for (let k = 0; k < l.size / 4; k++) {
    const pack = m[`${prefix}Word${k}`] as Fn | undefined;
    const params = pack ? paramNames(pack) : [];
    const values: Record<string, number> = {};
    for (const [name, f] of Object.entries(l.fields)) {
      if (params.includes(camel(name))) values[name] = valueFor(f) as number;
    }
    const u = words(l.encode(values as never));
    if (pack) {
      const got = pack(...params.map((p) => values[Object.keys(values).find((n) => camel(n) === p)!]!));
      if (got !== u[AT + k]) {
        t.fail(`${l.name}: word ${k} packs 0x${got.toString(16)}, table encodes 0x${u[AT + k]!.toString(16)}`);
      }
    }
    const set = fn(m, `set${pascal(l.name)}Word${k}`);
    const v = random();
    set(u as never, AT, v);
    if (u[AT + k] !== v) t.fail(`${l.name}: setWord${k} stores elsewhere`);
  }
}

function paramNames(f: Fn): string[] {
  const src = f.toString();
  const list = src.slice(src.indexOf('(') + 1, src.indexOf(')')).split(',');
  return list.map((s) => s.trim().split(':')[0]!.trim()).filter(Boolean);
}

t.test('the generator refuses tables it cannot give honest accessors', async (t) => {
  t.throws(() => emitLayout(layout('overlap', 4, { a: u8(0), b: u16(0) }), 'made up'), /share bit/);
  t.throws(() => emitLayout(layout('mac', 8, { mac: bytes(0, 6) }), 'made up'), /byte-string/);
  t.throws(() => emitLayout(layout('odd', 6, { a: u16(0) }), 'made up'), /whole 32-bit words/);
  t.doesNotThrow(() => emitLayout(layout('ok', 8, { a: u32(0, 0, 3), b: u32(0, 3, 29), c: u32(4) }), 'made up'));
});

declare namespace Tap { type Test = import('tap').Test; }
