// The vfio-user server end to end without QEMU: a Node client in QEMU's role connects to the
// socket, negotiates, reads the device's regions and IRQs, hands guest memory over as a memfd
// (SCM_RIGHTS), and drives HWRM_VER_GET through BAR0: the firmware's answer lands in that memfd.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveVfioUser } from '../drivers/emu/host/vfio-user/index.ts';
import { macFromNumber } from '../drivers/emu/model/config.ts';
import { systemLibc, LINUX } from '../drivers/native/libc.ts';
import { makeEventfd, closeFd, readEventfd } from '../drivers/emu/host/vfio-user/socket-libc.ts';
import { TestClient, fields } from './helpers/vfio-user-client.ts';
import { waitUntil } from './helpers/wait.ts';

const CMD = {
  VERSION: 1, DMA_MAP: 2, DMA_UNMAP: 3, GET_INFO: 4, REGION_INFO: 5, IRQ_INFO: 7, SET_IRQS: 8, READ: 9, WRITE: 10,
  RESET: 13, FEATURE: 16,
};
const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const u64 = (b: Uint8Array, at: number) => Number(new DataView(b.buffer, b.byteOffset).getBigUint64(at, true));
const MAC = macFromNumber(0x4242);

async function started(t: Test, tracePath?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'vfu-'));
  const socketPath = join(dir, 's.sock');
  const s = await serveVfioUser({
    socketPath, tracePath,
    config: {
      mac: MAC, ipv4: Uint8Array.from([10, 77, 0, 9]), mtu: 1500, cable: { kind: 'loop' }, pcapPath: undefined, seed: 1,
      mode: 'thread', chip: 'BCM57508', // the ids and chip_num below are a BCM57508's
    },
  });
  if (!s.ok) throw new Error(s.error);
  const client = TestClient.connect(socketPath);
  t.teardown(async () => { client.close(); await s.value.close(); });
  return { server: s.value, client };
}

function version(c: TestClient) {
  const json = new TextEncoder().encode('{"capabilities":{"max_msg_fds":16,"max_data_xfer_size":1048576}}');
  return c.call(CMD.VERSION, new Uint8Array([0, 0, 0, 0, ...json, 0]));
}

/** Guest RAM as QEMU's memory-backend-memfd gives it: a memfd, shared. */
function guestRam(bytes: number) {
  const libc = systemLibc();
  const fd = libc.memfd_create('guest-ram', LINUX.MFD_CLOEXEC);
  libc.ftruncate(fd, bytes);
  const p = libc.mmap(bytes, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED, fd, 0);
  return { fd, ram: new Uint8Array(libc.view(p, bytes)) };
}

t.test('every command before VERSION is refused; VERSION answers 0.0 with NUL-terminated capabilities', async (t) => {
  const { client } = await started(t);
  const early = client.call(CMD.GET_INFO);
  t.equal(early.flags, 0x21, 'reply with ERROR');
  t.equal(early.error, 22);
  const v = version(client);
  t.equal(v.flags, 1);
  t.same([v.body[0], v.body[1], v.body[2], v.body[3]], [0, 0, 0, 0]);
  t.equal(v.body[v.body.length - 1], 0);
  const caps = JSON.parse(new TextDecoder().decode(v.body.subarray(4, v.body.length - 1))).capabilities;
  t.equal(caps.max_msg_fds, 16);
  t.equal(caps.pgsizes, 4096);
  t.notOk('write_multiple' in caps, 'REGION_WRITE_MULTI is not offered');
});

t.test('device, regions and IRQs as a BCM57508 PF presents them', async (t) => {
  const { client } = await started(t);
  version(client);
  t.same([...client.call(CMD.GET_INFO, fields([4, 16], [4, 0], [4, 0], [4, 0])).body], [
    ...fields([4, 16], [4, 3], [4, 9], [4, 5])
  ]);
  const size = (i: number) => {
    const r = client.call(CMD.REGION_INFO, fields([4, 32], [4, 0], [4, i], [4, 0], [8, 0n], [8, 0n])).body;
    return { index: u32(r, 8), flags: u32(r, 4), size: u64(r, 16) };
  };
  t.same(size(0), { index: 0, flags: 3, size: 64 * 1024 });
  t.same(size(1), { index: 1, flags: 0, size: 0 }, 'odd BARs: upper halves of 64-bit BARs');
  t.same(size(2), { index: 2, flags: 3, size: 16 * 1024 * 1024 });
  t.same(size(4), { index: 4, flags: 3, size: 16 * 1024 });
  t.same(size(7), { index: 7, flags: 3, size: 4096 });
  t.equal(client.call(CMD.REGION_INFO, fields([4, 32], [4, 0], [4, 9], [4, 0], [8, 0n], [8, 0n])).error, 22,
    'no region 9');
  const msix = client.call(CMD.IRQ_INFO, fields([4, 16], [4, 0], [4, 2], [4, 0])).body;
  t.equal(u32(msix, 12), 64, '64 MSI-X vectors');
  t.equal(u32(msix, 4) & 1, 1, 'through eventfds');
  t.equal(client.call(CMD.IRQ_INFO, fields([4, 16], [4, 0], [4, 3], [4, 0])).error, 22, 'no ERR IRQ');
  t.equal(client.call(CMD.FEATURE, fields([4, 16], [4, 0])).error, 38, 'unimplemented: ENOSYS');
});

t.test('config space through REGION_READ/WRITE: ids, command register semantics', async (t) => {
  const { client } = await started(t);
  version(client);
  const read = (off: number, n: number) => client.call(CMD.READ, fields([8, BigInt(off)], [4, 7], [4, n])).body;
  const ids = read(0, 4);
  t.equal(u32(ids, 8), 7, 'region echoed');
  t.equal(u32(ids, 12), 4, 'count echoed');
  t.equal(u32(ids, 16), 0x175014e4);
  const w = client.call(CMD.WRITE, new Uint8Array([...fields([8, 4n], [4, 7], [4, 2]), 0x06, 0xff]));
  t.same([...w.body], [...fields([8, 4n], [4, 7], [4, 2])], 'write reply: offset, region, count');
  t.equal(u32(read(4, 4), 16) & 0xffff, 0x0506, 'MEM+MASTER and the writable high bits stuck; the rest did not');
  t.equal(client.call(CMD.READ, fields([8, 4094n], [4, 7], [4, 4])).error, 22, 'an access past the region is refused');
});

t.test('guest memory from a memfd: HWRM_VER_GET written into BAR0 is answered into guest RAM', async (t) => {
  const tracePath = join(mkdtempSync(join(tmpdir(), 'vfu-trace-')), 'hwrm.jsonl');
  const { client, server } = await started(t, tracePath);
  version(client);
  const { fd, ram } = guestRam(1 << 20);
  const GPA = 0x10_0000;
  const map = client.call(
    CMD.DMA_MAP, fields([4, 32], [4, 3], [8, 0n], [8, BigInt(GPA)], [8, BigInt(ram.length)]), [fd],
  );
  t.equal(map.flags, 1, 'mapped');
  // bnxt_en's order: the 128-byte window as posted dword writes, then the trigger at 0x100.
  const resp = 0x2000;
  const req = fields([2, 0x0000], [2, 0xffff], [2, 5], [2, 0xffff], [8, BigInt(GPA + resp)], [1, 1], [1, 10], [1, 3], [
    1, 0,
  ]);
  const window = new Uint8Array(128);
  window.set(req);
  for (let off = 0; off < 128; off += 4)
    client.post(CMD.WRITE, new Uint8Array([
      ...fields([8, BigInt(off)], [4, 0], [4, 4]), ...window.subarray(off, off + 4)
    ]));
  client.post(CMD.WRITE, new Uint8Array([...fields([8, 0x100n], [4, 0], [4, 4]), 1, 0, 0, 0]));
  // A read after posted writes sees their effects (PCIe ordering): the answer is in RAM by now.
  const status = client.call(CMD.READ, fields([8, 0x520n], [4, 0], [4, 4]));
  t.equal(status.error, 0, 'the first reply after the posted writes is this read: none of them was answered');
  const dv = new DataView(ram.buffer, resp);
  t.equal(dv.getUint16(0, true), 0, 'error_code 0');
  t.equal(dv.getUint16(4, true), 5, 'seq_id echoed');
  const len = dv.getUint16(6, true);
  t.equal(ram[resp + len - 1], 1, 'valid byte at resp_len - 1');
  t.equal(dv.getUint16(112, true), 0x1750, 'chip_num BCM57508');
  await waitUntil(() => server.hwrm.length > 0, 'the server thread to report the request');
  t.same(server.hwrm.map((h) => [h.name, h.seqId, h.errorCode]), [['HWRM_VER_GET', 5, 0]]);
  t.equal(client.call(CMD.DMA_UNMAP, fields([4, 24], [4, 0], [8, BigInt(GPA)], [8, BigInt(ram.length)])).flags, 1,
    'unmapped');
  t.equal(client.call(CMD.DMA_MAP, fields([4, 32], [4, 3], [8, 0n], [8, BigInt(GPA)], [8, 4096n])).flags, 1,
    'a range without an fd is recorded');
  t.equal(client.call(CMD.DMA_MAP, fields([4, 32], [4, 3], [8, 0n], [8, BigInt(GPA + 2048)], [8, 4096n])).error, 22,
    'an overlapping range is refused');
  await server.close();
  const trace = readFileSync(tracePath, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.same(trace.map((l) => [l.ch, l.dir, l.name]), [['hwrm', 'req', 'HWRM_VER_GET'], ['hwrm', 'resp', 'HWRM_VER_GET']],
    'the trace: the request, then the answer');
  t.same(
    [trace[0].fields.seq_id, trace[0].fields.hwrm_intf_maj, trace[0].fields.hwrm_intf_min, trace[0].fields.resp_addr],
    [5, 1, 10, `0x${(GPA + resp).toString(16)}`], 'request fields by their header names; 64-bit as hex',
  );
  t.equal(trace[1].fields.chip_num, 0x1750, 'response fields decoded');
  t.equal(typeof trace[0].t, 'number');
});

t.test('SET_IRQS takes eventfds for MSI-X vectors; malformed messages change nothing and get EINVAL', async (t) => {
  const { client } = await started(t);
  version(client);
  const e = makeEventfd();
  t.teardown(() => { closeFd(e); });
  t.equal(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x24], [4, 2], [4, 0], [4, 1]), [e]).flags, 1);
  t.equal(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x24], [4, 2], [4, 64], [4, 1])).error, 22, 'vector 64 of 64');
  t.equal(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x21], [4, 2], [4, 0], [4, 0])).flags, 1,
    'MSI-X off: DATA_NONE, count 0');
  t.equal(client.call(CMD.WRITE, new Uint8Array([...fields([8, 0n], [4, 0], [4, 4]), 1])).error, 22,
    'count and data disagree');
  t.equal(client.call(CMD.DMA_MAP, fields([4, 32])).error, 22, 'short DMA_MAP');
  t.equal(client.call(CMD.RESET).flags, 1, 'DEVICE_RESET');
  t.equal(version(client).flags, 1, 'the connection still works');
});

t.test('SET_IRQS masks an MSI-X vector: its message is held in the PBA and sent at unmask', async (t) => {
  const { client } = await started(t);
  version(client);
  const info = client.call(CMD.IRQ_INFO, fields([4, 16], [4, 0], [4, 2], [4, 0])).body;
  t.equal(u32(info, 4) & 2, 2, 'MSI-X is offered as VFIO_IRQ_INFO_MASKABLE');
  const e = makeEventfd();
  const ok = (m: { flags: number }) => m.flags === 1;
  // Memory and bus master on (command register), MSI-X enabled (message control bit 15, at 0xa0 + 2).
  t.ok(ok(client.call(CMD.WRITE, new Uint8Array([...fields([8, 4n], [4, 7], [4, 2]), 0x06, 0x00]))));
  t.ok(ok(client.call(CMD.WRITE, new Uint8Array([...fields([8, 0xa2n], [4, 7], [4, 2]), 0x3f, 0x80]))));
  t.ok(ok(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x24], [4, 2], [4, 5], [4, 1]), [e])), 'eventfd for vector 5');
  const pba = () => client.call(CMD.READ, fields([8, 0x2000n], [4, 4], [4, 8])).body[16]!;
  t.ok(ok(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x09], [4, 2], [4, 5], [4, 1]))), 'DATA_NONE | ACTION_MASK');
  t.ok(ok(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x21], [4, 2], [4, 5], [4, 1]))), 'a trigger of vector 5');
  t.equal(readEventfd(e), 0, 'masked: the eventfd was not signalled');
  t.equal(pba(), 1 << 5, 'PBA bit 5 is set');
  t.ok(ok(client.call(CMD.WRITE, new Uint8Array([...fields([8, 0x2000n], [4, 4], [4, 1]), 0]))));
  t.equal(pba(), 1 << 5, 'the PBA is read-only');
  t.ok(ok(client.call(CMD.SET_IRQS, fields([4, 20], [4, 0x11], [4, 2], [4, 5], [4, 1]))), 'DATA_NONE | ACTION_UNMASK');
  t.equal(readEventfd(e), 1, 'the held message was sent at unmask');
  t.equal(pba(), 0, 'and its pending bit cleared');
});

/** Writes an HWRM request into BAR0's window as posted dword writes, then the trigger (bnxt_en's order). */
function hwrmRequest(client: TestClient, header: Uint8Array): void {
  const window = new Uint8Array(128);
  window.set(header);
  for (let off = 0; off < 128; off += 4)
    client.post(CMD.WRITE, new Uint8Array([
      ...fields([8, BigInt(off)], [4, 0], [4, 4]), ...window.subarray(off, off + 4),
    ]));
  client.post(CMD.WRITE, new Uint8Array([...fields([8, 0x100n], [4, 0], [4, 4]), 1, 0, 0, 0]));
  client.call(CMD.READ, fields([8, 0x520n], [4, 0], [4, 4])); // a read: the model took the request
}

t.test('DEVICE_RESET and a function level reset reset the function: its registration is gone', async (t) => {
  const { client, server } = await started(t);
  version(client);
  const { fd, ram } = guestRam(1 << 16);
  const GPA = 0x10_0000;
  t.equal(client.call(CMD.DMA_MAP, fields([4, 32], [4, 3], [8, 0n], [8, BigInt(GPA)], [8, BigInt(ram.length)]), [fd])
    .flags, 1);
  // hwrm_func_drv_rgtr_input: req_type 0x1d, cmpl_ring 0xffff, seq_id, target_id 0xffff, resp_addr; no enables.
  const register = (seq: number) => fields([2, 0x1d], [2, 0xffff], [2, seq], [2, 0xffff], [8, BigInt(GPA + 0x1000)]);
  const registered = async () => ((await server.control('hwrm.resources')) as { registered: boolean }).registered;
  hwrmRequest(client, register(1));
  t.equal(new DataView(ram.buffer).getUint16(0x1000, true), 0, 'FUNC_DRV_RGTR answered error_code 0');
  t.equal(await registered(), true, 'the driver is registered');
  t.equal(client.call(CMD.RESET).flags, 1, 'DEVICE_RESET');
  t.equal(await registered(), false, 'DEVICE_RESET dropped the registration (FUNC_RESET\'s effect)');
  hwrmRequest(client, register(2));
  t.equal(await registered(), true, 'registered again');
  // PCIe device control (capability 0xac + 8, in region 7, config space): Initiate FLR is bit 15.
  const devctl = client.call(CMD.READ, fields([8, 0xb4n], [4, 7], [4, 2])).body;
  const value = (devctl[16]! | (devctl[17]! << 8)) | 0x8000;
  t.equal(client.call(CMD.WRITE, new Uint8Array([...fields([8, 0xb4n], [4, 7], [4, 2]), value & 0xff, value >> 8]))
    .flags, 1, 'FLR written (Linux pcie_flr)');
  t.equal(await registered(), false, 'the FLR reset the function too');
  const after = client.call(CMD.READ, fields([8, 0xb4n], [4, 7], [4, 2])).body;
  t.equal(after[17]! & 0x80, 0, 'the FLR bit does not latch');
});

t.test('a strict model that breaks an invariant is reported to the host and ends the server (not a silent ' +
  'death)', async (t) => {
  const events: string[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'vfu-'));
  const socketPath = join(dir, 's.sock');
  const s = await serveVfioUser({
    socketPath, onEvent: (e) => { if (e.kind === 'model-failed') events.push(`${e.part}: ${e.detail}`); },
    config: {
      mac: MAC, ipv4: Uint8Array.from([10, 77, 0, 9]), mtu: 1500, cable: { kind: 'loop' }, pcapPath: undefined, seed: 1,
      mode: 'thread', chip: 'BCM57508', // the ids and chip_num below are a BCM57508's strict: true,
    },
  });
  if (!s.ok) throw new Error(s.error);
  const client = TestClient.connect(socketPath);
  t.teardown(async () => { client.close(); await s.value.close(); });
  version(client);
  t.equal(await s.value.control('engine.internalErrors'), 0, 'controls reach the served model');
  await s.value.control('engine.breakInvariant', "the test's");
  const { reason } = await s.value.ended;
  t.match(reason, /software NIC internal error in engine: .*broken on purpose \(engine\.breakInvariant\): the test's/s,
    'the server ended with the model\'s error');
  t.equal(events.length, 1, 'one model-failed event');
  t.match(events[0], /^engine: /);
  await t.rejects(s.value.control('engine.internalErrors'), /ended/, 'a control after the end is refused');
});
