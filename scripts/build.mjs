// Builds what the package ships: the command-line tool, the library (what `import 'rig-bnxt'`
// gives) and the software NIC's worker, bundled with esbuild into dist/, and the type
// declarations in dist/types (scripts/build-declarations.mjs). koffi stays external: it ships
// native parts that cannot be bundled, and it is loaded only when a PCI device is opened.
// `node scripts/build.mjs --no-types` skips the declarations (faster, for the CLI alone).
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
// Start clean: chunk names carry a hash, and a stale chunk would ship in the package.
rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints,
  outdir: 'dist',
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
const built = Object.keys(entryPoints).map((n) => `dist/${n}.mjs`);
if (!process.argv.includes('--no-types')) built.push(`${buildDeclarations().length} declaration files in dist/types`);
console.log(`rig-bnxt ${version}: built ${built.join(', ')}`);
