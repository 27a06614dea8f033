// Issue 15, tests on a loaded machine: free ports without the race of "bind 0, close, hand on".
// Ports come from outside the kernel's ephemeral range (the kernel never hands those out by
// itself) and each is reserved by a lock file holding our process id, which other users respect.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  candidatePorts, ephemeralRange, freeTcpPort, freeUdpPort, freeUdpPortPair, lockPort, pickRunPorts, unlockPort,
} from '../scripts/interop/free-ports.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

t.test('the ephemeral range is read as the kernel writes it', async (t) => {
  t.same(ephemeralRange('32768\t60999\n'), [32768, 60999]);
  t.same(ephemeralRange('garbage'), [32768, 60999], 'unreadable: Linux\'s default');
  const c = candidatePorts([32768, 60999]);
  t.ok(c.every((p) => (p >= 20000 && p < 32768) || (p > 60999 && p <= 65535)),
    'nothing inside the range, nothing below 20000');
  t.equal(c.length, 32768 - 20000 + 65535 - 60999);
});

t.test('reserved ports lie outside the range, are distinct, and are locked with our pid', async (t) => {
  const [lo, hi] = ephemeralRange();
  const ports = [...await freeUdpPortPair(), await freeUdpPort(), await freeTcpPort(), await freeTcpPort()];
  const run = await pickRunPorts();
  ports.push(run.guestPort, run.hostPort, run.tcpPort, run.serverPort);
  t.equal(new Set(ports).size, ports.length, 'all distinct');
  for (const p of ports) {
    t.ok(p < lo || p > hi, `${p} is outside ${lo}..${hi}`);
    const lock = join(tmpdir(), 'rig-bnxt-ports', String(p));
    t.ok(existsSync(lock) && Number(readFileSync(lock, 'utf8')) === process.pid, `${p} is locked by this process`);
  }
});

/** A process id that no process has now: a child that has already exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

t.test('a lock whose owner is gone is taken; a live owner\'s, one without a pid and one being judged are not',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'free-ports-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = (p: number) => join(dir, String(p));
    writeFileSync(file(1), String(deadPid()));
    t.ok(lockPort(1, dir), 'stale: taken');
    t.equal(readFileSync(file(1), 'utf8'), String(process.pid), 'now ours');
    t.notOk(lockPort(1, dir), 'ours already: not taken twice');
    writeFileSync(file(2), String(process.ppid));
    t.notOk(lockPort(2, dir), 'a live owner\'s lock is respected');
    t.equal(readFileSync(file(2), 'utf8'), String(process.ppid), 'and left as it was');
    writeFileSync(file(3), '');
    t.notOk(lockPort(3, dir), 'a lock without a pid (its owner may be writing it now) is left alone');
    t.equal(readFileSync(file(3), 'utf8'), '');
    // Another process is judging lock 4 (it made the breaker): only it may remove the stale lock,
    // or two processes that both read the dead pid would each remove "it" and both take the port.
    const stale = String(deadPid());
    writeFileSync(file(4), stale);
    writeFileSync(`${file(4)}.break`, '');
    t.notOk(lockPort(4, dir), 'a lock another process is judging is not taken');
    t.equal(readFileSync(file(4), 'utf8'), stale, 'nor removed');
    rmSync(`${file(4)}.break`);
    t.ok(lockPort(4, dir), 'judged by nobody else: taken');
    unlockPort(1, dir);
    t.notOk(existsSync(file(1)), 'unlockPort gives the lock back');
    t.same(readdirSync(dir).filter((f) => f.startsWith('.')), [], 'no draft left behind');
  });

t.test('processes racing for the same stale locks: each port goes to one of them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'free-ports-race-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const PORTS = 300;
  const RACERS = 4;
  const stale = String(deadPid());
  for (let p = 1; p <= PORTS; p++) writeFileSync(join(dir, String(p)), stale);
  // Each racer waits for one start time, takes what it can, prints it, and holds its locks until
  // its stdin closes (a racer that exited would give its ports back to the later ones).
  const start = Date.now() + 1500;
  const code = `
    import { lockPort } from './scripts/interop/free-ports.ts';
    while (Date.now() < ${start});
    const won = [];
    for (let p = 1; p <= ${PORTS}; p++) if (lockPort(p, ${JSON.stringify(dir)})) won.push(p);
    console.log(JSON.stringify(won));
    process.stdin.resume();
    process.stdin.on('end', () => process.exit(0));`;
  const racers = Array.from({ length: RACERS }, () =>
    spawn(process.execPath, ['--import', './scripts/register-ts.mjs', '--input-type=module', '-e', code], {
      cwd: root, stdio: ['pipe', 'pipe', 'inherit'],
    }));
  const won = await Promise.all(racers.map((r) => new Promise<number[]>((resolve) => {
    let out = '';
    r.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve(JSON.parse(out) as number[]);
    });
    r.on('exit', () => resolve([]));
  })));
  for (const r of racers) r.stdin!.end();
  const all = won.flat();
  t.equal(new Set(all).size, all.length, 'no port went to two racers');
  t.equal(all.length, PORTS, 'every port went to one of them');
});
