/**
 * The project as the VFIO bnxt guest gets it: a cpio archive appended to the image's initrd (the
 * kernel unpacks every archive of the initrd in turn; an uncompressed one must start 4-byte
 * aligned, so zero bytes pad the compressed image before it). It holds, at /opt/rig-bnxt, the
 * bundle scripts/build.mjs builds from this tree (into the run folder, so the guest never runs a
 * stale dist/), package.json, koffi with its linux-x64 native part, scripts/bind-vfio.sh; at
 * /opt/app the README's API example, importing 'rig-bnxt' (node_modules/rig-bnxt is
 * /opt/rig-bnxt) and the check of READs and SENDs across pages; and the run's jobs (/job.sh,
 * /peer-job.sh: steps.sh's functions).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync, openSync, writeSync, closeSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Where the project sits in the guest. */
export const GUEST_PROJECT = '/opt/rig-bnxt';
/** Where QEMU puts the vfio-user device in the guest (-device ... addr=04.0 on the root bus). */
export const GUEST_DEVICE = '0000:00:04.0';

/**
 * The README's "The API in 20 lines" example, on `device` instead of the software NIC (its
 * `Nic.open('emu')` becomes `Nic.open(device, options)`), with one line added that prints the
 * bytes the receive got: the example's own lines are untouched.
 */
export function apiExample(device: string, options: Record<string, unknown> = {}): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf('## The API in 20 lines');
  const block = at < 0 ? null : /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (block === null) throw new Error('README.md has no "The API in 20 lines" example');
  const open = "Nic.open('emu')";
  if (!block[1]!.includes(open)) throw new Error(`the README's example no longer calls ${open}`);
  const code = block[1]!.replace(open, `Nic.open(${JSON.stringify(device)}, ${JSON.stringify(options)})`);
  // Printed before destroy/deregister/close (the last line), so the region still holds them.
  const lines = code.trimEnd().split('\n');
  const last = lines.pop()!;
  lines.push("console.log('received', JSON.stringify(new TextDecoder().decode(r.value.bytes.subarray(4096, 4101))));");
  return [...lines, last, ''].join('\n');
}

/**
 * READs and SENDs between two queue pairs of one NIC (the spec serves reads to the same NIC only),
 * through one 4 MiB region (2 MiB hugepages once bind-vfio.sh reserved them, so its page list has
 * 2 MiB pages, each of which a guest behind a vIOMMU maps as many IOMMU pages): ranges that cross
 * 4 KiB pages and the 2 MiB page, each compared byte for byte with what was read or sent. Prints
 * one line per transfer, "intact" or where it differs; exits 1 on any difference.
 */
export function transferCheck(device: string): string {
  return `import { Nic, Qp, Region } from 'rig-bnxt';
const nic = Nic.open(${JSON.stringify(device)});
if (!nic.ok) { console.log('open: ' + nic.error); process.exit(1); }
const a = Qp.make(nic.value), b = Qp.make(nic.value);
if (!a.ok || !b.ok) { console.log('no queue pair'); process.exit(1); }
for (const [x, y] of [[a, b], [b, a]]) { const c = x.value.connect(y.value.endpoint); if (!c.ok) process.exit(1); }
const MiB = 1 << 20;
const r = Region.alloc(nic.value, 4 * MiB);
if (!r.ok) { console.log('region: ' + r.error); process.exit(1); }
const bytes = r.value.bytes;
// The sources lie in the first 2.5 MiB, the destinations after them.
for (let i = 0; i < 5 * MiB / 2; i++) bytes[i] = (i * 31 + (i >>> 12) * 7 + 5) & 0xff;
let bad = 0;
function check(what, from, to, n) {
  for (let k = 0; k < n; k++) {
    if (bytes[to + k] === bytes[from + k]) continue;
    bad++;
    return console.log(what + ' ' + n + ' bytes: byte ' + k + ' differs');
  }
  console.log(what + ' ' + n + ' bytes from ' + from + ' to ' + to + ': intact');
}
// [source offset, destination offset, length]: inside a page, across 4 KiB pages, across the 2 MiB page.
const cases = [
  [100, 5 * MiB / 2 + 100, 64], [4090, 5 * MiB / 2 + 8000, 5000], [2 * MiB - 40000, 3 * MiB - 30001, 70000],
];
for (const [from, to, n] of cases) {
  a.value.read(r.value, from, r.value, to, n);
  const w = a.value.wait('send', 30e6);
  if (!w || !w.ok) { bad++; console.log('read ' + n + ': ' + (w ? w.error : 'no completion')); continue; }
  check('read', from, to, n);
}
for (const [from, to, n] of cases) {
  bytes.fill(0, to, to + n);
  b.value.receive(r.value, to, n);
  a.value.send(r.value, from, n);
  const s = a.value.wait('send', 30e6);
  const v = b.value.wait('receive', 30e6);
  if (!s || !s.ok || !v || !v.ok || v.value !== n) { bad++; console.log('send ' + n + ': not completed'); continue; }
  check('send', from, to, n);
}
a.value.destroy(); b.value.destroy(); r.value.deregister(); nic.value.close();
process.exit(bad === 0 ? 0 : 1);
`;
}

export interface ProjectFiles {
  readonly job: string;
  readonly peerJob: string;
  readonly apiExample: string;
}

/** The bundle this process built first (a run folder's): the sources do not change while it runs. */
let builtOnce: string | undefined;

/** scripts/build.mjs's bundle of this tree in `dir`: built the first time, then copied. */
function bundle(dir: string): Result<void> {
  if (builtOnce !== undefined && existsSync(builtOnce)) {
    cpSync(builtOnce, dir, { recursive: true });
    return ok();
  }
  const built = spawnSync(process.execPath, ['scripts/build.mjs', `--outdir=${dir}`], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: 300_000,
  });
  if (built.status !== 0) return err(`scripts/build.mjs failed: ${built.error?.message ?? ''}${built.stderr}`);
  builtOnce = dir;
  return ok();
}

/** Builds the bundle into `runDir`/project and stages the project there; returns the staging folder. */
export function stageProject(runDir: string, files: ProjectFiles): Result<string> {
  const stage = join(runDir, 'project');
  const project = join(stage, GUEST_PROJECT.slice(1));
  mkdirSync(join(project, 'scripts'), { recursive: true });
  const bundled = bundle(join(project, 'dist'));
  if (!bundled.ok) return bundled;
  cpSync(join(REPO_ROOT, 'package.json'), join(project, 'package.json'));
  for (const m of ['koffi', '@koromix/koffi-linux-x64']) {
    const to = join(project, 'node_modules', m);
    cpSync(join(REPO_ROOT, 'node_modules', m), to, { recursive: true, dereference: true });
  }
  cpSync(join(REPO_ROOT, 'scripts', 'bind-vfio.sh'), join(project, 'scripts', 'bind-vfio.sh'));
  const app = join(stage, 'opt', 'app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  symlinkSync(GUEST_PROJECT, join(app, 'node_modules', 'rig-bnxt'));
  writeFileSync(join(app, 'api-example.mjs'), files.apiExample);
  writeFileSync(join(app, 'transfer-check.mjs'), transferCheck(GUEST_DEVICE));
  writeFileSync(join(stage, 'job.sh'), files.job);
  writeFileSync(join(stage, 'peer-job.sh'), files.peerJob);
  return ok(stage);
}

/** `image`'s initrd with the staged project appended as a second archive, written to `out`. */
export function appendProject(imageInitrd: string, stage: string, out: string): Result<void> {
  const cpio = 'cd "$1" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0';
  const listed = spawnSync('sh', ['-c', cpio, 'sh', stage], { maxBuffer: 1 << 30 });
  if (listed.status !== 0) return err(`cpio of the project failed: ${listed.stderr?.toString() ?? ''}`);
  const base = readFileSync(imageInitrd);
  const fd = openSync(out, 'w');
  try {
    writeSync(fd, base);
    writeSync(fd, new Uint8Array((4 - (base.length % 4)) % 4));
    writeSync(fd, listed.stdout);
  } finally {
    closeSync(fd);
  }
  return ok();
}
