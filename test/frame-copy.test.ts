// copyBytes (wire/frame-memory.ts), the data path's short copy: word by word where source and
// destination are mutually 4-aligned, byte by byte otherwise. Whatever the alignment, length
// and buffers, it must copy exactly the bytes asked for and touch no other.
import t from 'tap';
import {
  copyBytes, copyFromWords, copyToWords, frameBuffer, frameSlots,
} from '../drivers/emu/model/wire/frame-memory.ts';

function filled(buffer: ArrayBuffer | SharedArrayBuffer, seed: number): Uint8Array {
  const u = new Uint8Array(buffer);
  for (let i = 0; i < u.length; i++) u[i] = (i * 31 + seed) & 0xff;
  return u;
}

t.test('every offset pair and length copies exactly its bytes', async (t) => {
  const src = filled(new ArrayBuffer(256), 7);
  let bad = 0;
  let cases = 0;
  for (let srcAt = 0; srcAt < 8; srcAt++) {
    for (let dstAt = 0; dstAt < 8; dstAt++) {
      for (const length of [0, 1, 3, 15, 16, 17, 62, 64, 122, 131]) {
        const dst = filled(new SharedArrayBuffer(256), 99);
        const before = dst.slice();
        copyBytes(src, srcAt, dst, dstAt, length);
        for (let i = 0; i < dst.length; i++) {
          const inside = i >= dstAt && i < dstAt + length;
          if (dst[i] !== (inside ? src[srcAt + i - dstAt] : before[i])) bad++;
        }
        cases++;
      }
    }
  }
  t.equal(bad, 0, `${cases} cases, no byte wrong or touched outside the range`);
});

t.test('views that do not start at their buffer\'s first byte: frame buffers and slots', async (t) => {
  const frame = frameBuffer(200);
  for (let i = 0; i < 200; i++) frame[i] = i;
  const slots = frameSlots(4, 200);
  copyBytes(frame, 0, slots[2]!, 0, 122);
  t.same(Array.from(slots[2]!.subarray(0, 122)), Array.from(frame.subarray(0, 122)));
  t.equal(slots[2]![122], 0, 'nothing past the length');
  t.equal(slots[1]![199], 0, 'the neighbouring slot untouched');
  t.equal(slots[3]![0], 0);
});

t.test('more buffers than the word views it keeps: each copy still lands', async (t) => {
  const src = filled(new ArrayBuffer(64), 1);
  const dsts = Array.from({ length: 20 }, () => new Uint8Array(new ArrayBuffer(64)));
  for (let round = 0; round < 3; round++) for (const d of dsts) copyBytes(src, 0, d, 0, 64);
  t.ok(dsts.every((d) => d.every((b, i) => b === src[i])));
});

t.test('copyFromWords / copyToWords (host memory as a mapping\'s bytes and words): every offset pair and length',
  async (t) => {
    // The host side is a mapping: its bytes start at byte 0 of its buffer, its words are that buffer's.
    const hostBuffer = new SharedArrayBuffer(256);
    const host = filled(hostBuffer, 5);
    const hostWords = new Uint32Array(hostBuffer);
    const hostBefore = host.slice();
    let bad = 0;
    let cases = 0;
    for (let hostAt = 0; hostAt < 8; hostAt++) {
      for (let frameAt = 0; frameAt < 8; frameAt++) {
        for (const length of [0, 1, 3, 15, 16, 17, 62, 64, 122, 131]) {
          // Frames as the port has them: slots past a 64-byte boundary of a shared block, and a lone buffer
          // (both carry their word view); and arrays made elsewhere, whose view is looked up.
          const others = [new Uint8Array(new ArrayBuffer(264), 6, 200), frameSlots(2, 204)[1]!.subarray(1, 201)];
          for (const frame of [frameSlots(3, 200)[1]!, frameBuffer(200), ...others]) {
            frame.fill(0xee);
            copyFromWords(host, hostWords, hostAt, frame, frameAt, length);
            for (let i = 0; i < frame.length; i++) {
              const inside = i >= frameAt && i < frameAt + length;
              if (frame[i] !== (inside ? host[hostAt + i - frameAt] : 0xee)) bad++;
            }
            for (let i = 0; i < frame.length; i++) frame[i] = (i * 7 + 3) & 0xff;
            copyToWords(frame, frameAt, host, hostWords, hostAt, length);
            for (let i = 0; i < host.length; i++) {
              const inside = i >= hostAt && i < hostAt + length;
              if (host[i] !== (inside ? frame[frameAt + i - hostAt] : hostBefore[i])) bad++;
            }
            host.set(hostBefore);
            cases++;
          }
        }
      }
    }
    t.equal(bad, 0, `${cases} cases each way, no byte wrong or touched outside the range`);
  });
