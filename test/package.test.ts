// Issue 14 item 1: the package as users get it. The tracked files are copied to a scratch
// folder and packed there (npm pack, after the build that `prepare` runs), then:
// - the tarball holds the bundles, the declarations, README, LICENSE, CHANGELOG and docs, and no
//   test, benchmark, C, CI or TypeScript source file;
// - a fresh app installs it with koffi's native part left out (--omit=optional --ignore-scripts,
//   where koffi cannot load) and a strict TypeScript program using the whole public API compiles
//   with module node16, nodenext and bundler (and the strictest optional checks), no special flag;
// - the emitted program runs on the software NIC there; the installed CLI answers --version;
// - the same program bundled into one file finds the software NIC's worker in the installed
//   package, or, where there is none, fails at once with an error naming the worker file.
import t from 'tap';
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { CONSUMER_EXPECTED, CONSUMER_MAIN_TS } from './helpers/consumer-app.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const run = promisify(execFile);
const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;

const scratch = mkdtempSync(join(tmpdir(), 'rig-bnxt-package-'));
t.teardown(() => rmSync(scratch, { recursive: true, force: true }));

/** The repository's files as a clone has them (tracked, or new and not ignored). */
function copySources(to: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT, encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(join(ROOT, file))) continue; // deleted in the work tree
    mkdirSync(dirname(join(to, file)), { recursive: true });
    cpSync(join(ROOT, file), join(to, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'), 'dir');
}

async function npm(args: string[], cwd: string): Promise<string> {
  const { stdout } = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd, timeout: 240_000, maxBuffer: 1 << 26,
  });
  return stdout;
}

const src = join(scratch, 'src');
const app = join(scratch, 'app');
let tarball = '';
let packed: string[] = [];

t.before(async () => {
  copySources(src);
  // What `prepare` does at npm install / npm pack; run here so its output stays out of the JSON.
  await run(process.execPath, ['scripts/build.mjs'], { cwd: src, timeout: 240_000 });
  const report =
    JSON.parse(await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', scratch],
    src)) as { filename: string; files: { path: string }[] }[];
  tarball = join(scratch, report[0]!.filename);
  packed = report[0]!.files.map((f) => f.path).sort();
});

t.test('the tarball holds what users need and nothing of the work tree', async (t) => {
  for (const needed of [
    'package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'dist/index.mjs', 'dist/emu-worker.mjs',
    'dist/rig-bnxt.mjs', 'dist/types/lib/index.d.ts', 'docs/api.md', 'docs/cli.md', 'docs/dependencies.md',
    'scripts/bind-vfio.sh',
  ]) {
    t.ok(packed.includes(needed), `ships ${needed}`);
  }
  const unwanted = packed.filter(
    (p) => /^(test|bench|\.ci|\.github|node_modules|build)\//.test(p) ||
      /\.(c|h|ts)$/.test(p) && !p.endsWith('.d.ts') || /^tsconfig/.test(p) || p.endsWith('.tap'),
  );
  t.same(unwanted, [], 'no test, benchmark, C, CI, TypeScript source or config file');
  t.ok(packed.every((p) => !p.startsWith('lib/') && !p.startsWith('drivers/') && !p.startsWith('firmware-hwrm/')),
    'no sources: the bundles carry the code');
  const license = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
  const declared = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).license as string;
  t.match(license, new RegExp(`^${declared} License`), `LICENSE is the ${declared} license package.json names`);
});

t.test('a fresh app installs it without koffi\'s native part', async (t) => {
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'),
    JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }, null, 2));
  await npm(['install', '--prefer-offline', '--omit=optional', '--ignore-scripts', tarball], app);
  t.ok(existsSync(join(app, 'node_modules', 'rig-bnxt', 'dist', 'index.mjs')), 'rig-bnxt installed');
  t.notOk(existsSync(join(app, 'node_modules', '@koromix')), 'koffi\'s native packages left out');
  const probe = spawnSync(process.execPath, ['-e', "require('koffi')"], { cwd: app, encoding: 'utf8' });
  t.not(probe.status, 0, 'koffi cannot load in this app');
});

const MODES = [
  { name: 'node16', module: 'node16', moduleResolution: 'node16' },
  { name: 'nodenext', module: 'nodenext', moduleResolution: 'nodenext' },
  { name: 'bundler', module: 'esnext', moduleResolution: 'bundler' },
  {
    name: 'nodenext, strictest optional checks', module: 'nodenext', moduleResolution: 'nodenext',
    extra: {
      exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, noPropertyAccessFromIndexSignature: true,
      noImplicitOverride: true, noImplicitReturns: true, noFallthroughCasesInSwitch: true,
    },
  },
];

/**
 * The output of a `tsc --build --verbose` over `projects`, cut at each project's "Building project"
 * line: its errors and --listFiles lines, by project.
 */
function byProject(stdout: string, projects: readonly string[]): string[][] {
  const sections: string[][] = projects.map(() => []);
  let at = -1;
  for (const line of stdout.split('\n')) {
    const building = /Building project '(.*)'\.\.\.$/.exec(line);
    if (building) at = projects.findIndex((p) => building[1]!.endsWith(`/${p}`));
    else if (at >= 0) sections[at]!.push(line);
  }
  return sections;
}

t.test('a strict TypeScript program using the whole API compiles in every module mode', async (t) => {
  writeFileSync(join(app, 'main.ts'), CONSUMER_MAIN_TS);
  const projects = MODES.map((mode, i) => {
    const config = {
      compilerOptions: {
        strict: true, target: 'es2022', module: mode.module, moduleResolution: mode.moduleResolution, outDir: `out${i}`,
        // The consumer's own Node typings (console, process), not rig-bnxt's.
        types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')], ...mode.extra,
        // TypeScript's own lib.*.d.ts are not checked (a third of each program's CPU): they are the
        // compiler's, not the package's; the package's declarations and @types/node still are.
        skipDefaultLibCheck: true,
      },
      files: ['main.ts'],
    };
    writeFileSync(join(app, `tsconfig.${i}.json`), JSON.stringify(config, null, 2));
    return `tsconfig.${i}.json`;
  });
  // One tsc process builds the four projects: each is its own program, resolved and checked in
  // its own module mode, but the declarations they share (lib, @types/node) are read once, which
  // halves the CPU of four tsc processes.
  const r = spawnSync(process.execPath, [TSC, '--build', '--verbose', '--listFiles', ...projects], {
    cwd: app, encoding: 'utf8',
  });
  const sections = byProject(r.stdout, projects);
  for (const [i, mode] of MODES.entries()) {
    const lines = sections[i]!;
    const errors = lines.filter((l) => /error TS\d+/.test(l));
    t.same(errors, [], `${mode.name}: no errors`);
    t.equal(r.status, 0, `${mode.name}: tsc exits 0`);
    const fromPackage = lines.filter((l) => l.includes('node_modules/rig-bnxt/'));
    t.ok(fromPackage.length > 0 && fromPackage.every((l) => l.endsWith('.d.ts')),
      `${mode.name}: only the package's declarations are read (${fromPackage.length} files)`);
  }
});

t.test('the compiled program runs on the software NIC without koffi', async (t) => {
  const { stdout } = await run(process.execPath, ['out1/main.js'], { cwd: app, timeout: 60_000 });
  t.same(JSON.parse(stdout.trim()), CONSUMER_EXPECTED, 'every call behaves as documented');
});

t.test('the installed CLI answers --version', async (t) => {
  const { stdout } = await run(process.execPath, [join(app, 'node_modules', '.bin', 'rig-bnxt'), '--version'], {
    cwd: app, timeout: 30_000,
  });
  t.equal(stdout.trim(), `rig-bnxt ${version}`);
});

t.test('a bundled app runs inline alone; in thread mode it finds the worker or says where it is not', async (t) => {
  // As an application's own build would: everything in one file, koffi left to Node.
  const bundled = await build({
    absWorkingDir: app, entryPoints: ['out1/main.js'], outfile: 'bundled/app.mjs', bundle: true, platform: 'node',
    format: 'esm', external: ['koffi'], logLevel: 'silent',
  });
  t.same(bundled.errors, [], 'esbuild bundles the app');
  // Inside the project: rig-bnxt is installed where the bundle can resolve it.
  const inside = await run(process.execPath, ['bundled/app.mjs'], { cwd: app, timeout: 60_000 });
  t.same(JSON.parse(inside.stdout.trim()), CONSUMER_EXPECTED, 'inside the project: the installed worker is found');

  // Shipped alone: no emu-worker.mjs beside it and no package to resolve.
  const alone = join(scratch, 'alone');
  mkdirSync(alone);
  cpSync(join(app, 'bundled', 'app.mjs'), join(alone, 'app.mjs'));
  // `emu` runs its model inline in the app's thread: no worker file is needed.
  const inlineAlone = await run(process.execPath, ['app.mjs'], { cwd: alone, timeout: 60_000 });
  t.same(JSON.parse(inlineAlone.stdout.trim()), CONSUMER_EXPECTED, 'shipped alone, a loop-cabled NIC runs inline');
  // A NIC whose model runs in a worker thread needs the worker's file.
  const threadEnv = { ...process.env, RIG_BNXT_EMU_THREAD: '1' };
  const lonely = spawnSync(process.execPath, ['app.mjs'], {
    cwd: alone, encoding: 'utf8', timeout: 60_000, env: threadEnv,
  });
  const said = JSON.parse(lonely.stdout.trim()) as { error?: string };
  t.match(said.error, /emu-worker\.mjs was not found/, 'the error names the worker file');
  t.match(said.error, join(alone, 'emu-worker.mjs'), 'and where it was looked for');
  t.match(said.error, /RIG_BNXT_EMU_WORKER/, 'and how to point at it');
  t.notMatch(said.error, /no answer from the software NIC's worker/, 'not a start-up time-out');

  const pointed = await run(process.execPath, ['app.mjs'], {
    cwd: alone, timeout: 60_000,
    env: { ...threadEnv, RIG_BNXT_EMU_WORKER: join(app, 'node_modules', 'rig-bnxt', 'dist', 'emu-worker.mjs') },
  });
  t.same(JSON.parse(pointed.stdout.trim()), CONSUMER_EXPECTED, 'with RIG_BNXT_EMU_WORKER it works');
});
