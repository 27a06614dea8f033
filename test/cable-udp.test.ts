import t from 'tap';
import { createSocket } from 'node:dgram';
import { UdpCable } from '../drivers/emu/host/cable/udp-cable.ts';
import { waitUntil } from './helpers/wait.ts';
import { exchangeNumberedFrames } from './helpers/numbered-exchange.ts';

async function openPair(
  t: { equal: (a: unknown, b: unknown) => void; teardown: (f: () => void) => void },
): Promise<[UdpCable, UdpCable]> {
  const a = await UdpCable.open({ localPort: 0, remotePort: 9 });
  if (!a.ok) throw new Error(a.error);
  const b = await UdpCable.open({ localPort: 0, remotePort: a.value.localPort });
  if (!b.ok) throw new Error(b.error);
  t.equal(a.value.setRemotePort(b.value.localPort).ok, true);
  t.teardown(() => { a.value.close(); b.value.close(); });
  return [a.value, b.value];
}

t.test('two UDP cables on 127.0.0.1 carry frames both ways, one frame per datagram', async (t) => {
  const [a, b] = await openPair(t);
  await exchangeNumberedFrames(t, a, b, waitUntil);
});

t.test('datagrams from anyone but the configured remote are dropped and counted', async (t) => {
  const [a, b] = await openPair(t);
  let got = 0;
  a.setReceiver(() => got++);
  const stranger = createSocket('udp4');
  t.teardown(() => stranger.close());
  await new Promise<void>((r) => stranger.bind(0, '127.0.0.1', r));
  await new Promise<void>(
    (r, j) => stranger.send(new Uint8Array(60), a.localPort, '127.0.0.1', (e) => (e ? j(e) : r())),
  );
  b.send(new Uint8Array(60), 60);
  await waitUntil(() => got === 1 && a.stats.receiveDropped === 1, 'one taken, one dropped');
  t.pass('the stranger\'s datagram was dropped');
});

t.test('addresses outside 127.0.0.0/8 and bad ports are refused', async (t) => {
  const refused: [string, Parameters<typeof UdpCable.create>[0]][] = [
    ['remote 10.0.0.1', { localPort: 0, remotePort: 5000, remoteHost: '10.0.0.1' }],
    ['remote 192.168.1.20', { localPort: 0, remotePort: 5000, remoteHost: '192.168.1.20' }],
    ['local 0.0.0.0', { localPort: 0, remotePort: 5000, localHost: '0.0.0.0' }],
    ['local 128.0.0.1', { localPort: 0, remotePort: 5000, localHost: '128.0.0.1' }],
    ['a host name', { localPort: 0, remotePort: 5000, remoteHost: 'localhost' }],
    ['IPv6 loopback', { localPort: 0, remotePort: 5000, remoteHost: '::1' }],
    ['not an address', { localPort: 0, remotePort: 5000, remoteHost: '127.0.0.256' }],
    ['remote port 0', { localPort: 0, remotePort: 0 }],
    ['local port 65536', { localPort: 65536, remotePort: 5000 }],
  ];
  for (const [what, options] of refused) {
    const r = UdpCable.create(options);
    t.equal(r.ok, false, what);
    if (!r.ok) t.match(r.error, /^UDP cable: /, `${what}: ${r.error}`);
  }
  const loop2 =
    await UdpCable.open({ localPort: 0, remotePort: 5000, localHost: '127.0.0.2', remoteHost: '127.0.0.3' });
  t.equal(loop2.ok, true, 'any address in 127.0.0.0/8 is taken');
  if (loop2.ok) loop2.value.close();
});

t.test('binding a port already in use is an error value', async (t) => {
  const [a] = await openPair(t);
  const again = await UdpCable.open({ localPort: a.localPort, remotePort: 5000 });
  t.equal(again.ok, false);
  if (!again.ok)
    t.match(again.error, new RegExp(`port ${a.localPort} on 127\\.0\\.0\\.1 is already bound`),
      `it names the port: ${again.ok ? '' : again.error}`);
});

t.test('a closed cable drops what it is given', async (t) => {
  const [a] = await openPair(t);
  a.close();
  a.send(new Uint8Array(60), 60);
  t.equal(a.stats.sendDropped, 1);
  a.close();
});
