/**
 * Writes the word accessors generated from the Layout tables (firmware-hwrm/**\/*.g.ts).
 * `--check` writes nothing and exits 1 if a file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generatedFiles } from './accessors/generate.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
let stale = 0;
for (const { path, text } of generatedFiles()) {
  let old = '';
  try { old = readFileSync(root + path, 'utf8'); } catch { /* absent: stale */ }
  if (old === text) continue;
  stale++;
  if (check) console.error(`${path} is stale: run npm run generate`);
  else { writeFileSync(root + path, text); console.log(`wrote ${path}`); }
}
if (check && stale > 0) process.exit(1);
