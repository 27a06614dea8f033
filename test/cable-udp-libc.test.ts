// The UDP cable on a socket the model's thread reads through libc (udp-socket-cable.ts): the
// same wire as the dgram cable (one frame per datagram, 127.0.0.0/8 only, strangers dropped),
// frames taken only when its owner delivers them, a port in use an error naming it.
import t from 'tap';
import { createSocket } from 'node:dgram';
import { UdpSocketCable } from '../drivers/emu/host/cable/udp-socket-cable.ts';
import { UdpCable } from '../drivers/emu/host/cable/udp-cable.ts';
import { numberedFrame, waitUntil } from './helpers/wait.ts';
import { exchangeNumberedFrames } from './helpers/numbered-exchange.ts';

function must(r: ReturnType<typeof UdpSocketCable.create>): UdpSocketCable {
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

function openPair(t: { equal: (a: unknown, b: unknown) => void; teardown: (f: () => void) => void }):
  [UdpSocketCable, UdpSocketCable] {
  const a = must(UdpSocketCable.create({ localPort: 0, remotePort: 9 }));
  const b = must(UdpSocketCable.create({ localPort: 0, remotePort: a.localPort }));
  t.equal(a.setRemotePort(b.localPort).ok, true);
  t.teardown(() => { a.close(); b.close(); });
  return [a, b];
}

/** Delivers until `done` or the bound (datagrams over the loopback take a moment). */
async function deliverUntil(cables: UdpSocketCable[], done: () => boolean, what: string): Promise<void> {
  await waitUntil(() => {
    for (const c of cables) c.deliverPending();
    return done();
  }, what);
}

t.test('two libc UDP cables carry frames both ways, one frame per datagram, taken when delivered', async (t) => {
  const [a, b] = openPair(t);
  t.ok(a.fd >= 0 && b.fd >= 0 && a.fd !== b.fd, 'each has its own socket');
  t.ok(a.localPort > 0 && b.localPort > 0, 'port 0 picked free ports');
  await exchangeNumberedFrames(t, a, b, (done, what) => deliverUntil([a, b], done, what), (arrived) => {
    t.equal(arrived, 0, 'nothing arrives before the owner delivers');
  });
});

t.test('it talks to the dgram cable: the same wire', async (t) => {
  const a = must(UdpSocketCable.create({ localPort: 0, remotePort: 9 }));
  const b = await UdpCable.open({ localPort: 0, remotePort: a.localPort });
  if (!b.ok) throw new Error(b.error);
  t.teardown(() => { a.close(); b.value.close(); });
  a.setRemotePort(b.value.localPort);
  const atA: number[][] = [];
  const atB: number[][] = [];
  a.setReceiver((frame, length) => atA.push([...frame.subarray(0, length)]));
  b.value.setReceiver((frame, length) => atB.push([...frame.subarray(0, length)]));
  a.send(numberedFrame(7, 300), 300);
  b.value.send(numberedFrame(8, 90), 90);
  await deliverUntil([a], () => atA.length === 1 && atB.length === 1, 'one frame each way');
  t.same(atB[0], [...numberedFrame(7, 300)], 'libc -> dgram');
  t.same(atA[0], [...numberedFrame(8, 90)], 'dgram -> libc');
});

t.test('datagrams from anyone but the remote, and longer than the largest frame, are dropped and counted',
  async (t) => {
    const a = must(UdpSocketCable.create({ localPort: 0, remotePort: 9, maxFrameBytes: 1500 }));
    const b = must(UdpSocketCable.create({ localPort: 0, remotePort: a.localPort }));
    a.setRemotePort(b.localPort);
    t.teardown(() => { a.close(); b.close(); });
    const got: number[] = [];
    a.setReceiver((_frame, length) => got.push(length));
    const stranger = createSocket('udp4');
    t.teardown(() => stranger.close());
    await new Promise<void>((r) => stranger.bind(0, '127.0.0.1', r));
    await new Promise<void>(
      (r, j) => stranger.send(new Uint8Array(60), a.localPort, '127.0.0.1', (e) => (e ? j(e) : r())),
    );
    b.send(new Uint8Array(1600), 1600); // over a's 1500: seen whole (MSG_TRUNC) and dropped
    b.send(new Uint8Array(60), 60);
    await deliverUntil([a], () => got.length === 1 && a.stats.receiveDropped === 2, 'one taken, two dropped');
    t.same(got, [60], 'only the remote\'s frame that fits is handed on');
  });

t.test('addresses outside 127.0.0.0/8 and bad ports are refused', async (t) => {
  const refused: [string, Parameters<typeof UdpSocketCable.create>[0]][] = [
    ['remote 10.0.0.1', { localPort: 0, remotePort: 5000, remoteHost: '10.0.0.1' }],
    ['local 0.0.0.0', { localPort: 0, remotePort: 5000, localHost: '0.0.0.0' }],
    ['a host name', { localPort: 0, remotePort: 5000, remoteHost: 'localhost' }],
    ['remote port 0', { localPort: 0, remotePort: 0 }],
    ['local port 65536', { localPort: 65536, remotePort: 5000 }],
    ['a frame size over a datagram', { localPort: 0, remotePort: 5000, maxFrameBytes: 65508 }],
  ];
  for (const [what, options] of refused) {
    const r = UdpSocketCable.create(options);
    t.equal(r.ok, false, what);
    if (!r.ok) t.match(r.error, /^UDP cable: /, `${what}: ${r.error}`);
  }
  const loop2 =
    UdpSocketCable.create({ localPort: 0, remotePort: 5000, localHost: '127.0.0.2', remoteHost: '127.0.0.3' });
  t.equal(loop2.ok, true, 'any address in 127.0.0.0/8 is taken');
  if (loop2.ok) loop2.value.close();
});

t.test('binding a port already in use is an error value naming the port', async (t) => {
  const [a] = openPair(t);
  const again = UdpSocketCable.create({ localPort: a.localPort, remotePort: 5000 });
  t.equal(again.ok, false);
  if (!again.ok)
    t.match(again.error, new RegExp(`port ${a.localPort} on 127\\.0\\.0\\.1 is already bound`), again.error);
  const dgram = createSocket('udp4');
  t.teardown(() => dgram.close());
  const port = await new Promise<number>((r) => dgram.bind(0, '127.0.0.1', () => r(dgram.address().port)));
  const held = UdpSocketCable.create({ localPort: port, remotePort: 5000 });
  t.equal(held.ok, false, 'a port another program holds too');
  if (!held.ok) t.match(held.error, new RegExp(`port ${port} `), held.error);
});

t.test('a closed cable drops what it is given and delivers nothing', async (t) => {
  const [a] = openPair(t);
  a.close();
  a.send(new Uint8Array(60), 60);
  t.equal(a.stats.sendDropped, 1);
  t.equal(a.deliverPending(), 0);
  t.equal(a.fd, -1);
  a.close();
});
