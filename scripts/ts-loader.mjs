// ESM loader hooks: .ts files are transformed by esbuild (type stripping only, no bundling).
// Transforms are cached on disk by a hash of the source and the esbuild version, so the many
// processes and worker threads of a test run transform each file once instead of once each.
// The cache is node_modules/.cache/rig-bnxt-ts (ignored by git; a few MB; delete it at will).
// esbuild itself is imported only on a cache miss: loading it costs every process and worker
// thread about 0.1 s of CPU, and with a warm cache nothing needs it (its version, part of the
// cache key, comes from its package.json).
import { readFile, writeFile, mkdir, rename } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const { version } = createRequire(import.meta.url)('esbuild/package.json');
const cacheDir = fileURLToPath(new URL('../node_modules/.cache/rig-bnxt-ts/', import.meta.url));
let cacheReady;
let esbuild;

async function cached(key) {
  try {
    return await readFile(join(cacheDir, key), 'utf8');
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

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = await readFile(path, 'utf8');
  const key = createHash('sha256').update(version).update('\0').update(path).update('\0').update(source).digest('hex');
  let code = await cached(key);
  if (code === undefined) {
    esbuild ??= await import('esbuild');
    ({ code } = await esbuild.transform(source, {
      loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: path,
    }));
    await store(key, code);
  }
  return { format: 'module', source: code, shortCircuit: true };
}
