/**
 * How the command line's values are read, as perftest and rdma-core's examples read theirs:
 * integers as strtol with base 0 (whole text used), sizes with K/M suffixes, MAC addresses,
 * ports, the one SERVER positional, and node:util parseArgs in strict mode with its exceptions
 * turned into short error values. Every mistake is an error value; nothing here throws.
 */
import { parseArgs } from 'node:util';
import { type Result, ok, err } from './result.ts';

/** perftest -s accepts 1 .. UINT_MAX / 2. */
export const MAX_SIZE_BYTES = 0x7fffffff;

/**
 * A message size as perftest's -s reads it: strtol with base 0 (decimal, 0x hex, leading-0 octal)
 * and an optional K or M suffix (binary: 1024, 1048576), between 1 and UINT_MAX / 2. Unlike
 * strtol, trailing garbage is an error rather than ignored.
 */
export function parseSize(text: string): Result<number> {
  let factor = 1;
  let digits = text;
  if (text.endsWith('K')) { factor = 1024; digits = text.slice(0, -1); }
  else if (text.endsWith('M')) { factor = 1024 * 1024; digits = text.slice(0, -1); }
  const n = parseCInteger(digits);
  if (n === undefined) return err(`'${text}' is not a size (examples: 4096, 0x1000, 64K, 1M)`);
  const bytes = n * factor;
  if (bytes < 1 || bytes > MAX_SIZE_BYTES)
    return err(`size ${text} is out of range: it must be between 1 and ${MAX_SIZE_BYTES} bytes`);
  return ok(bytes);
}

/** Six hex pairs, the separator after the first (':' or '-') repeated between the others. */
const MAC_TEXT = new RegExp('^([0-9a-fA-F]{2})([:-])([0-9a-fA-F]{2})\\2([0-9a-fA-F]{2})\\2([0-9a-fA-F]{2})\\2' +
  '([0-9a-fA-F]{2})\\2([0-9a-fA-F]{2})$');

/** A MAC address written as six hex pairs separated by ':' or '-'. */
export function parseMac(text: string): Result<Uint8Array> {
  const m = MAC_TEXT.exec(text);
  if (!m) return err(`'${text}' is not a MAC address (expected six hex pairs, e.g. 02:00:00:00:00:01)`);
  return ok(Uint8Array.from([m[1], m[3], m[4], m[5], m[6], m[7]], (pair) => parseInt(pair!, 16)));
}

export function parsePort(text: string): Result<number> {
  return parseIntegerIn(text, 1, 65535);
}

export function parseIntegerIn(text: string, min: number, max: number): Result<number> {
  const n = parseCInteger(text);
  if (n === undefined) return err(`'${text}' is not a whole number`);
  if (n < min || n > max) return err(`${text} is out of range: it must be between ${min} and ${max}`);
  return ok(n);
}

/** A non-negative integer as strtol(text, &end, 0) reads it, requiring the whole text to be used. */
export function parseCInteger(text: string): number | undefined {
  let n: number;
  if (/^0[xX][0-9a-fA-F]+$/.test(text)) n = parseInt(text.slice(2), 16);
  else if (/^0[0-7]+$/.test(text)) n = parseInt(text.slice(1), 8);
  else if (/^(0|[1-9][0-9]*)$/.test(text)) n = parseInt(text, 10);
  else return undefined;
  return Number.isSafeInteger(n) ? n : undefined;
}

export function parseServer(where: string, positionals: readonly string[]): Result<string | undefined> {
  if (positionals.length > 1)
    return err(`${where}: expected at most one SERVER, got ${positionals.length}: ${positionals.join(' ')}`);
  const server = positionals[0];
  if (server !== undefined && server.trim() === '') return err(`${where}: the server name is empty`);
  return ok(server);
}

export function parseOptional<A>(
  where: string, name: string, text: string | undefined, fallback: A, parse: (t: string) => Result<A>,
): Result<A> {
  if (text === undefined) return ok(fallback);
  const r = parse(text);
  return r.ok ? r : err(`${where}: ${name}: ${r.error}`);
}

export type OptionConfig = Record<string, { readonly type: 'string' | 'boolean'; readonly short?: string }>;
export type ParsedValues<C extends OptionConfig> = {
  [K in keyof C]?: C[K]['type'] extends 'string' ? string : boolean;
};

/** node:util parseArgs in strict mode, with its exceptions turned into short error values. */
export function parseOptions<C extends OptionConfig>(
  where: string,
  args: readonly string[],
  options: C,
): Result<{ values: ParsedValues<C>; positionals: string[] }> {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options, allowPositionals: true, strict: true });
    return ok({ values: values as ParsedValues<C>, positionals });
  } catch (e) {
    return err(`${where}: ${describeParseError(e)} (see ${where} --help)`);
  }
}

function describeParseError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  const message = e instanceof Error ? e.message : String(e);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const name = /'([^']+)'/.exec(message)?.[1];
    return name ? `unknown option '${name}'` : 'unknown option';
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = /^Option '([^']+)'/.exec(message)?.[1]?.replace(/ <value>$/, '');
    if (/argument missing|ambiguous/.test(message)) return `option '${name}' needs a value`;
    if (/does not take an argument/.test(message)) return `option '${name}' takes no value`;
  }
  return message.split('\n')[0]!;
}
