import t from 'tap';
import {
  CmdqAddGid, CreqAddGidResp, CmdqDeleteGid, CreqDeleteGidResp, gidWords, gidFromWords, macWords, macFromWords,
  GidVlanTpid,
} from '../firmware-hwrm/roce/commands-gid.ts';
import { wire, seq, base, baseRows, resp, respRows } from './helpers/roce-fixtures.ts';

// Expected bytes are written by hand from roce_hsi.h cmdq_add_gid as qplib_sp.c
// bnxt_qplib_add_sgid fills it: GID byte 15 at offset 16, byte 14 at 17, … byte 0 at offset 31,
// and the MAC as cpu_to_be16 of each 16-bit half: m1, m0, m3, m2, m5, m4 at offsets 32–37.

// ::ffff:192.168.1.2 and 00:11:22:33:44:55 in wire order
const GID = Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 2]);
const MAC = Uint8Array.from([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);

t.test('GID words: the GID byte-reversed, i.e. four big-endian words taken from the end', async (t) => {
  t.strictSame([...gidWords(GID)], [2, 1, 168, 192, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const distinct = Uint8Array.from(seq(0x10, 16));
  const words = gidWords(distinct);
  t.strictSame([...words], seq(0x10, 16).reverse());
  // the header's description: gid[i] = be32 of the i-th little-endian u32 counted from the end
  const cmd = new DataView(words.buffer);
  const src = new DataView(distinct.buffer);
  for (let i = 0; i < 4; i++) t.equal(cmd.getUint32(4 * i, false), src.getUint32(12 - 4 * i, true), `gid[${i}]`);
  t.strictSame([...gidFromWords(words)], [...distinct]);
  t.throws(() => gidWords(new Uint8Array(15)), RangeError);
  t.throws(() => gidFromWords(new Uint8Array(17)), RangeError);
});

t.test('MAC words: three big-endian halfwords of the little-endian u16s', async (t) => {
  const words = macWords(MAC);
  t.strictSame([...words], [0x11, 0x00, 0x33, 0x22, 0x55, 0x44]);
  t.strictSame([...macFromWords(words)], [...MAC]);
  t.throws(() => macWords(new Uint8Array(5)), RangeError);
  t.throws(() => macFromWords(new Uint8Array(8)), RangeError);
});

t.test('ADD_GID: 48 bytes', async (t) => {
  const values = {
    ...base(0x11, 3),
    gid: gidWords(GID),
    src_mac: macWords(MAC),
    vlan_id: 0x064, tpid: GidVlanTpid.TPID_8100, vlan_en: 1,
    ipid: 0x2928,
    stats_ctx_id: 0x1234, stats_ctx_valid: 1,
  };
  const fixture = wire(48, ...baseRows(0x11, 3),
    [16, 0x02, 0x01, 0xa8, 0xc0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    [32, 0x11, 0x00, 0x33, 0x22, 0x55, 0x44],
    [38, 0x64, 0x90], // VLAN 100 | TPID 0x8100 (1 << 12) | VLAN_EN 0x8000
    [40, 0x28, 0x29],
    [42, 0x34, 0x92], // id 0x1234 | valid 0x8000
  );
  t.equal(CmdqAddGid.size, 48);
  t.strictSame([...CmdqAddGid.encode(values)], fixture);
  t.strictSame(CmdqAddGid.decode(Uint8Array.from(fixture)), values);
  t.strictSame([...gidFromWords(CmdqAddGid.decode(Uint8Array.from(fixture)).gid)], [...GID]);
});

t.test('ADD_GID response: hardware GID index; DELETE_GID', async (t) => {
  const r = { ...resp(0x11), xid: 3 };
  const rFixture = wire(16, ...respRows(0x11), [4, 0x03]);
  t.strictSame([...CreqAddGidResp.encode(r)], rFixture);
  t.strictSame(CreqAddGidResp.decode(Uint8Array.from(rFixture)), r);

  const values = { ...base(0x12, 2), gid_index: 0x1110 };
  const fixture = wire(24, ...baseRows(0x12, 2), [16, 0x10, 0x11]);
  t.equal(CmdqDeleteGid.size, 24);
  t.strictSame([...CmdqDeleteGid.encode(values)], fixture);
  t.strictSame(CmdqDeleteGid.decode(Uint8Array.from(fixture)), values);

  const d = { ...resp(0x12), xid: 3 };
  const dFixture = wire(16, ...respRows(0x12), [4, 0x03]);
  t.strictSame([...CreqDeleteGidResp.encode(d)], dFixture);
  t.strictSame(CreqDeleteGidResp.decode(Uint8Array.from(dFixture)), d);
});
