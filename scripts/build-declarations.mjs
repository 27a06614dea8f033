// Builds the package's type declarations (dist/types/**/*.d.ts) from the sources with tsc
// (tsconfig.build.json), then keeps only the files reachable from the public entry point
// (lib/index.d.ts), with relative import paths ending in .js as every TypeScript version and
// module mode resolves them. A consumer's compiler then checks only the public surface: the
// driver's internals (marked @internal, stripped) are not part of it.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, rmSync, readdirSync, existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'dist', 'types');
const entry = join(outDir, 'lib', 'index.d.ts');

/** import/export ... from '<spec>', import('<spec>'), /// <reference path="<spec>" /> */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;

export function buildDeclarations() {
  rmSync(outDir, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const run = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root, encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`tsc could not build the declarations:\n${run.stdout}${run.stderr}`);
  if (!existsSync(entry)) throw new Error(`tsc ran but wrote no ${relative(root, entry)}`);

  // Walk the imports from the entry point, rewriting .ts specifiers to .js on the way.
  const keep = new Set();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop();
    if (keep.has(file)) continue;
    keep.add(file);
    const text = readFileSync(file, 'utf8');
    const rewritten = text.replace(SPECIFIER, (_all, lead, quote, spec) => {
      const js = spec.replace(/\.ts$/, '.js');
      const target = resolve(dirname(file), js.replace(/\.js$/, '.d.ts'));
      if (!existsSync(target))
        throw new Error(`${relative(root, file)} imports ${spec}, but ${relative(root, target)} was not emitted`);
      queue.push(target);
      return `${lead}${quote}${js}${quote}`;
    });
    if (rewritten !== text) writeFileSync(file, rewritten);
  }
  for (const file of walk(outDir)) if (!keep.has(file)) rmSync(file);
  removeEmptyDirectories(outDir);
  return [...keep].map((f) => relative(root, f)).sort();
}

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

function removeEmptyDirectories(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) removeEmptyDirectories(path);
  }
  if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
}
