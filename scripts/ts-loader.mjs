// ESM loader hooks: .ts files are transformed by esbuild (type stripping only, no bundling).
import { readFile } from 'node:fs/promises';
import { transform } from 'esbuild';

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const source = await readFile(new URL(url), 'utf8');
  const { code } = await transform(source, {
    loader: 'ts', format: 'esm', target: 'node20', sourcemap: 'inline', sourcefile: new URL(url).pathname,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
