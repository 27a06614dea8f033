import t from 'tap';
import { layout, u8, u16, u32, u64, u64n, bytes } from '../firmware-hwrm/layout.ts';

// A made-up structure; expected bytes are written out by hand, not produced by the codec.
const Sample = layout('sample', 24, {
  op: u8(0),
  seq: u16(2),
  lvl: u16(8, 0, 2),
  depth: u16(8, 2, 14),
  type: u32(12, 28, 4),
  addr: u64(16),
});

t.test('encodes little-endian fields and bit ranges at their offsets', async (t) => {
  const got = Sample.encode({ op: 0x83, seq: 0x1234, lvl: 1, depth: 8192, type: 0xb, addr: 2 ** 40 + 5 });
  const want = Uint8Array.from([
    0x83, 0, 0x34, 0x12, 0, 0, 0, 0,
    0x01, 0x80, 0, 0, 0, 0, 0, 0xb0,
    0x05, 0, 0, 0, 0, 0x01, 0, 0,
  ]);
  t.same([...got], [...want]);
  t.same(Sample.decode(want), { op: 0x83, seq: 0x1234, lvl: 1, depth: 8192, type: 0xb, addr: 2 ** 40 + 5 });
});

t.test('rejects values that do not fit instead of truncating them', async (t) => {
  t.throws(() => Sample.encode({ lvl: 4 }), RangeError);
  t.throws(() => Sample.encode({ seq: 0x10000 }), RangeError);
  t.throws(() => Sample.encode({ addr: 2 ** 53 }), RangeError);
});

t.test('a short input decodes with the missing bytes as zero', async (t) => {
  t.same(Sample.decode(Uint8Array.from([0x11, 0, 0xff])), { op: 0x11, seq: 0xff, lvl: 0, depth: 0, type: 0, addr: 0 });
});

t.test('u64n and bytes round trip', async (t) => {
  const L = layout('b', 16, { big: u64n(0), mac: bytes(8, 6) });
  const enc = L.encode({ big: 0xffffffffffffffffn, mac: Uint8Array.from([1, 2, 3, 4, 5, 6]) });
  t.same([...enc], [255, 255, 255, 255, 255, 255, 255, 255, 1, 2, 3, 4, 5, 6, 0, 0]);
  t.equal(L.decode(enc).big, 0xffffffffffffffffn);
});
