// `rig-bnxt serve SOCKET` as a user runs it: it listens, a vfio-user client (QEMU's role) speaks
// to it, and when the client leaves it says what happened, writes the HWRM log and exits 0.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TestClient, fields } from './helpers/vfio-user-client.ts';
import { emuChip } from '../drivers/emu/model/config.ts';

/** The chip software NICs opened without one are (RIG_BNXT_CHIP's, else the default). */
const CHIP = emuChip(undefined);

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = ['--import', './scripts/register-ts.mjs', 'scripts/cli.ts'];

t.test('bad arguments: one line, exit 2', async (t) => {
  for (const [args, msg] of [
    [[], /missing SOCKET/], [['a', 'b'], /one SOCKET/], [['s', '--chip', 'X'],
      /--chip X: not a known chip \(one of BCM57508, .*BCM57608/],
    [['s', '-d', 'eth0'], /emu or emu:LOCAL:REMOTE/], [['s', '--bogus'], /Unknown option/i],
  ] as const) {
    const r = spawnSync(process.execPath, [...cli, 'serve', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    t.equal(r.status, 2, args.join(' '));
    t.match(r.stderr, msg);
    t.notMatch(r.stderr, /\n\s+at /, 'no stack');
  }
});

// The chip (--chip, else RIG_BNXT_CHIP's or the default) sets the ids the client reads (bnxt.c
// bnxt_pci_tbl: device << 16 | vendor 0x14e4).
const IDS: Record<string, number> = { BCM57508: 0x175014e4, BCM57608: 0x176014e4 };
const SERVED = [
  [[], CHIP.name, IDS[CHIP.name]!], [['--chip', 'BCM57608'], 'BCM57608', 0x176014e4],
  [['--chip', 'BCM57508'], 'BCM57508', 0x175014e4],
] as const;
for (const [chipArgs, name, ids] of SERVED)
t.test(`serves one client as ${name}, then reports and exits 0`, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'serve-'));
  const sock = join(dir, 'nic.sock');
  const log = join(dir, 'hwrm.log');
  const p = spawn(process.execPath, [...cli, 'serve', sock, ...chipArgs, '--hwrm-log', log], { cwd: root });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { out += d; });
  const exited = new Promise<number | null>((r) => p.on('exit', (c) => r(c)));
  t.teardown(() => { p.kill(); });
  const start = Date.now();
  while (!out.includes('waiting for a vfio-user client')) {
    if (Date.now() - start > 60_000) throw new Error(`serve did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  t.match(out, new RegExp(`serving ${name} \\(14e4:${(ids >>> 16).toString(16)}\\) MAC 02:62:6e:`));
  const c = TestClient.connect(sock);
  const v = c.call(1, new Uint8Array([0, 0, 0, 0, ...new TextEncoder().encode('{}'), 0]));
  t.equal(v.flags, 1, 'VERSION answered');
  const read = c.call(9, fields([8, 0n], [4, 7], [4, 4]));
  t.equal(new DataView(read.body.buffer).getUint32(16, true), ids);
  c.close();
  t.equal(await exited, 0);
  t.match(out, /ended: the client closed the connection; 2 messages, 0 refused, 0 HWRM commands/);
  t.equal(readFileSync(log, 'utf8'), '', 'no HWRM command was sent: the log is empty, and says so by existing');
});
