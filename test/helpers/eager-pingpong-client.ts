/**
 * An ibv_rc_pingpong client at its most eager (child of test/cli-pingpong-rnr.test.ts): it
 * connects its QP and sends its first message as soon as it has the server's address, and writes
 * "done" only afterwards, which rc_pingpong's protocol allows (the server's QP is connected
 * before the server answers). A server that posts its receive late answers with an RNR NAK.
 * Then it bounces the remaining messages as rc_pingpong's client does and prints one JSON line
 * with its NIC's RNR NAK count.
 *   args: SERVER_TCP_PORT LOCAL_UDP REMOTE_UDP OWN_MAC SERVER_MAC SIZE ITERS DONE_DELAY_MS
 */
import { Nic, Qp, Region } from '../../lib/index.ts';
import { parseMac } from '../../scripts/cli/option-values.ts';
import { connectWithRetry, SocketChannel } from '../../scripts/cli/exchange-socket.ts';
import {
  formatPingpongMessage, parsePingpongMessage, PINGPONG_DONE, PINGPONG_MESSAGE_BYTES,
} from '../../scripts/cli/exchange.ts';
import { engineCounters, must } from './qp-data.ts';

const [tcpPort, localUdp, remoteUdp, ownMac, serverMac, size, iters, doneDelayMs] = process.argv.slice(2);
const nic = must(Nic.open(`emu:${localUdp}:${remoteUdp}`, { mac: ownMac! }), 'Nic.open');
const q = must(Qp.make(nic), 'Qp.make');
const n = Number(size);
const r = must(Region.alloc(nic, 2 * n + 64), 'Region.alloc');
const e = q.endpoint;
const socket = must(
  await connectWithRetry('127.0.0.1', Number(tcpPort),
    { retryMs: 20_000, retryIntervalMs: 100, attemptTimeoutMs: 3000 }),
  'connect',
);
const channel = new SocketChannel(socket);
must(await channel.write(formatPingpongMessage({ lid: 0, qpn: e.qp, psn: e.psn, gid: e.gid }), 10_000, 'address'),
  'write address');
const server = must(
  parsePingpongMessage(must(await channel.readExactly(PINGPONG_MESSAGE_BYTES, 10_000, 'server address'), 'read')),
  'parse',
);
const mac = parseMac(serverMac!);
if (!mac.ok) throw new Error(mac.error);
must(q.connect({ qp: server.qpn, psn: server.psn, gid: server.gid, mac: mac.value }, { pathMtu: 1024 }), 'connect QP');
q.receive(r, n, n);
q.send(r, 0, n); // before "done": the server's receive must already be there
await new Promise((resolve) => setTimeout(resolve, Number(doneDelayMs)));
must(await channel.write(PINGPONG_DONE, 10_000, 'done'), 'write done');
for (let i = 0; i < Number(iters); i++) {
  const s = q.wait('send', 30e6);
  const got = q.wait('receive', 30e6);
  if (!s?.ok || !got?.ok) throw new Error(`iteration ${i}: send ${JSON.stringify(s)}, receive ${JSON.stringify(got)}`);
  if (i + 1 < Number(iters)) {
    q.receive(r, n, n);
    q.send(r, 0, n);
  }
}
const c = engineCounters(nic);
channel.close();
nic.close();
console.log(JSON.stringify({ rnrNaksReceived: c.rnrNaksReceived, iterations: Number(iters) }));
