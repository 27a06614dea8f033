// The two UDP cables are twins (test/tidy.test.ts PERF_FORKS): UdpSocketCable, the copy read by
// the model's thread through libc, against UdpCable, the definition on Node's dgram socket. The
// same script of datagrams in and frames out gives both the same frames handed on, the same
// datagrams on the wire and the same counters: frames from the remote that fit are taken;
// frames from a stranger, or longer than the largest frame, are dropped and counted; a frame too
// long to send, and anything sent after close, is dropped and counted.
import t from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import { UdpCable } from '../drivers/emu/host/cable/udp-cable.ts';
import { UdpSocketCable } from '../drivers/emu/host/cable/udp-socket-cable.ts';
import { numberedFrame, waitUntil } from './helpers/wait.ts';

const MAX_FRAME = 1500;

interface Seen {
  readonly handedOn: number[][];
  readonly onTheWire: number[][];
  readonly stats: Record<string, number>;
}

async function bound(): Promise<Socket> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  return s;
}

function sendFrom(s: Socket, bytes: Uint8Array, port: number): Promise<void> {
  return new Promise((r, j) => s.send(bytes, port, '127.0.0.1', (e) => (e ? j(e) : r())));
}

/** Runs the script on a cable made by `make` (bound to a free port, sending to `remotePort`). */
async function script(
  make: (remotePort: number) => Promise<UdpCable | UdpSocketCable>,
  drive: (c: UdpCable | UdpSocketCable) => void,
): Promise<Seen> {
  const peer = await bound();
  const stranger = await bound();
  const onTheWire: number[][] = [];
  peer.on('message', (m: Buffer) => onTheWire.push([...m.subarray(0, 4), m.length]));
  const cable = await make(peer.address().port);
  const handedOn: number[][] = [];
  cable.setReceiver((frame, length) => handedOn.push([...frame.subarray(0, 4), length]));
  const settle = async (done: () => boolean, what: string) => waitUntil(() => { drive(cable); return done(); }, what);
  try {
    // In: the remote's frames, one too long, a stranger's; each waited for, so the order holds.
    const port = cable.localPort;
    await sendFrom(peer, numberedFrame(1, 60), port);
    await settle(() => handedOn.length === 1, 'the first frame');
    await sendFrom(peer, numberedFrame(2, MAX_FRAME + 1), port);
    await settle(() => cable.stats.receiveDropped === 1, 'the long frame dropped');
    await sendFrom(stranger, numberedFrame(3, 60), port);
    await settle(() => cable.stats.receiveDropped === 2, 'the stranger\'s frame dropped');
    await sendFrom(peer, numberedFrame(4, MAX_FRAME), port);
    await settle(() => handedOn.length === 2, 'the largest frame');
    // Out: frames that fit, one that does not, one of a longer array's first bytes.
    cable.send(numberedFrame(5, 64), 64);
    cable.send(numberedFrame(6, MAX_FRAME + 1), MAX_FRAME + 1);
    cable.send(numberedFrame(7, 200), 100);
    await settle(() => onTheWire.length === 2, 'the two frames that fit');
    cable.close();
    cable.send(numberedFrame(8, 64), 64);
    await sendFrom(peer, numberedFrame(9, 60), port);
    await new Promise((r) => setTimeout(r, 50));
    drive(cable);
    return { handedOn, onTheWire, stats: { ...cable.stats } };
  } finally {
    cable.close();
    peer.close();
    stranger.close();
  }
}

t.test('UdpSocketCable hands on, sends and counts what UdpCable does for the same datagrams', async (t) => {
  const dgram = await script(async (remotePort) => {
    const r = await UdpCable.open({ localPort: 0, remotePort, maxFrameBytes: MAX_FRAME });
    if (!r.ok) throw new Error(r.error);
    return r.value;
  }, () => undefined);
  const made = UdpSocketCable.create({ localPort: 0, remotePort: 9, maxFrameBytes: MAX_FRAME });
  const libc = await script(async (remotePort) => {
    if (!made.ok) throw new Error(made.error);
    if (!made.value.setRemotePort(remotePort).ok) throw new Error('setRemotePort');
    return made.value;
  }, (c) => { if (c instanceof UdpSocketCable) c.deliverPending(); });
  t.same(libc, dgram, 'the same frames handed on and sent, the same counters');
  t.same(dgram.handedOn, [[0, 1, 33, 34, 60], [0, 4, 126, 127, MAX_FRAME]], 'the remote\'s frames that fit');
  t.same(dgram.onTheWire, [[0, 5, 157, 158, 64], [0, 7, 219, 220, 100]], 'the frames that fit, as long as given');
  t.match(dgram.stats, {
    framesReceived: 2, bytesReceived: 60 + MAX_FRAME, receiveDropped: 2, framesSent: 2, bytesSent: 164, sendDropped: 2,
  }, 'the counters as the cables define them');
});
