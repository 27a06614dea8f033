// Builds what the package ships: the command-line tool, the library (what `import 'rig-bnxt'`
// gives) and the software NIC's worker, bundled with esbuild into dist/, and the type
// declarations in dist/types (scripts/build-declarations.mjs). koffi stays external: it ships
// native parts that cannot be bundled, and it is loaded only when a PCI device is opened.
// `node scripts/build.mjs --no-types` skips the declarations (faster, for the CLI alone);
// `--outdir=DIR` bundles into DIR instead of dist/ (without declarations: a guest image's copy,
// scripts/vfio-bnxt-guest/project-archive.ts, never one that replaces the package's dist/).
import { build } from 'esbuild';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { buildDeclarations } from './build-declarations.mjs';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// The CLI and the library find the workers beside themselves in dist/ (the vfio-user server's too).
const entries = {
  'rig-bnxt': 'scripts/cli.ts', index: 'lib/index.ts', 'emu-worker': 'drivers/emu/host/worker.ts',
  'vfio-user-worker': 'drivers/emu/host/vfio-user/worker.ts',
};
const entryPoints = Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file)));
const outdirArg = process.argv.find((a) => a.startsWith('--outdir='));
const outdir = outdirArg === undefined ? 'dist' : outdirArg.slice('--outdir='.length);
if (outdir === '') throw new Error('--outdir= needs a folder');
// Start clean: chunk names carry a hash, and a stale chunk would ship in the package.
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints,
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  // One copy of the library: the CLI, the library entry and the worker share chunks.
  splitting: true,
  chunkNames: 'chunk-[hash]',
  target: 'node20',
  external: ['koffi'],
  banner: {
    js: "import { createRequire as __rigCreateRequire } from 'node:module'; const require = " +
      "__rigCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
const built = Object.keys(entryPoints).map((n) => `${outdir}/${n}.mjs`);
if (!process.argv.includes('--no-types') && outdirArg === undefined) {
  built.push(`${buildDeclarations().length} declaration files in dist/types`);
}
console.log(`rig-bnxt ${version}: built ${built.join(', ')}`);
