/**
 * Builds the C reference programs in bench/c/ with the machine's gcc into bench/out/
 * (gitignored), once: a binary is named by a hash of its source, the shared headers, the
 * flags and the gcc version, so an edit rebuilds it and an unchanged one is reused across runs.
 * Then runs one and reads its JSON result line.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonLine, type JsonLine } from './json-line.ts';

export const BENCH_DIR = fileURLToPath(new URL('..', import.meta.url));
export const C_DIR = join(BENCH_DIR, 'c');
export const OUT_DIR = join(BENCH_DIR, 'out');

/** The flags every reference is built with (the docs quote them). */
export const C_FLAGS: readonly string[] = ['-O2', '-Wall', '-Wextra', '-pthread'];
const BUILD_TIMEOUT_MS = 120_000;
const DEFAULT_RUN_TIMEOUT_MS = 60_000;

interface Exec {
  readonly stdout: string;
  readonly stderr: string;
}

function exec(file: string, args: readonly string[], timeoutMs: number): Promise<Exec> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 << 20, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        const why = error.killed ? `killed after ${timeoutMs} ms` : (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'not found' : `exit ${error.code ?? error.signal}`;
        reject(new Error(`${file} ${args.join(' ')}: ${why}${stderr.trim() ? `\n${stderr.trim()}` : ''}`));
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

let gccVersionPromise: Promise<string> | undefined;

/** `gcc -dumpfullversion` (e.g. 12.2.0); part of every binary's hash. */
export function gccVersion(): Promise<string> {
  gccVersionPromise ??= exec('gcc', ['-dumpfullversion'], 10_000).then(
    (r) => r.stdout.trim(),
    (e: Error) => { throw new Error(`the C references need gcc: ${e.message}`); },
  );
  return gccVersionPromise;
}

const builds = new Map<string, Promise<string>>();

/**
 * The path of bench/out/PROGRAM-HASH, built from bench/c/PROGRAM.c if it is not there yet.
 * `program` is the file name without `.c`; `libs` are extra `-l` names (e.g. ['z']).
 */
export function buildC(program: string, libs: readonly string[] = []): Promise<string> {
  if (!/^[a-z0-9-]+$/.test(program))
    throw new RangeError(`"${program}" is not a program name of bench/c (letters, digits, dashes)`);
  const key = `${program} ${libs.join(' ')}`;
  let build = builds.get(key);
  if (!build) {
    build = compile(program, libs);
    builds.set(key, build);
    // A failed build may succeed after the source is fixed: do not cache the failure.
    build.catch(() => builds.delete(key));
  }
  return build;
}

async function compile(program: string, libs: readonly string[]): Promise<string> {
  const sourcePath = join(C_DIR, `${program}.c`);
  if (!existsSync(sourcePath)) throw new Error(`no C reference ${sourcePath}`);
  const version = await gccVersion();
  const hash = createHash('sha256');
  hash.update(`gcc ${version}\n${C_FLAGS.join(' ')}\n${libs.join(' ')}\n`);
  hash.update(readFileSync(sourcePath));
  for (const header of readdirSync(C_DIR).filter((f) => f.endsWith('.h')).sort())
    hash.update(header).update(readFileSync(join(C_DIR, header)));
  const binary = join(OUT_DIR, `${program}-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(binary)) return binary;

  mkdirSync(OUT_DIR, { recursive: true });
  const partial = `${binary}.${process.pid}.tmp`;
  const built =
    await exec('gcc', [...C_FLAGS, '-o', partial, sourcePath, ...libs.map((l) => `-l${l}`)], BUILD_TIMEOUT_MS);
  if (built.stderr.trim()) process.stderr.write(`gcc warnings for ${program}.c:\n${built.stderr}`);
  renameSync(partial, binary); // atomic: a concurrent run never sees half a binary
  // Older builds of the same program are stale now.
  for (const f of readdirSync(OUT_DIR)) {
    if (f.startsWith(`${program}-`) && join(OUT_DIR, f) !== binary && !f.endsWith('.tmp'))
      rmSync(join(OUT_DIR, f), { force: true });
  }
  return binary;
}

export interface RunCOptions {
  /** Extra `-l` libraries to link. */
  readonly libs?: readonly string[];
  /** Kill the program after this long (default 60 s). */
  readonly timeoutMs?: number;
}

/** Builds (if needed) and runs bench/c/PROGRAM.c with `args`, returning its JSON result line. */
export async function runC(
  program: string, args: readonly (string | number)[], options: RunCOptions = {},
): Promise<JsonLine> {
  const binary = await buildC(program, options.libs);
  const { stdout } = await exec(binary, args.map(String), options.timeoutMs ?? DEFAULT_RUN_TIMEOUT_MS);
  return parseJsonLine(stdout, `${program}.c`);
}
