// Issue 15, tests on a loaded machine: free ports without the race of "bind 0, close, hand on".
// Ports come from outside the kernel's ephemeral range (the kernel never hands those out by
// itself) and each is reserved by a lock file holding our process id, which other users respect.
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  candidatePorts, ephemeralRange, freeTcpPort, freeUdpPort, freeUdpPortPair, pickRunPorts,
} from '../scripts/interop/free-ports.ts';

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
