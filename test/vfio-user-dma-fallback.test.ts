// vfio-user's in-band DMA (QEMU docs/interop/vfio-user.rst: a DMA_MAP without a file descriptor is
// reached with VFIO_USER_DMA_READ / VFIO_USER_DMA_WRITE requests from the server to the client).
// A Node client in QEMU's role maps guest memory WITHOUT an fd and answers the server's requests
// from its own buffer; an HWRM command whose request and response live there goes through the
// model, both ways. A refused, short, mismatched or missing reply is an IOMMU fault: no answer is
// written, nothing crashes, the connection goes on. Messages are built by hand from the spec.
import t, { type Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveVfioUser } from '../drivers/emu/host/vfio-user/index.ts';
import { macFromNumber } from '../drivers/emu/model/config.ts';
import { TestClient, fields, header, type Reply } from './helpers/vfio-user-client.ts';
import { waitUntil } from './helpers/wait.ts';

const CMD = { VERSION: 1, DMA_MAP: 2, READ: 9, WRITE: 10, DMA_READ: 11, DMA_WRITE: 12 };
const GPA = 0x20_0000;
const RAM_BYTES = 0x1_0000;
const u64 = (b: Uint8Array, at: number) => Number(new DataView(b.buffer, b.byteOffset).getBigUint64(at, true));

type Fate = 'answer' | 'refuse' | 'short' | 'wrong-address' | 'silent';

/** The client's guest RAM, and how it answers each DMA request (the `fates` in turn, then 'answer'). */
function guest(client: TestClient, fates: Fate[] = []) {
  const ram = new Uint8Array(RAM_BYTES);
  client.onServerRequest = (r: Reply) => {
    const address = u64(r.body, 0);
    const count = u64(r.body, 8);
    const fate = fates.shift() ?? 'answer';
    if (fate === 'silent') return null;
    const reply = (body: Uint8Array, flags = 1, error = 0) => {
      const m = new Uint8Array(16 + body.length);
      m.set(header(r.id, r.command, body.length, flags), 0);
      new DataView(m.buffer).setUint32(12, error, true);
      m.set(body, 16);
      return m;
    };
    if (fate === 'refuse') return reply(new Uint8Array(0), 0x21, 14); // ERROR, EFAULT
    const at = address - GPA;
    if (r.command === CMD.DMA_WRITE) {
      ram.set(r.body.subarray(16, 16 + count), at);
      return reply(fields([8, BigInt(address)], [8, BigInt(count)]));
    }
    // DMA_READ reply: address, count, then the data (message byte 32 on).
    const data = ram.slice(at, at + count);
    if (fate === 'short') return reply(new Uint8Array([...fields([8, BigInt(address)], [8, BigInt(count)]),
      ...data.subarray(0, count >> 1)]));
    if (fate === 'wrong-address') return reply(new Uint8Array([...fields([8, BigInt(address + 8)], [8, BigInt(count)]),
      ...data]));
    return reply(new Uint8Array([...fields([8, BigInt(address)], [8, BigInt(count)]), ...data]));
  };
  return ram;
}

async function started(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'vfu-dma-'));
  const socketPath = join(dir, 's.sock');
  const s = await serveVfioUser({
    socketPath, dmaReplyLimitMs: 300,
    config: {
      mac: macFromNumber(0x4343), ipv4: Uint8Array.from([10, 77, 0, 9]), mtu: 1500, cable: { kind: 'loop' },
      pcapPath: undefined, seed: 1, mode: 'thread', chip: 'BCM57508',
    },
  });
  if (!s.ok) throw new Error(s.error);
  const client = TestClient.connect(socketPath);
  t.teardown(async () => { client.close(); await s.value.close(); });
  const json = new TextEncoder().encode('{"capabilities":{"max_msg_fds":16,"max_data_xfer_size":1048576}}');
  client.call(CMD.VERSION, new Uint8Array([0, 0, 0, 0, ...json, 0]));
  return { server: s.value, client };
}

/** DMA_MAP of [GPA, GPA+RAM_BYTES) with no fd: flags 1 read, 2 write. */
function mapWithoutFd(client: TestClient, flags = 3, address = GPA, size = RAM_BYTES): Reply {
  return client.call(CMD.DMA_MAP, fields([4, 32], [4, flags], [8, 0n], [8, BigInt(address)], [8, BigInt(size)]));
}

/** The 128-byte window as posted dword writes, then the trigger (bnxt_en's order), then a read of BAR0. */
function trigger(client: TestClient, window: Uint8Array): void {
  const w = new Uint8Array(128);
  w.set(window);
  for (let off = 0; off < 128; off += 4)
    client.post(CMD.WRITE, new Uint8Array([...fields([8, BigInt(off)], [4, 0], [4, 4]), ...w.subarray(off, off + 4)]));
  client.post(CMD.WRITE, new Uint8Array([...fields([8, 0x100n], [4, 0], [4, 4]), 1, 0, 0, 0]));
  t.equal(client.call(CMD.READ, fields([8, 0x520n], [4, 0], [4, 4])).error, 0, 'a BAR0 read is answered meanwhile');
}

/** Serves the server's DMA requests until it reported `n` HWRM requests (its report follows the answer). */
async function served(client: TestClient, server: { hwrm: readonly unknown[] }, n: number): Promise<void> {
  await waitUntil(() => { client.serveRequests(); return server.hwrm.length >= n; }, `HWRM request ${n} reported`);
}

/** hwrm_ver_get_input (bnxt_hsi.h): req_type 0, cmpl_ring 0xffff, seq_id, target_id 0xffff, resp_addr, 1.10.3. */
const verGet = (seq: number, respAddr: number) => fields(
  [2, 0x0000], [2, 0xffff], [2, seq], [2, 0xffff], [8, BigInt(respAddr)], [1, 1], [1, 10], [1, 3], [1, 0],
);
/** hwrm_short_input (bnxt_hsi.h): req_type, signature 0x4321 (SHORT_CMD), target_id, size, req_addr. */
const shortInput = (reqType: number, size: number, reqAddr: number) => fields(
  [2, reqType], [2, 0x4321], [2, 0xffff], [2, size], [8, BigInt(reqAddr)],
);

t.test('an HWRM answer into memory mapped without an fd arrives through DMA_WRITE, byte for byte', async (t) => {
  const { client, server } = await started(t);
  const ram = guest(client);
  t.equal(mapWithoutFd(client).flags, 1, 'DMA_MAP without an fd accepted');
  const resp = 0x2000;
  trigger(client, verGet(5, GPA + resp));
  await served(client, server, 1);
  const dv = new DataView(ram.buffer, resp);
  t.equal(dv.getUint16(0, true), 0, 'error_code 0');
  t.equal(dv.getUint16(2, true), 0, 'req_type HWRM_VER_GET');
  t.equal(dv.getUint16(4, true), 5, 'seq_id echoed');
  const len = dv.getUint16(6, true);
  t.equal(len, 176, 'resp_len: hwrm_ver_get_output is 176 bytes');
  t.equal(ram[resp + len - 1], 1, 'valid byte at resp_len - 1');
  t.equal(dv.getUint16(112, true), 0x1750, 'chip_num BCM57508');
  const writes = client.serverRequests.filter((r) => r.command === CMD.DMA_WRITE);
  t.ok(writes.length >= 2, 'the answer, then its valid byte, as DMA_WRITE requests');
  t.same(writes.map((r) => u64(r.body, 0) >= GPA + resp && u64(r.body, 0) < GPA + resp + len), writes.map(() => true),
    'each inside the response buffer');
  t.same(server.hwrm.map((h) => [h.name, h.seqId, h.errorCode]), [['HWRM_VER_GET', 5, 0]]);
});

t.test('a short command: the request is read with DMA_READ, the answer written with DMA_WRITE', async (t) => {
  const { client, server } = await started(t);
  const ram = guest(client);
  mapWithoutFd(client);
  const req = 0x1000;
  const resp = 0x3000;
  ram.set(verGet(9, GPA + resp), req); // the request itself lives in guest memory
  trigger(client, shortInput(0x0000, 24, GPA + req));
  await served(client, server, 1);
  const reads = client.serverRequests.filter((r) => r.command === CMD.DMA_READ);
  t.ok(reads.some((r) => u64(r.body, 0) === GPA + req && u64(r.body, 8) === 24), 'DMA_READ of the 24-byte request');
  const dv = new DataView(ram.buffer, resp);
  t.equal(dv.getUint16(4, true), 9, 'the seq_id that only the DMA_READ delivered is echoed');
  t.equal(ram[resp + 175], 1, 'valid byte');
  t.equal(dv.getUint16(112, true), 0x1750, 'chip_num');
});

for (const fate of ['refuse', 'short', 'wrong-address', 'silent'] as const) {
  t.test(`a DMA_READ reply that is ${fate === 'silent' ? 'missing' : fate} is a fault: no answer, the ` +
    'connection goes on', async (t) => {
    const { client, server } = await started(t);
    const ram = guest(client, [fate]);
    mapWithoutFd(client);
    const resp = 0x3000;
    ram.set(verGet(9, GPA + resp), 0x1000);
    trigger(client, shortInput(0x0000, 24, GPA + 0x1000));
    // The firmware cannot read the request, so it answers nothing (a short command's IOMMU fault).
    await waitUntil(() => { client.serveRequests(); return client.serverRequests.length >= 1; }, 'the DMA_READ');
    t.equal(client.serverRequests[0]!.command, CMD.DMA_READ);
    // A second command (the window this time) still goes through: the server lives on.
    trigger(client, verGet(10, GPA + 0x4000));
    await served(client, server, 2);
    t.same(ram.subarray(resp, resp + 176), new Uint8Array(176), 'nothing was answered to the unread request');
    t.equal(new DataView(ram.buffer, 0x4000).getUint16(4, true), 10, 'the next command is answered');
    await server.close();
    const { stats } = await server.ended;
    t.ok((stats?.iommuFaults ?? 0) >= 1, `counted as an IOMMU fault (${stats?.iommuFaults})`);
  });
}

t.test('a refused DMA_WRITE is a fault; the answer is not reported as given', async (t) => {
  const { client, server } = await started(t);
  guest(client, ['refuse', 'refuse', 'refuse']);
  mapWithoutFd(client);
  trigger(client, verGet(5, GPA + 0x2000));
  await served(client, server, 1);
  t.same(server.hwrm.map((h) => [h.name, h.errorCode]), [['HWRM_VER_GET', -1]], 'no answer reached the guest');
});

t.test('bounds and permissions as for mapped memory: nothing is asked outside what DMA_MAP allows', async (t) => {
  const { client, server } = await started(t);
  const ram = guest(client);
  t.equal(mapWithoutFd(client, 1).flags, 1, 'a read-only range');
  trigger(client, verGet(5, GPA + 0x2000));
  t.equal(mapWithoutFd(client, 3, GPA + RAM_BYTES, 0x1000).flags, 1, 'a writable range right after it');
  trigger(client, verGet(6, GPA + RAM_BYTES - 64)); // the 176-byte answer would cross into the next range
  await waitUntil(() => { client.serveRequests(); return server.hwrm.length >= 2; }, 'both requests reported');
  t.same(client.serverRequests.filter((r) => r.command === CMD.DMA_WRITE), [],
    'no DMA_WRITE into a read-only range or across a range\'s end');
  t.same(ram, new Uint8Array(RAM_BYTES), 'the guest\'s memory is untouched');
  await server.close();
  const { stats } = await server.ended;
  t.ok((stats?.iommuFaults ?? 0) >= 2, `both answers were IOMMU faults (${stats?.iommuFaults})`);
});
