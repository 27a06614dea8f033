import t from 'tap';
import * as net from 'node:net';
import {
  formatPingpongMessage, parsePingpongMessage, PINGPONG_MESSAGE_BYTES, PINGPONG_DONE, pingpongServerExchange,
  pingpongClientExchange, macFromGid, endpointFromPingpong,
} from '../scripts/cli/exchange.ts';
import type { PingpongDest } from '../scripts/cli/exchange.ts';

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
const bytes = (...b: number[]) => Uint8Array.from(b);

// A RoCE GID (IPv4-mapped 192.168.1.2) and a link-local one made from MAC 00:11:22:33:44:55.
const mappedGid = bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xc0, 0xa8, 0x01, 0x02);
const linkLocalGid = bytes(0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55);

// What ibv_rc_pingpong sends for lid 0, qpn 0x000107, psn 0x9d1c4c, that GID: sprintf("%04x:%06x:%06x:%s")
// with gid_to_wire_gid's four "%08x" words, then the NUL. Written out by hand.
const serverDest: PingpongDest = { lid: 0, qpn: 0x107, psn: 0x9d1c4c, gid: mappedGid };
const serverWire = ascii('0000:000107:9d1c4c:00000000000000000000ffffc0a80102\0');
const clientDest: PingpongDest = { lid: 0x1a2b, qpn: 0xabcdef, psn: 0x000001, gid: linkLocalGid };
const clientWire = ascii('1a2b:abcdef:000001:fe800000000000000211' + '22fffe334455\0');

function listening(): { port: Promise<number>; onListening: (port: number) => void } {
  let onListening!: (port: number) => void;
  const port = new Promise<number>((resolve) => { onListening = resolve; });
  return { port, onListening };
}

/** A port nobody listens on: bind, note it, close. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Connects a raw socket and collects everything the other side sends until it closes. */
function rawClient(port: number, toSend: Uint8Array[], gapMs = 20): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const got: Buffer[] = [];
    socket.on('data', (d) => got.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Uint8Array.from(Buffer.concat(got))));
    socket.on('connect', async () => {
      for (const chunk of toSend) {
        socket.write(chunk);
        await new Promise((r) => setTimeout(r, gapMs));
      }
    });
  });
}

t.test('the ibv_rc_pingpong message is 52 bytes: "%04x:%06x:%06x:" + 32 hex GID + NUL', async (t) => {
  t.equal(PINGPONG_MESSAGE_BYTES, 52);
  t.same([...formatPingpongMessage(serverDest)], [...serverWire]);
  t.same([...formatPingpongMessage(clientDest)], [...clientWire]);
  t.same([...PINGPONG_DONE], [0x64, 0x6f, 0x6e, 0x65, 0x00], '"done" with its NUL, sizeof "done" = 5');
});

t.test('parsing the ibv_rc_pingpong message', async (t) => {
  const r = parsePingpongMessage(clientWire);
  t.ok(r.ok);
  if (r.ok) {
    t.equal(r.value.lid, 0x1a2b);
    t.equal(r.value.qpn, 0xabcdef);
    t.equal(r.value.psn, 1);
    t.same([...r.value.gid], [...linkLocalGid]);
  }
  t.match(parsePingpongMessage(clientWire.subarray(0, 51)), { ok: false, error: /52 bytes, got 51/ });
  const noNul = Uint8Array.from(clientWire); noNul[51] = 0x30;
  t.match(parsePingpongMessage(noNul), { ok: false, error: /NUL/ });
  const bad = Uint8Array.from(clientWire); bad[4] = 0x2e; // '.' instead of ':'
  t.match(parsePingpongMessage(bad), { ok: false, error: /malformed ibv_rc_pingpong address: "1a2b\.abcdef/ });
  t.throws(() => formatPingpongMessage({ ...serverDest, qpn: 0x1000000 }), RangeError);
  t.throws(() => formatPingpongMessage({ ...serverDest, gid: new Uint8Array(6) }), RangeError);
});

t.test('pingpong server and client agree over 127.0.0.1 on an ephemeral port', async (t) => {
  const l = listening();
  const connectedTo: PingpongDest[] = [];
  const server = pingpongServerExchange(0, serverDest, {
    listenHost: '127.0.0.1',
    onListening: l.onListening,
    connect: (peer) => { connectedTo.push(peer); return { ok: true, value: undefined }; },
  });
  const port = await l.port;
  t.ok(port > 0, `bound port ${port} reported`);
  const client = await pingpongClientExchange('127.0.0.1', port, clientDest);
  const served = await server;
  t.match(client, { ok: true, value: { lid: 0, qpn: 0x107, psn: 0x9d1c4c } });
  t.match(served, { ok: true, value: { lid: 0x1a2b, qpn: 0xabcdef, psn: 1 } });
  t.equal(connectedTo.length, 1, 'the server connected its QP before answering');
  if (client.ok) t.same([...client.value.gid], [...mappedGid]);
});

t.test('the pingpong server speaks the exact bytes to a raw rc_pingpong-style client', async (t) => {
  const l = listening();
  const server = pingpongServerExchange(0, serverDest, { listenHost: '127.0.0.1', onListening: l.onListening });
  // Split the client's message to check the server does not rely on one read.
  const got = await rawClient(await l.port, [clientWire.subarray(0, 7), clientWire.subarray(7), PINGPONG_DONE]);
  t.same([...got], [...serverWire], 'the server answered with its 52 bytes and closed');
  t.match(await server, { ok: true, value: { qpn: 0xabcdef } });
});

t.test('the pingpong client speaks the exact bytes to a raw rc_pingpong-style server', async (t) => {
  const received: Buffer[] = [];
  const raw = net.createServer((socket) => {
    socket.on('data', (d) => {
      received.push(d);
      if (Buffer.concat(received).length === PINGPONG_MESSAGE_BYTES) socket.write(serverWire);
    });
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  const port = (raw.address() as net.AddressInfo).port;
  const r = await pingpongClientExchange('127.0.0.1', port, clientDest);
  await new Promise((resolve) => setTimeout(resolve, 50));
  raw.close();
  t.match(r, { ok: true, value: { lid: 0, qpn: 0x107, psn: 0x9d1c4c } });
  t.same([...Uint8Array.from(Buffer.concat(received))], [...clientWire, ...PINGPONG_DONE], 'address, then "done\\0"');
});

t.test('a refused server-side connect ends the exchange without an answer', async (t) => {
  const l = listening();
  const server = pingpongServerExchange(0, serverDest, {
    listenHost: '127.0.0.1', onListening: l.onListening, connect: () => ({ ok: false, error: 'QP is in ERR' }),
  });
  const client = await pingpongClientExchange('127.0.0.1', await l.port, clientDest);
  t.match(await server, { ok: false, error: "cannot connect to the client's QP: QP is in ERR" });
  t.match(client,
    { ok: false, error: /closed the connection while waiting for the server's address|connection reset/ });
});

t.test('an unreachable server is a clear error value', async (t) => {
  const port = await closedPort();
  const r = await pingpongClientExchange('127.0.0.1', port, clientDest, { connectRetryMs: 300 });
  t.same(r, { ok: false, error: `cannot reach 127.0.0.1:${port}: connection refused` });
});

t.test('the client retries while the server is not up yet', async (t) => {
  const port = await closedPort();
  const client = pingpongClientExchange('127.0.0.1', port, clientDest, { connectRetryMs: 5000 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const served = await pingpongServerExchange(port, serverDest, { listenHost: '127.0.0.1' });
  t.match(await client, { ok: true, value: { qpn: 0x107 } });
  t.match(served, { ok: true, value: { qpn: 0xabcdef } });
});

t.test('a server waits a bounded time for a client and for each message', async (t) => {
  const l = listening();
  const noClient = pingpongServerExchange(0, serverDest, {
    listenHost: '127.0.0.1', onListening: l.onListening, acceptTimeoutMs: 200,
  });
  const port = await l.port;
  t.same(await noClient, { ok: false, error: `no client connected to port ${port} within 0.2 s` });

  const l2 = listening();
  const silent = pingpongServerExchange(0, serverDest, {
    listenHost: '127.0.0.1', onListening: l2.onListening, ioTimeoutMs: 200,
  });
  const socket = net.connect({ host: '127.0.0.1', port: await l2.port });
  socket.on('error', () => {});
  t.same(await silent, { ok: false, error: "timed out after 0.2 s waiting for the client's address" });
  socket.destroy();
});

t.test('a peer that closes early is reported as such', async (t) => {
  const l = listening();
  const server = pingpongServerExchange(0, serverDest, { listenHost: '127.0.0.1', onListening: l.onListening });
  const socket = net.connect({ host: '127.0.0.1', port: await l.port });
  socket.on('error', () => {});
  socket.on('connect', () => socket.end(clientWire.subarray(0, 10)));
  t.same(await server, { ok: false, error: "the peer closed the connection while waiting for the client's address" });
});

t.test('a MAC can be recovered from a link-local GID only', async (t) => {
  t.same([...macFromGid(linkLocalGid)!], [0x00, 0x11, 0x22, 0x33, 0x44, 0x55], 'bit 1 of the first byte flipped back');
  t.equal(macFromGid(mappedGid), undefined);
  const e = endpointFromPingpong(clientDest, bytes(2, 0, 0, 0, 0, 1));
  t.equal(e.qp, 0xabcdef);
  t.equal(e.psn, 1);
});

