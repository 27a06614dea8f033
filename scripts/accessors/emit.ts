/**
 * Turns a Layout table into word accessors for the hot paths: tiny functions over a
 * Uint32Array (the structure at word index w) whose bodies are the table's word index, shift
 * and mask as literals, so they inline to the same machine code as hand-written indices.
 *
 * For each field F of layout `sq_send_hdr` (prefix sqSendHdr, constants SQ_SEND_HDR_*):
 *   SQ_SEND_HDR_F_WORD / _SHIFT / _MASK   where the field lies (MASK = its largest value)
 *   sqSendHdrF(u, w)                      the field's value
 *   sqSendHdrFOf(word)                    the field from a word already read (one word only)
 *   setSqSendHdrF(u, w, value)            read-modify-write of the field's bits
 * a whole u64 field has ...Lo / ...Hi getters and set...(u, w, lo, hi); and for each word K
 *   sqSendHdrWordK(a, b, ...)             the word made of the fields in it (low bits first;
 *                                         values must fit: the checked encoders live beside the tables)
 *   setSqSendHdrWordK(u, w, value)        a store of the whole word (reserved words included)
 *   setSqSendHdrWords(u, w, w0, w1, ...)  every word of the structure in one call
 */
import type { FieldSpec, Layout } from '../../firmware-hwrm/layout.ts';

const BYTES: Record<string, number> = { u8: 1, u16: 2, u32: 4, u64: 8, u64n: 8 };

/** Where a field lies, in 32-bit words. */
interface Placement {
  readonly name: string;
  readonly word: number;
  /** Bit position in `word` (for a u64 range crossing halves: in the low word). */
  readonly shift: number;
  readonly bits: number;
  /** A whole u64: two words, lo and hi. */
  readonly wide: boolean;
  /** A u64 range that runs from `word` into `word + 1`. */
  readonly crossing: boolean;
}

export function camel(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function pascal(snake: string): string {
  const c = camel(snake);
  return c[0]!.toUpperCase() + c.slice(1);
}

function hex(n: number): string {
  return `0x${n.toString(16)}`;
}

function mask(bits: number): number {
  return bits === 32 ? 0xffffffff : 2 ** bits - 1;
}

function place(layoutName: string, name: string, f: FieldSpec): Placement {
  if (f.kind === 'bytes') throw new Error(`${layoutName}.${name}: byte-string fields get no word accessors`);
  if (f.offset % BYTES[f.kind]! !== 0) {
    throw new Error(`${layoutName}.${name}: offset ${f.offset} is not aligned to its ${f.kind}`);
  }
  const byteBits = (f.offset % 4) * 8;
  const word = Math.floor(f.offset / 4);
  if (f.kind === 'u64' || f.kind === 'u64n') {
    if (f.bits === undefined) return { name, word, shift: 0, bits: 64, wide: true, crossing: false };
    const shift = f.shift ?? 0;
    if (shift >= 32) return { name, word: word + 1, shift: shift - 32, bits: f.bits, wide: false, crossing: false };
    return { name, word, shift, bits: f.bits, wide: false, crossing: shift + f.bits > 32 };
  }
  const bits = f.bits ?? BYTES[f.kind]! * 8;
  return { name, word, shift: byteBits + (f.shift ?? 0), bits, wide: false, crossing: false };
}

/** Bits of each word the fields occupy; two fields on one bit are a broken table. */
function checkOverlaps(layoutName: string, ps: readonly Placement[]): void {
  const used = new Map<number, string>();
  const claim = (word: number, from: number, to: number, who: string) => {
    for (let b = from; b < to; b++) {
      const key = word * 32 + b;
      const other = used.get(key);
      if (other !== undefined) throw new Error(`${layoutName}: ${who} and ${other} share bit ${b} of word ${word}`);
      used.set(key, who);
    }
  };
  for (const p of ps) {
    if (p.wide) { claim(p.word, 0, 32, p.name); claim(p.word + 1, 0, 32, p.name); }
    else if (p.crossing) { claim(p.word, p.shift, 32, p.name); claim(p.word + 1, 0, p.shift + p.bits - 32, p.name); }
    else claim(p.word, p.shift, p.shift + p.bits, p.name);
  }
}

/** One exported function, its body on its own lines and its head within 120 columns. */
function fn(name: string, params: string, returns: string, body: readonly string[]): string {
  const head = `export function ${name}(${params}): ${returns} {`;
  const wrapped = `export function ${name}(\n  ${params.split(', ').join(',\n  ')},\n): ${returns} {`;
  const open = head.length <= 120 ? head : wrapped;
  return [open, ...body.map((line) => `  ${line}`), '}'].join('\n');
}

const U = 'u: Uint32Array, w: number';

function at(word: number): string {
  return word === 0 ? 'u[w]' : `u[w + ${word}]`;
}

/** The field's value from `src`, an expression of a u32 word. */
function extract(src: string, p: Placement): string {
  if (p.bits === 32) return p.shift === 0 ? src : `${src} >>> 0`;
  if (p.shift === 0) return `${src} & ${hex(mask(p.bits))}`;
  if (p.shift + p.bits === 32) return `${src} >>> ${p.shift}`;
  return `(${src} >>> ${p.shift}) & ${hex(mask(p.bits))}`;
}

function fieldAccessors(prefix: string, constPrefix: string, p: Placement, lines: string[]): void {
  const C = `${constPrefix}_${p.name.toUpperCase()}`;
  const F = pascal(p.name);
  const get = `${prefix}${F}`;
  const set = `set${prefix[0]!.toUpperCase()}${prefix.slice(1)}${F}`;
  lines.push(`export const ${C}_WORD = ${p.word};`);
  if (p.wide) {
    lines.push(fn(`${get}Lo`, U, 'number', [`return ${at(p.word)}!;`]));
    lines.push(fn(`${get}Hi`, U, 'number', [`return ${at(p.word + 1)}!;`]));
    lines.push(fn(set, `${U}, lo: number, hi: number`, 'void', [`${at(p.word)} = lo;`, `${at(p.word + 1)} = hi;`]));
    return;
  }
  lines.push(`export const ${C}_SHIFT = ${p.shift};`);
  lines.push(`export const ${C}_MASK = ${hex(mask(p.bits))};`);
  if (p.crossing) {
    const lowBits = 32 - p.shift;
    const highMask = hex(mask(p.bits - lowBits));
    const keepHigh = hex(~mask(p.bits - lowBits) >>> 0);
    const low = `(${at(p.word)}! >>> ${p.shift})`;
    const high = `((${at(p.word + 1)}! & ${highMask}) << ${lowBits})`;
    lines.push(fn(get, U, 'number', [`return (${low} | ${high}) >>> 0;`]));
    lines.push(fn(set, `${U}, value: number`, 'void', [
      `${at(p.word)} = (${at(p.word)}! & ${hex(mask(p.shift))}) | (value << ${p.shift});`,
      `${at(p.word + 1)} = (${at(p.word + 1)}! & ${keepHigh}) | ((value >>> ${lowBits}) & ${highMask});`,
    ]));
    return;
  }
  lines.push(fn(get, U, 'number', [`return ${extract(`${at(p.word)}!`, p)};`]));
  lines.push(fn(`${get}Of`, 'word: number', 'number', [`return ${extract('word', p)};`]));
  if (p.bits === 32) {
    lines.push(fn(set, `${U}, value: number`, 'void', [`${at(p.word)} = value;`]));
  } else {
    const keep = hex((~(mask(p.bits) * 2 ** p.shift)) >>> 0);
    const put = p.shift === 0 ? `(value & ${hex(mask(p.bits))})` : `((value & ${hex(mask(p.bits))}) << ${p.shift})`;
    lines.push(fn(set, `${U}, value: number`, 'void', [`${at(p.word)} = (${at(p.word)}! & ${keep}) | ${put};`]));
  }
}

/** What one field puts into a word: its bits (or part of a range crossing words). */
interface Part {
  readonly shift: number;
  readonly param: string;
  readonly expr: string;
  readonly bits: number;
}

function wordAccessors(prefix: string, words: number, ps: readonly Placement[], lines: string[]): void {
  const Prefix = prefix[0]!.toUpperCase() + prefix.slice(1);
  for (let k = 0; k < words; k++) {
    // What each field puts into word k: its bits, or the low / high part of a range crossing into k + 1.
    const parts: Part[] = [];
    for (const p of ps) {
      const param = camel(p.name);
      if (p.wide) continue;
      if (p.word === k) {
        parts.push({ shift: p.shift, param, expr: p.shift === 0 ? param : `(${param} << ${p.shift})`, bits: p.bits });
      } else if (p.crossing && p.word + 1 === k) {
        parts.push({ shift: 0, param, expr: `(${param} >>> ${32 - p.shift})`, bits: p.bits - (32 - p.shift) });
      }
    }
    parts.sort((a, b) => a.shift - b.shift);
    if (parts.length > 1 || (parts.length === 1 && parts[0]!.bits < 32)) {
      const params = parts.map((x) => `${x.param}: number`).join(', ');
      const body = parts.length === 1 ? parts[0]!.expr : `(${parts.map((x) => x.expr).join(' | ')})`;
      // `>>> 0` only when a field reaches bit 31: below it the word is already a non-negative
      // int32, which V8 keeps untagged; an unsigned result costs a check wherever it is passed on.
      const reachesBit31 = parts.some((x) => x.shift + x.bits > 31);
      lines.push(fn(`${prefix}Word${k}`, params, 'number', [`return ${reachesBit31 ? `${body} >>> 0` : body};`]));
    }
    lines.push(fn(`set${Prefix}Word${k}`, `${U}, value: number`, 'void', [`${at(k)} = value;`]));
  }
  // Every word at once (one inlined call instead of one per word keeps hot code small).
  const params = Array.from({ length: words }, (_, k) => `word${k}: number`).join(', ');
  const stores = Array.from({ length: words }, (_, k) => `${at(k)} = word${k};`);
  lines.push(fn(`set${Prefix}Words`, `${U}, ${params}`, 'void', stores));
}

/** The accessor block of one layout; `source` names the public header struct it follows. */
export function emitLayout(l: Layout<Record<string, FieldSpec>>, source: string): string {
  if (l.size % 4 !== 0) throw new Error(`${l.name}: ${l.size} bytes is not whole 32-bit words`);
  const prefix = camel(l.name);
  const constPrefix = l.name.toUpperCase();
  const ps = Object.entries(l.fields).map(([name, f]) => place(l.name, name, f));
  checkOverlaps(l.name, ps);
  const words = l.size / 4;
  const lines = [
    `// ---- ${l.name} (${source}): ${l.size} bytes, ${words} words ----`,
    `export const ${constPrefix}_WORDS = ${words};`,
  ];
  for (const p of ps) fieldAccessors(prefix, constPrefix, p, lines);
  wordAccessors(prefix, words, ps, lines);
  return lines.join('\n');
}
