// ESM loader hooks: .ts files are transformed by esbuild (type stripping only, no bundling).
// Transforms are cached on disk by a hash of the source and the esbuild version, so the many
// processes and worker threads of a test run transform each file once instead of once each.
// The cache is node_modules/.cache/rig-bnxt-ts (ignored by git; a few MB; delete it at will).
// esbuild itself is imported only on a cache miss: loading it costs every process and worker
// thread about 0.1 s of CPU, and with a warm cache nothing needs it (its version, part of the
// cache key, comes from its package.json).
// Every process and worker thread loads about 200 modules through these hooks, which run on
// Node's loader thread, so the common case is kept short: a relative import of a .ts file that
// exists is resolved here (Node's own resolution would look for package.json scopes and real
// paths for nothing: the source tree has no symlinks, and load below decides the format), and
// the source and its cached transform are read synchronously (the loader thread does nothing
// else meanwhile). Together about a third of the loader's CPU: 0.53 -> 0.36 s to import
// lib/index.ts, against 0.18 s for the same modules as plain JavaScript with no hooks.
import { existsSync, readFileSync } from 'node:fs';
import { writeFile, mkdir, rename } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const { version } = createRequire(import.meta.url)('esbuild/package.json');
const cacheDir = fileURLToPath(new URL('../node_modules/.cache/rig-bnxt-ts/', import.meta.url));
let cacheReady;
let esbuild;

function cached(key) {
  try {
    return readFileSync(join(cacheDir, key), 'utf8');
  } catch {
    return undefined;
  }
}

async function store(key, code) {
  try {
    cacheReady ??= mkdir(cacheDir, { recursive: true });
    await cacheReady;
    // Write then rename: a reader in another process never sees half a file.
    const tmp = join(cacheDir, `${key}.${process.pid}.${Math.random().toString(36).slice(2)}`);
    await writeFile(tmp, code);
    await rename(tmp, join(cacheDir, key));
  } catch {
    // A cache that cannot be written only costs speed.
  }
}

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if ((specifier.startsWith('./') || specifier.startsWith('../')) && specifier.endsWith('.ts') &&
      parent !== undefined && parent.startsWith('file:')) {
    const url = new URL(specifier, parent);
    // A missing file goes to Node's resolver, so its error is the usual ERR_MODULE_NOT_FOUND.
    if (existsSync(url)) return { url: url.href, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = readFileSync(path, 'utf8');
  const key = createHash('sha256').update(version).update('\0').update(path).update('\0').update(source).digest('hex');
  let code = cached(key);
  if (code === undefined) {
    esbuild ??= await import('esbuild');
    ({ code } = await esbuild.transform(source, {
      loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: path,
    }));
    await store(key, code);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
