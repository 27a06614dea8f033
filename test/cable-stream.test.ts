import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StreamCable } from '../drivers/emu/host/cable/stream-cable.ts';
import { numberedFrame, waitUntil } from './helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'cable-stream-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const sockPath = () => join(dir, `s${n++}.sock`);

/** The QEMU stream framing written out by hand: 4-byte big-endian length, then the frame. */
function framed(frame: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + frame.length);
  out.set([frame.length >>> 24, (frame.length >>> 16) & 0xff, (frame.length >>> 8) & 0xff, frame.length & 0xff]);
  out.set(frame, 4);
  return out;
}

t.test('a listening and a connecting cable carry frames both ways', async (t) => {
  const path = sockPath();
  const server = await StreamCable.open({ path, mode: 'listen' });
  if (!server.ok) throw new Error(server.error);
  const client = await StreamCable.open({ path });
  if (!client.ok) throw new Error(client.error);
  t.teardown(() => { client.value.close(); server.value.close(); });
  const atServer: number[][] = [];
  const atClient: number[][] = [];
  server.value.setReceiver((f, len) => atServer.push([...f.subarray(0, len)]));
  client.value.setReceiver((f, len) => atClient.push([...f.subarray(0, len)]));
  await waitUntil(() => server.value.connected, 'the server to accept');
  const buf = new Uint8Array(3000);
  for (let seq = 0; seq < 50; seq++) {
    const f = numberedFrame(seq, 60 + seq * 53);
    buf.set(f);
    client.value.send(buf, f.length);
    buf.fill(0);
    server.value.send(numberedFrame(500 + seq, 64), 64);
  }
  await waitUntil(() => atServer.length === 50 && atClient.length === 50, '50 frames each way');
  for (let seq = 0; seq < 50; seq++) {
    t.same(atServer[seq], [...numberedFrame(seq, 60 + seq * 53)], `client -> server ${seq}`);
    t.same(atClient[seq], [...numberedFrame(500 + seq, 64)], `server -> client ${seq}`);
  }
});

/** A QEMU-like peer: a unix socket server that hands us the connection the cable makes. */
async function qemuLikePeer(path: string): Promise<{ peer: Promise<Socket>; close: () => void }> {
  let give: (s: Socket) => void = () => {};
  const peer = new Promise<Socket>((r) => (give = r));
  const server = createServer((s) => give(s));
  await new Promise<void>((r) => server.listen(path, r));
  return { peer, close: () => server.close() };
}

t.test('the frame reader takes any chunking: every split point, and byte by byte', async (t) => {
  const path = sockPath();
  const q = await qemuLikePeer(path);
  const cable = await StreamCable.open({ path, maxFrameBytes: 256 });
  if (!cable.ok) throw new Error(cable.error);
  const peer = await q.peer;
  t.teardown(() => { cable.value.close(); peer.destroy(); q.close(); });
  const got: number[][] = [];
  cable.value.setReceiver((f, len) => got.push([...f.subarray(0, len)]));
  const frames = [numberedFrame(1, 60), numberedFrame(2, 61), numberedFrame(3, 99)];
  const stream = Buffer.concat(frames.map(framed));
  const write = (b: Uint8Array) => new Promise<void>((r) => peer.write(b, () => r()));
  // One pass per split point: the stream in two writes cut at `cut`.
  for (let cut = 0; cut <= stream.length; cut++) {
    await write(stream.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 1));
    await write(stream.subarray(cut));
  }
  await waitUntil(() => got.length === 3 * (stream.length + 1), 'every split pass');
  let wrong = 0;
  got.forEach((g, i) => { if (JSON.stringify(g) !== JSON.stringify([...frames[i % 3]!])) wrong++; });
  t.equal(wrong, 0, 'every frame whole and in order');
  // Byte by byte.
  got.length = 0;
  for (let i = 0; i < stream.length; i++) await write(stream.subarray(i, i + 1));
  await waitUntil(() => got.length === 3, 'byte-by-byte frames');
  t.same(got, frames.map((f) => [...f]));
});

t.test('an over-long frame is skipped without losing step; an empty one is dropped', async (t) => {
  const path = sockPath();
  const q = await qemuLikePeer(path);
  const cable = await StreamCable.open({ path, maxFrameBytes: 100 });
  if (!cable.ok) throw new Error(cable.error);
  const peer = await q.peer;
  t.teardown(() => { cable.value.close(); peer.destroy(); q.close(); });
  const got: number[][] = [];
  cable.value.setReceiver((f, len) => got.push([...f.subarray(0, len)]));
  peer.write(Buffer.concat([framed(numberedFrame(1, 101)), framed(new Uint8Array(0)), framed(numberedFrame(2, 100))]));
  await waitUntil(() => got.length === 1 && cable.value.stats.receiveDropped === 2, 'one frame, two drops');
  t.same(got[0], [...numberedFrame(2, 100)]);
  cable.value.send(new Uint8Array(101), 101);
  t.equal(cable.value.stats.sendDropped, 1, 'too long to send');
});

t.test('what the cable sends is framed as QEMU expects', async (t) => {
  const path = sockPath();
  const q = await qemuLikePeer(path);
  const cable = await StreamCable.open({ path });
  if (!cable.ok) throw new Error(cable.error);
  const peer = await q.peer;
  t.teardown(() => { cable.value.close(); peer.destroy(); q.close(); });
  const chunks: Buffer[] = [];
  peer.on('data', (c: Buffer) => chunks.push(c));
  cable.value.send(Uint8Array.from([0xaa, 0xbb, 0xcc, 0xdd, 0xee]), 3);
  cable.value.send(new Uint8Array(258).fill(7), 258);
  await waitUntil(() => Buffer.concat(chunks).length === 4 + 3 + 4 + 258, 'both frames');
  const all = Buffer.concat(chunks);
  t.same([...all.subarray(0, 7)], [0, 0, 0, 3, 0xaa, 0xbb, 0xcc]);
  t.same([...all.subarray(7, 11)], [0, 0, 1, 2]);
});

t.test('connecting to nothing is an error value; a second peer is turned away', async (t) => {
  const none = await StreamCable.open({ path: join(dir, 'nobody.sock') });
  t.equal(none.ok, false);
  if (!none.ok) t.match(none.error, /cannot connect/);
  t.equal(StreamCable.create({ path: '' }).ok, false);

  const path = sockPath();
  const server = await StreamCable.open({ path, mode: 'listen' });
  if (!server.ok) throw new Error(server.error);
  const first = await StreamCable.open({ path });
  const second = await StreamCable.open({ path });
  t.teardown(() => { server.value.close(); if (first.ok) first.value.close(); if (second.ok) second.value.close(); });
  if (!first.ok || !second.ok) throw new Error('connect failed');
  await waitUntil(() => !second.value.connected, 'the second connection to be closed');
  let got = 0;
  server.value.setReceiver(() => got++);
  first.value.send(new Uint8Array(60), 60);
  await waitUntil(() => got === 1, 'the first peer\'s frame');
  t.pass('the first peer still works');
});
