// Bundles the command-line tool and the software NIC's worker with esbuild.
// koffi stays external: it ships native parts that cannot be bundled.
import { build } from 'esbuild';
import { existsSync } from 'node:fs';

// The CLI, the library (what `import 'rig-bnxt'` gives) and the software NIC's worker, which
// both find beside themselves in dist/.
const entries = { 'rig-bnxt': 'scripts/cli.ts', index: 'lib/index.ts', 'emu-worker': 'drivers/emu/worker.ts', 'vfio-user-worker': 'drivers/emu/vfio-user/worker.ts' };
const entryPoints = Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file)));
await build({
  entryPoints,
  outdir: 'dist',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: ['koffi'],
  banner: { js: "import { createRequire as __rigCreateRequire } from 'node:module'; const require = __rigCreateRequire(import.meta.url);" },
  logLevel: 'warning',
});
console.log(`built ${Object.keys(entryPoints).map((n) => `dist/${n}.mjs`).join(', ') || 'nothing yet'}`);
