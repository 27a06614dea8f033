// Issue 14 item 4: the peer's MAC without --mac where the system knows it: in the GID
// (link-local), in the kernel's ARP table (/proc/net/arp, complete entries only), or published
// by another rig-bnxt process on this machine; two pingpong processes pair with no --mac at all.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ipv4FromGid, macFromArpTable, publishOwnAddress, resolvePeerMac } from '../scripts/cli/neighbours.ts';
import { freeTcpPort, freeUdpPortPair } from '../scripts/interop/free-ports.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

// /proc/net/arp as the kernel prints it (net/ipv4/arp.c arp_format_neigh_entry: the header line,
// then IP, HW type, flags, HW address, mask, device; flags 0x2 = ATF_COM, 0x0 = incomplete).
const ARP = [
  'IP address       HW type     Flags       HW address            Mask     Device',
  '10.0.2.2         0x1         0x2         52:55:0a:00:02:02     *        eth0',
  '10.77.0.9        0x1         0x0         00:00:00:00:00:00     *        eth1',
  '10.77.0.1        0x1         0x6         52:54:00:77:00:01     *        eth1',
  '',
].join('\n');

const mapped = (a: number, b: number, c: number, d: number) => Uint8Array.from([
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d,
]);
const hex = (m: Uint8Array | undefined) =>
  (m ? [...m].map((x) => x.toString(16).padStart(2, '0')).join(':') : undefined);

function scratch(t: { teardown(f: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-neighbours-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('an IPv4-mapped GID gives its address; others give none', async (t) => {
  t.equal(ipv4FromGid(mapped(10, 77, 0, 1)), '10.77.0.1');
  t.equal(ipv4FromGid(Uint8Array.from([0xfe, 0x80, ...Array(14).fill(0)])), undefined);
});

t.test('/proc/net/arp: complete entries only', async (t) => {
  t.equal(hex(macFromArpTable(ARP, '10.77.0.1')), '52:54:00:77:00:01', 'complete (flags 0x6 has ATF_COM)');
  t.equal(macFromArpTable(ARP, '10.77.0.9'), undefined, 'incomplete entry (flags 0x0) is no answer');
  t.equal(macFromArpTable(ARP, '10.77.0.2'), undefined, 'absent');
  t.equal(macFromArpTable('', '10.77.0.1'), undefined, 'empty table');
});

t.test('resolvePeerMac looks in the GID, the ARP table, then what rig-bnxt processes published', async (t) => {
  const dir = scratch(t);
  const arpTable = join(dir, 'arp');
  writeFileSync(arpTable, ARP);
  const published = join(dir, 'published');
  const linkLocal = Uint8Array.from([0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02 ^ 0x02, 0x62, 0x6e, 0xff, 0xfe, 0, 0, 7]);
  t.same(resolvePeerMac(linkLocal, { arpTable, published }),
    { ok: true, value: Uint8Array.from([0x02, 0x62, 0x6e, 0, 0, 7]) }, 'from a link-local GID');
  t.same(resolvePeerMac(mapped(10, 77, 0, 1), { arpTable, published }),
    { ok: true, value: Uint8Array.from([0x52, 0x54, 0, 0x77, 0, 1]) }, 'from the ARP table');
  const missing = resolvePeerMac(mapped(10, 77, 3, 3), { arpTable, published });
  t.equal(missing.ok, false);
  if (!missing.ok) {
    t.match(missing.error, /10\.77\.3\.3/, 'the error names the address');
    t.match(missing.error, arpTable, 'and the table looked in');
    t.match(missing.error, /--mac/, 'and the way out');
  }
  const withdraw = publishOwnAddress('10.77.3.3', Uint8Array.from([2, 0, 0, 0, 3, 3]), published);
  t.same(resolvePeerMac(mapped(10, 77, 3, 3), { arpTable, published }),
    { ok: true, value: Uint8Array.from([2, 0, 0, 0, 3, 3]) }, 'published by a live process');
  withdraw();
  t.equal(resolvePeerMac(mapped(10, 77, 3, 3), { arpTable, published }).ok, false, 'withdrawn');
  // An entry left behind by a process that died is ignored.
  writeFileSync(join(published, '10.77.4.4'), '02:00:00:00:04:04 2147483646\n');
  t.equal(resolvePeerMac(mapped(10, 77, 4, 4), { arpTable, published }).ok, false, 'a dead publisher is ignored');
});

function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', 'scripts/cli.ts', ...args], {
      cwd: root,
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

t.test('two rig-bnxt pingpong processes on software NICs pair with no --mac', async (t) => {
  const [a, b] = await freeUdpPortPair();
  const tcp = await freeTcpPort();
  const server = cli(['pingpong', '-d', `emu:${a}:${b}`, '-s', '64', '-n', '20', '-p', String(tcp)]);
  const client = cli(['pingpong', '-d', `emu:${b}:${a}`, '-s', '64', '-n', '20', '-p', String(tcp), '127.0.0.1']);
  const [s, c] = await Promise.all([server, client]);
  t.equal(s.code, 0, `server: ${s.err}`);
  t.equal(c.code, 0, `client: ${c.err}`);
  t.match(s.out, /20 iters in [\d.]+ seconds/);
  t.match(c.out, /20 iters in [\d.]+ seconds/);
});
