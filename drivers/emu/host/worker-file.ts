/**
 * Where the software NIC's worker thread code is. Run from the sources it is worker.ts beside
 * this file; in the package it is dist/emu-worker.mjs beside the bundle. An application that
 * bundles rig-bnxt into its own file moves the bundle away from emu-worker.mjs, so the file is
 * looked for in three places, and when none has it the error names every place looked in and
 * what to do: starting a Worker on a missing file would only show up as a start-up timeout.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ok, err, type Result } from '../../../firmware-hwrm/result.ts';

/** The bundled worker's file name, in dist/ of the package. */
export const WORKER_FILE_NAME = 'emu-worker.mjs';
/** Overrides the lookup: the path of emu-worker.mjs (for applications that bundle rig-bnxt). */
export const WORKER_PATH_VARIABLE = 'RIG_BNXT_EMU_WORKER';

/**
 * The worker's URL, looked for in order: $RIG_BNXT_EMU_WORKER (when set, only there); beside
 * this module (sources: worker.ts; package: dist/emu-worker.mjs); the installed rig-bnxt
 * package as seen from this module (an application bundle inside a project that installed it).
 */
export function findWorkerFile(here: string = import.meta.url, env: NodeJS.ProcessEnv = process.env): Result<URL> {
  const fromEnv = env[WORKER_PATH_VARIABLE];
  if (fromEnv !== undefined && fromEnv !== '') {
    if (existsSync(fromEnv)) return ok(pathToFileURL(fromEnv));
    return err(
      `the software NIC's worker file is not at ${fromEnv} (from ${WORKER_PATH_VARIABLE}): point it at rig-bnxt's ` +
        `dist/${WORKER_FILE_NAME}`,
    );
  }
  const looked: string[] = [];
  const beside = here.endsWith('.ts') ? new URL('./worker.ts', here) : new URL(`./${WORKER_FILE_NAME}`, here);
  if (here.startsWith('file:')) {
    const path = fileURLToPath(beside);
    if (existsSync(path)) return ok(beside);
    looked.push(path);
  }
  try {
    const installed = createRequire(here).resolve(`rig-bnxt/${WORKER_FILE_NAME}`);
    if (existsSync(installed)) return ok(pathToFileURL(installed));
    looked.push(installed);
  } catch {
    looked.push(
      `the rig-bnxt package (not installed where ${here.startsWith('file:') ? fileURLToPath(here) : here} can ` +
        `resolve it)`,
    );
  }
  return err(
    `the software NIC's worker file ${WORKER_FILE_NAME} was not found: looked at ${looked.join(', ')}. ` +
      `An application that bundles rig-bnxt must ship rig-bnxt's dist/${WORKER_FILE_NAME} beside its bundle, or set ` +
        `${WORKER_PATH_VARIABLE} to its path`,
  );
}
