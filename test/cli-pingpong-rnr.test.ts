// Issue 15 item 6: the pingpong server posts its receive before it sends its own address, as
// ibv_rc_pingpong does (rdma-core libibverbs/examples/rc_pingpong.c posts rx_depth receives
// before the exchange). A client may send as soon as it has the server's address, before it
// writes "done"; the server must not answer that first message with an RNR NAK.
import t from 'tap';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freeTcpPort, freeUdpPortPair } from '../scripts/interop/free-ports.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

function child(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ['--import', './scripts/register-ts.mjs', ...args], { cwd: root });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.on('close', (code) => { clearTimeout(timer); resolve({ code, out, err }); });
  });
}

t.test('a client that sends before "done" meets a posted receive: no RNR NAK', async (t) => {
  const [serverUdp, clientUdp] = await freeUdpPortPair();
  const tcp = await freeTcpPort();
  const serverMac = '02:00:00:00:5e:01';
  const clientMac = '02:00:00:00:5e:02';
  const iters = 20;
  const server =
    child(['scripts/cli.ts', 'pingpong', '-d', `emu:${serverUdp}:${clientUdp}`, '--nic-mac', serverMac, '--mac',
    clientMac,
    '-s', '64', '-n', String(iters), '-p', String(tcp)]);
  // "done" follows the first message by 300 ms: long enough for that message to reach a server
  // that has not posted its receive yet.
  const client = child([
    'test/helpers/eager-pingpong-client.ts', String(tcp), String(clientUdp), String(serverUdp), clientMac, serverMac,
    '64', String(iters), '300',
  ]);
  const [s, c] = await Promise.all([server, client]);
  t.equal(s.code, 0, `server exits 0: ${s.err}`);
  t.equal(c.code, 0, `client exits 0: ${c.err}`);
  t.match(s.out, new RegExp(`${iters} iters in [\\d.]+ seconds`), 'the server counted every iteration');
  const report = JSON.parse(c.out.trim().split('\n').pop()!);
  t.equal(report.rnrNaksReceived, 0, 'the server never answered "receiver not ready"');
});
