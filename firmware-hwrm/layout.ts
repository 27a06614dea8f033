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
import { compileCodec, type CompiledCodec } from './layout-codec.ts';
import type { FieldKind, FieldSpec } from './layout-field.ts';

export type { FieldKind, FieldSpec } from './layout-field.ts';

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

  /** Compiled from the table on first use (layout-codec.ts). */
  private compiled: CompiledCodec | undefined;
  private codec(): CompiledCodec {
    return this.compiled ??= compileCodec(this.name, this.fields);
  }

  /** Encodes `values` (absent fields are zero) into a new buffer of `size` bytes, or into `into` at `at`. */
  encode(values: Partial<Values<S>>, into?: Uint8Array, at = 0): Uint8Array {
    const out = into ?? new Uint8Array(this.size);
    if (at < 0 || at + this.size > out.length) {
      throw new RangeError(`${this.name}: ${this.size} bytes do not fit at ${at} of ${out.length}`);
    }
    if (into) out.fill(0, at, at + this.size);
    this.codec().encode(values, new DataView(out.buffer, out.byteOffset + at, this.size));
    return out;
  }

  /** Decodes every field. `bytes` may be longer than the structure; if shorter, missing bytes read as zero. */
  decode(bytes: Uint8Array, at = 0): Values<S> {
    let view: DataView;
    if (Number.isInteger(at) && at >= 0 && at + this.size <= bytes.length) {
      view = new DataView(bytes.buffer, bytes.byteOffset + at, this.size);
    } else {
      const padded = new Uint8Array(this.size);
      const src = bytes.subarray(at);
      padded.set(src.length > this.size ? src.subarray(0, this.size) : src);
      view = new DataView(padded.buffer, 0, this.size);
    }
    return this.codec().decode(view) as Values<S>;
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
