// Issue 14 item 1: an application that bundles rig-bnxt gets the software NIC's worker file found,
// or an error naming where it looked and what to do (not a start-up timeout).
import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { findWorkerFile, WORKER_PATH_VARIABLE } from '../drivers/emu/host/worker-file.ts';

function scratch(t: { teardown(f: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-worker-file-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('from the sources: worker.ts beside the module', async (t) => {
  const found = findWorkerFile(new URL('../drivers/emu/host/worker-file.ts', import.meta.url).href, {});
  t.ok(found.ok);
  if (found.ok)
    t.equal(fileURLToPath(found.value), fileURLToPath(new URL('../drivers/emu/host/worker.ts', import.meta.url)));
});

t.test('a bundle with emu-worker.mjs beside it finds it there', async (t) => {
  const dir = scratch(t);
  writeFileSync(join(dir, 'emu-worker.mjs'), '');
  const found = findWorkerFile(pathToFileURL(join(dir, 'app.mjs')).href, {});
  t.same(found.ok && fileURLToPath(found.value), join(dir, 'emu-worker.mjs'));
});

t.test('a bundle inside a project that installed rig-bnxt finds the installed worker', async (t) => {
  const dir = scratch(t);
  const pkg = join(dir, 'node_modules', 'rig-bnxt');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  writeFileSync(join(pkg, 'package.json'), JSON.stringify({
    name: 'rig-bnxt', type: 'module', exports: { './emu-worker.mjs': './dist/emu-worker.mjs' },
  }));
  writeFileSync(join(pkg, 'dist', 'emu-worker.mjs'), '');
  mkdirSync(join(dir, 'out'));
  const found = findWorkerFile(pathToFileURL(join(dir, 'out', 'app.mjs')).href, {});
  t.same(found.ok && fileURLToPath(found.value), join(pkg, 'dist', 'emu-worker.mjs'));
});

t.test('nowhere: the error names the file, the places looked at and the way out', async (t) => {
  const dir = scratch(t);
  const found = findWorkerFile(pathToFileURL(join(dir, 'app.mjs')).href, {});
  t.equal(found.ok, false);
  if (!found.ok) {
    t.match(found.error, /emu-worker\.mjs was not found/);
    t.match(found.error, join(dir, 'emu-worker.mjs'), 'names the path beside the bundle');
    t.match(found.error, /rig-bnxt package/, 'and the package it could not resolve');
    t.match(found.error, WORKER_PATH_VARIABLE, 'and the variable that points at it');
  }
});

t.test(`${WORKER_PATH_VARIABLE} wins when set, and a wrong path is an error naming it`, async (t) => {
  const dir = scratch(t);
  const file = join(dir, 'elsewhere.mjs');
  writeFileSync(file, '');
  writeFileSync(join(dir, 'emu-worker.mjs'), '');
  const here = pathToFileURL(join(dir, 'app.mjs')).href;
  const found = findWorkerFile(here, { [WORKER_PATH_VARIABLE]: file });
  t.same(found.ok && fileURLToPath(found.value), file);
  const missing = findWorkerFile(here, { [WORKER_PATH_VARIABLE]: join(dir, 'nope.mjs') });
  t.equal(missing.ok, false);
  if (!missing.ok) t.match(missing.error, join(dir, 'nope.mjs'));
});
