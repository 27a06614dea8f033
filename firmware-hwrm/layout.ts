/**
 * Byte layouts as tables of little-endian fields at fixed offsets: one source of truth per
 * structure, used by the driver to encode requests and by the software NIC to decode them
 * (and the other way round for responses). Field names keep the public header's spelling.
 *
 * Field kinds:
 *   u8/u16/u32        numbers
 *   u64               number (must stay below 2^53: addresses, sizes)
 *   u64n              bigint (full 64-bit masks and sizes such as 0xFFFF_FFFF_FFFF_FFFF)
 *   bytes             Uint8Array of `length` bytes (MACs, GIDs as wire bytes)
 * A field may name a bit range inside its word (`shift`, `bits`); several such fields share
 * one offset and are OR-ed together on encode. A u64 word's bit range (at most 32 bits wide)
 * may cross its two 32-bit halves, as sq_msn_search's next_psn (bits 24-47) does.
 *
 * Hot paths do not use encode/decode: scripts/generate-accessors.ts turns the tables into
 * word accessors (firmware-hwrm/roce/*.g.ts), so a table and its accessors cannot drift.
 */
import { TWO_POW_32 } from './words.ts';

export type FieldKind = 'u8' | 'u16' | 'u32' | 'u64' | 'u64n' | 'bytes';

export interface FieldSpec {
  readonly offset: number;
  readonly kind: FieldKind;
  /** For bytes. */
  readonly length?: number;
  /** For a bit range inside a u8/u16/u32 word, or (at most 32 bits wide) inside a u64 word. */
  readonly shift?: number;
  readonly bits?: number;
}

type ValueOf<F extends FieldSpec> = F['kind'] extends 'u64n' ? bigint : F['kind'] extends 'bytes' ? Uint8Array : number;

export type Values<S extends Record<string, FieldSpec>> = { [K in keyof S]: ValueOf<S[K]> };

const WIDTH: Record<FieldKind, number> = { u8: 1, u16: 2, u32: 4, u64: 8, u64n: 8, bytes: 0 };

export class Layout<S extends Record<string, FieldSpec>> {
  constructor(
    readonly name: string,
    /** Size in bytes as sent on the wire. */
    readonly size: number,
    readonly fields: S,
  ) {
    for (const [key, f] of Object.entries(fields)) {
      const width = f.kind === 'bytes' ? (f.length ?? 0) : WIDTH[f.kind];
      if (f.offset < 0 || f.offset + width > size) {
        throw new Error(`${name}.${key}: field outside the ${size}-byte structure`);
      }
      if (f.bits !== undefined && (f.kind === 'u64n' || f.kind === 'bytes')) {
        throw new Error(`${name}.${key}: bit ranges only in u8/u16/u32/u64`);
      }
      const shift = f.shift ?? 0;
      if (f.bits !== undefined && !(f.bits >= 1 && f.bits <= 32 && shift >= 0 && shift + f.bits <= width * 8)) {
        throw new Error(`${name}.${key}: bits ${f.shift ?? 0}+${f.bits} do not lie in a ${width * 8}-bit word`);
      }
    }
  }

  /** Encodes `values` (absent fields are zero) into a new buffer of `size` bytes, or into `into` at `at`. */
  encode(values: Partial<Values<S>>, into?: Uint8Array, at = 0): Uint8Array {
    const out = into ?? new Uint8Array(this.size);
    if (at < 0 || at + this.size > out.length) {
      throw new RangeError(`${this.name}: ${this.size} bytes do not fit at ${at} of ${out.length}`);
    }
    if (into) out.fill(0, at, at + this.size);
    const view = new DataView(out.buffer, out.byteOffset + at, this.size);
    for (const key in values) {
      const f = this.fields[key];
      if (!f) throw new Error(`${this.name}: no field ${key}`);
      writeField(view, f, values[key] as number | bigint | Uint8Array, `${this.name}.${key}`);
    }
    return out;
  }

  /** Decodes every field. `bytes` may be longer than the structure; if shorter, missing bytes read as zero. */
  decode(bytes: Uint8Array, at = 0): Values<S> {
    let src = bytes.subarray(at);
    if (src.length < this.size) {
      const padded = new Uint8Array(this.size);
      padded.set(src);
      src = padded;
    }
    const view = new DataView(src.buffer, src.byteOffset, this.size);
    const out: Record<string, unknown> = {};
    for (const key in this.fields) out[key] = readField(view, this.fields[key]!);
    return out as Values<S>;
  }
}

export function layout<S extends Record<string, FieldSpec>>(name: string, size: number, fields: S): Layout<S> {
  return new Layout(name, size, fields);
}

// Small constructors keep layout tables readable: `seq_id: u16(4)`.
export const u8 = (offset: number, shift?: number, bits?: number) => ({ offset, kind: 'u8' as const, shift, bits });
export const u16 = (offset: number, shift?: number, bits?: number) => ({ offset, kind: 'u16' as const, shift, bits });
export const u32 = (offset: number, shift?: number, bits?: number) => ({ offset, kind: 'u32' as const, shift, bits });
export const u64 = (offset: number, shift?: number, bits?: number) => ({ offset, kind: 'u64' as const, shift, bits });
export const u64n = (offset: number) => ({ offset, kind: 'u64n' as const });
export const bytes = (offset: number, length: number) => ({ offset, kind: 'bytes' as const, length });

function readWord(view: DataView, f: FieldSpec): number {
  switch (f.kind) {
    case 'u8': return view.getUint8(f.offset);
    case 'u16': return view.getUint16(f.offset, true);
    default: return view.getUint32(f.offset, true);
  }
}

function writeWord(view: DataView, f: FieldSpec, v: number): void {
  switch (f.kind) {
    case 'u8': view.setUint8(f.offset, v); break;
    case 'u16': view.setUint16(f.offset, v, true); break;
    default: view.setUint32(f.offset, v >>> 0, true);
  }
}

function readField(view: DataView, f: FieldSpec): number | bigint | Uint8Array {
  switch (f.kind) {
    case 'u64':
      if (f.bits !== undefined) return u64Bits(view, f);
      return view.getUint32(f.offset, true) + view.getUint32(f.offset + 4, true) * TWO_POW_32;
    case 'u64n': return view.getBigUint64(f.offset, true);
    case 'bytes': {
      const start = view.byteOffset + f.offset;
      return new Uint8Array(view.buffer.slice(start, start + (f.length ?? 0)));
    }
    default: {
      const word = readWord(view, f);
      if (f.bits === undefined) return word;
      return Math.floor(word / 2 ** (f.shift ?? 0)) % 2 ** f.bits;
    }
  }
}

function writeField(view: DataView, f: FieldSpec, value: number | bigint | Uint8Array, name: string): void {
  switch (f.kind) {
    case 'u64': {
      const v = value as number;
      if (f.bits !== undefined) { writeU64Bits(view, f, v, name); return; }
      if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`${name}: ${v} is not a u64 below 2^53`);
      view.setUint32(f.offset, v % TWO_POW_32, true);
      view.setUint32(f.offset + 4, Math.floor(v / TWO_POW_32), true);
      return;
    }
    case 'u64n': view.setBigUint64(f.offset, BigInt.asUintN(64, value as bigint), true); return;
    case 'bytes': {
      const b = value as Uint8Array;
      if (b.length !== f.length) throw new RangeError(`${name}: ${b.length} bytes, expected ${f.length}`);
      new Uint8Array(view.buffer, view.byteOffset + f.offset, b.length).set(b);
      return;
    }
    default: {
      const v = value as number;
      const width = WIDTH[f.kind] * 8;
      const bits = f.bits ?? width;
      if (!Number.isInteger(v) || v < 0 || v >= 2 ** bits) {
        throw new RangeError(`${name}: ${v} does not fit in ${bits} bits`);
      }
      if (f.bits === undefined) { writeWord(view, f, v); return; }
      const shift = f.shift ?? 0;
      const mask = (2 ** bits - 1) * 2 ** shift;
      const old = readWord(view, f);
      writeWord(view, f, ((old & ~mask) | (v * 2 ** shift)) >>> 0);
    }
  }
}

/** A bit range of a u64 word read from its two 32-bit halves (exact: at most 32 bits). */
function u64Bits(view: DataView, f: FieldSpec): number {
  const lo = view.getUint32(f.offset, true);
  const hi = view.getUint32(f.offset + 4, true);
  const shift = f.shift ?? 0;
  const bits = f.bits!;
  if (shift >= 32) return Math.floor(hi / 2 ** (shift - 32)) % 2 ** bits;
  if (shift + bits <= 32) return Math.floor(lo / 2 ** shift) % 2 ** bits;
  const lowBits = 32 - shift;
  return Math.floor(lo / 2 ** shift) + (hi % 2 ** (bits - lowBits)) * 2 ** lowBits;
}

function writeU64Bits(view: DataView, f: FieldSpec, v: number, name: string): void {
  const bits = f.bits!;
  if (!Number.isInteger(v) || v < 0 || v >= 2 ** bits) {
    throw new RangeError(`${name}: ${v} does not fit in ${bits} bits`);
  }
  const shift = f.shift ?? 0;
  // Each half takes the part of the range that lies in it.
  for (const [at, base] of [[0, 0], [4, 32]] as const) {
    const from = Math.max(shift, base);
    const to = Math.min(shift + bits, base + 32);
    if (from >= to) continue;
    const width = to - from;
    const part = Math.floor(v / 2 ** (from - shift)) % 2 ** width;
    const mask = (2 ** width - 1) * 2 ** (from - base);
    const old = view.getUint32(f.offset + at, true);
    view.setUint32(f.offset + at, ((old & ~mask) | (part * 2 ** (from - base))) >>> 0, true);
  }
}
