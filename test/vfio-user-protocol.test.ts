// The vfio-user codec against messages built by hand from the layouts of QEMU's
// docs/interop/vfio-user.rst (every offset below is the spec's, not the encoder's).
import t from 'tap';
import * as P from '../drivers/emu/host/vfio-user/protocol.ts';
import { fields } from './helpers/vfio-user-client.ts';

t.test('header: u16 id, u16 command, u32 size with the header, u32 flags, u32 error', async (t) => {
  const h = P.decodeHeader(Uint8Array.from([0x34, 0x12, 0x0a, 0x00, 0x24, 0, 0, 0, 0x21, 0, 0, 0, 22, 0, 0, 0]));
  t.same(h, { id: 0x1234, command: P.CMD.REGION_WRITE, size: 36, flags: 0x21, error: 22 });
  const m = P.encodeMessage({ id: 7, command: P.CMD.DEVICE_RESET, flags: P.FLAG.REPLY, error: 0 }, Uint8Array.from([
    1, 2,
  ]));
  t.same([...m], [7, 0, 13, 0, 18, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 2]);
});

t.test('VERSION: major, minor, NUL-terminated JSON; malformed JSON is refused with a reason', async (t) => {
  const json = '{"capabilities":{"max_msg_fds":8,"pgsizes":4096}}';
  const body = new Uint8Array([0, 0, 0, 0, ...new TextEncoder().encode(json), 0]);
  const v = P.decodeVersion(body);
  t.same(v, { major: 0, minor: 0, capabilities: { max_msg_fds: 8, pgsizes: 4096 } });
  t.match(P.decodeVersion(new Uint8Array([0, 0, 0, 0, 0x7b])), /not NUL-terminated/);
  t.match(P.decodeVersion(new Uint8Array([0, 0, 0, 0, 0x7b, 0])), /does not parse/);
  t.match(P.decodeVersion(new Uint8Array([0, 0])), /needs 4/);
  const reply = P.encodeVersion(0, 0, { max_msg_fds: 16 });
  t.equal(reply[reply.length - 1], 0, 'the reply ends with the NUL the client checks for');
  t.same(JSON.parse(new TextDecoder().decode(reply.subarray(4, reply.length - 1))), {
    capabilities: { max_msg_fds: 16 },
  });
});

t.test('DMA_MAP and DMA_UNMAP bodies', async (t) => {
  const map = fields([4, 32], [4, 3], [8, 0x1000n], [8, 0x1_0000_0000n], [8, 0x20_0000n]);
  t.same(P.decodeDmaMap(map), { argsz: 32, flags: 3, offset: 0x1000, address: 0x1_0000_0000, size: 0x20_0000 });
  t.match(P.decodeDmaMap(map.subarray(0, 31)), /needs 32/);
  const unmap = fields([4, 24], [4, 0], [8, 0xc0000n], [8, 0x20000n]);
  t.same(P.decodeDmaUnmap(unmap), { argsz: 24, flags: 0, address: 0xc0000, size: 0x20000 });
  t.same([...P.encodeDmaUnmap({ argsz: 24, flags: 0, address: 0xc0000, size: 0x20000 })], [...unmap]);
});

t.test('info replies: device, region, IRQ', async (t) => {
  t.same([...P.encodeDeviceInfo(3, 9, 5)], [...fields([4, 16], [4, 3], [4, 9], [4, 5])]);
  t.same([...P.encodeRegionInfo({ index: 2, flags: 3, size: 0x100_0000, offset: 0 })], [
    ...fields([4, 32], [4, 3], [4, 2], [4, 0], [8, 0x100_0000n], [8, 0n])
  ]);
  t.same(P.decodeRegionInfoRequest(fields([4, 32], [4, 0], [4, 7], [4, 0], [8, 0n], [8, 0n])), { argsz: 32, index: 7 });
  t.same([...P.encodeIrqInfo(2, 9, 64)], [...fields([4, 16], [4, 9], [4, 2], [4, 64])]);
});

t.test('SET_IRQS: exactly one data type and one action', async (t) => {
  t.same(P.decodeSetIrqs(fields([4, 20], [4, 0x24], [4, 2], [4, 0], [4, 1])), {
    argsz: 20, flags: 0x24, index: 2, start: 0, count: 1, bools: undefined,
  });
  const b = P.decodeSetIrqs(new Uint8Array([...fields([4, 22], [4, 0x22], [4, 2], [4, 4], [4, 2]), 1, 0]));
  t.same(typeof b !== 'string' && [...b.bools!], [1, 0]);
  t.match(P.decodeSetIrqs(fields([4, 20], [4, 0x25], [4, 2], [4, 0], [4, 1])), /more than one data type/);
  t.match(P.decodeSetIrqs(fields([4, 20], [4, 0x04], [4, 2], [4, 0], [4, 1])), /no action/);
  t.match(P.decodeSetIrqs(fields([4, 20], [4, 0x22], [4, 2], [4, 0], [4, 3])), /DATA_BOOL for 3 vectors/);
});

t.test('REGION_READ/WRITE: u64 offset, u32 region, u32 count, data', async (t) => {
  const w = new Uint8Array([...fields([8, 0x100n], [4, 0], [4, 4]), 1, 0, 0, 0]);
  const a = P.decodeRegionAccess(w, true);
  t.same(typeof a !== 'string' && { ...a, data: [...a.data] }, {
    offset: 0x100, region: 0, count: 4, data: [1, 0, 0, 0],
  });
  t.match(P.decodeRegionAccess(w.subarray(0, 19), true), /count 4 but 3 data bytes/);
  t.same([...P.encodeRegionAccess(4, 7, 2, Uint8Array.from([6, 0]))], [...fields([8, 4n], [4, 7], [4, 2]), 6, 0]);
});

t.test('DMA_READ/WRITE: u64 address, u64 count; data at message byte 32', async (t) => {
  t.same([...P.encodeDmaAccess(0xfffe0, 2, Uint8Array.from([9, 8]))], [...fields([8, 0xfffe0n], [8, 2n]), 9, 8]);
  const r = P.decodeDmaReadReply(new Uint8Array([...fields([8, 0xfffe0n], [8, 2n]), 9, 8]));
  t.same(typeof r !== 'string' && [...r.data], [9, 8]);
  t.match(P.decodeDmaReadReply(new Uint8Array([...fields([8, 0n], [8, 3n]), 9])), /count 3 but 1/);
});
