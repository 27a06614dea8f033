/**
 * A Layout's encoder and decoder compiled once from its table: straight-line code with every
 * offset, shift and mask a constant, so a command costs a few DataView calls per field and one
 * object literal per decode. The table-walking codec this replaces (a switch per field, `2 **`
 * per bit range, an object grown field by field) took 5-15 us per command structure, most of a
 * queue pair's make + connect + destroy on the software NIC besides its memory work.
 *
 * The compiled code does what the table says, no more: the same checks with the same
 * messages (a value that does not fit is a RangeError, an unknown field an Error), absent
 * fields left zero, and fields written in the order the caller's object lists them (bit
 * ranges of one word are read, masked and OR-ed in, so their order does not matter).
 * Field names come from the layout tables in this folder, never from input, and each is
 * checked to be an identifier before it is put in the generated source.
 */
import type { FieldSpec } from './layout-field.ts';

export interface CompiledCodec {
  /** Writes `values` into `view` (the structure's bytes, zeroed by the caller). */
  readonly encode: (values: object, view: DataView) => void;
  /** Every field of the structure in `view`, in table order. */
  readonly decode: (view: DataView) => Record<string, unknown>;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const BYTES: Record<FieldSpec['kind'], number> = { u8: 1, u16: 2, u32: 4, u64: 8, u64n: 8, bytes: 0 };
const GET: Record<string, string> = { u8: 'getUint8', u16: 'getUint16', u32: 'getUint32' };
const SET: Record<string, string> = { u8: 'setUint8', u16: 'setUint16', u32: 'setUint32' };

export function compileCodec(name: string, fields: Record<string, FieldSpec>): CompiledCodec {
  const keys = Object.keys(fields);
  for (const key of keys) if (!IDENTIFIER.test(key)) throw new Error(`${name}: field name ${JSON.stringify(key)}`);
  const decodeBody = `return {\n${keys.map((k) => `  ${k}: ${readExpr(fields[k]!)},`).join('\n')}\n};`;
  const cases = keys.map((k) => `case ${JSON.stringify(k)}: {\n${writeStmt(fields[k]!, `${name}.${k}`)}\nbreak; }`);
  const encodeBody = `for (const key in values) {\nconst value = values[key];\nswitch (key) {\n${cases.join('\n')}\n` +
    `default: throw new Error(${JSON.stringify(`${name}: no field `)} + key);\n}\n}`;
  const decode = new Function('v', decodeBody) as CompiledCodec['decode'];
  const encode = new Function('values', 'v', encodeBody) as CompiledCodec['encode'];
  return { encode, decode };
}

/** A word read (u8/u16/u32) at `offset`. */
function word(kind: string, offset: number): string {
  return kind === 'u8' ? `v.getUint8(${offset})` : `v.${GET[kind]}(${offset}, true)`;
}

/** `bits` bits from `shift` of an unsigned 32-bit expression (bits + shift <= 32). */
function bitsOf(expr: string, shift: number, bits: number): string {
  if (bits === 32) return expr;
  return `((${expr} >>> ${shift}) & ${2 ** bits - 1})`;
}

function readExpr(f: FieldSpec): string {
  const shift = f.shift ?? 0;
  switch (f.kind) {
    case 'u64': {
      const lo = `v.getUint32(${f.offset}, true)`;
      const hi = `v.getUint32(${f.offset + 4}, true)`;
      if (f.bits === undefined) return `(${lo} + ${hi} * 4294967296)`;
      if (shift >= 32) return bitsOf(hi, shift - 32, f.bits);
      if (shift + f.bits <= 32) return bitsOf(lo, shift, f.bits);
      const lowBits = 32 - shift;
      return `((${lo} >>> ${shift}) + (${hi} & ${2 ** (f.bits - lowBits) - 1}) * ${2 ** lowBits})`;
    }
    case 'u64n': return `v.getBigUint64(${f.offset}, true)`;
    case 'bytes':
      // A copy of its own (TypedArray slice: ArrayBuffer slice is several times slower).
      return `new Uint8Array(v.buffer, v.byteOffset + ${f.offset}, ${f.length ?? 0}).slice()`;
    default:
      return f.bits === undefined ? word(f.kind, f.offset) : bitsOf(word(f.kind, f.offset), shift, f.bits);
  }
}

function writeStmt(f: FieldSpec, label: string): string {
  const shift = f.shift ?? 0;
  const at = JSON.stringify(`${label}: `);
  switch (f.kind) {
    case 'u64': {
      if (f.bits !== undefined) return `${fitCheck(at, f.bits)}\n${u64BitsWrite(f.offset, shift, f.bits)}`;
      return `if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(${at} + value + ` +
        `' is not a u64 below 2^53');\nv.setUint32(${f.offset}, value % 4294967296, true);\n` +
        `v.setUint32(${f.offset + 4}, Math.floor(value / 4294967296), true);`;
    }
    case 'u64n': return `v.setBigUint64(${f.offset}, BigInt.asUintN(64, value), true);`;
    case 'bytes':
      return `if (value.length !== ${f.length}) throw new RangeError(${at} + value.length + ' bytes, expected ` +
        `${f.length}');\nnew Uint8Array(v.buffer, v.byteOffset + ${f.offset}, value.length).set(value);`;
    default: {
      const width = BYTES[f.kind] * 8;
      const bits = f.bits ?? width;
      const store = f.kind === 'u8' ? `v.setUint8(${f.offset}, ` : `v.${SET[f.kind]}(${f.offset}, `;
      const end = f.kind === 'u8' ? ')' : ', true)';
      const check = fitCheck(at, bits);
      if (f.bits === undefined) return `${check}\n${store}${f.kind === 'u32' ? 'value >>> 0' : 'value'}${end};`;
      const mask = (2 ** bits - 1) * 2 ** shift;
      return `${check}\n${store}((${word(f.kind, f.offset)} & ${~mask}) | (value * ${2 ** shift})) >>> 0${end};`;
    }
  }
}

function fitCheck(at: string, bits: number): string {
  return `if (!Number.isInteger(value) || value < 0 || value >= ${2 ** bits}) throw new RangeError(${at} + value + ` +
    `' does not fit in ${bits} bits');`;
}

/** Each 32-bit half takes the part of the bit range that lies in it. */
function u64BitsWrite(offset: number, shift: number, bits: number): string {
  const out: string[] = [];
  for (const [at, base] of [[0, 0], [4, 32]] as const) {
    const from = Math.max(shift, base);
    const to = Math.min(shift + bits, base + 32);
    if (from >= to) continue;
    const width = to - from;
    const part = `(Math.floor(value / ${2 ** (from - shift)}) % ${2 ** width})`;
    const mask = (2 ** width - 1) * 2 ** (from - base);
    out.push(`v.setUint32(${offset + at}, ((v.getUint32(${offset + at}, true) & ${~mask}) | ` +
      `(${part} * ${2 ** (from - base)})) >>> 0, true);`);
  }
  return out.join('\n');
}
