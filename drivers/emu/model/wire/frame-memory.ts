/**
 * Memory for frames, placed so that a SEND's or WRITE's payload starts on an 8-byte boundary.
 * A RoCEv2 frame's payload follows 14 (Ethernet) + 20 (IPv4) + 8 (UDP) + 12 (BTH) = 54 bytes,
 * or 70 with a RETH: both 6 mod 8. V8 copies between a SharedArrayBuffer (host memory) and
 * other memory word by word only when source and destination are mutually 8-aligned, and byte
 * by byte when not: a 4 KiB payload copy took 1.2 us at offset 54 and 0.19 us aligned. Frames
 * therefore start 2 bytes past an 8-byte (here 64-byte) boundary, in every buffer a frame is
 * built in or copied through (the port's transmit buffer, the loop and pair slots, the socket
 * receive slots), so the alignment a frame was built with survives each copy. Payloads after
 * an AETH or ImmDt (58 bytes, READ responses and SEND with immediate) stay 2 mod 8.
 */

/** Where a frame starts past a 64-byte boundary: SEND and WRITE payloads land 8-byte aligned. */
export const FRAME_ALIGN = 2;

/** Bytes between the starts of two frame slots: a whole number of cache lines past the frame. */
export function slotStride(slotBytes: number): number {
  return Math.ceil((slotBytes + FRAME_ALIGN) / 64) * 64;
}

/** One frame buffer of `bytes`, starting FRAME_ALIGN bytes past a 64-byte boundary of its memory. */
export function frameBuffer(bytes: number): Uint8Array {
  const memory = new ArrayBuffer(bytes + 64);
  return withWordView(new Uint8Array(memory, FRAME_ALIGN, bytes), wholeWords(memory), FRAME_ALIGN);
}

/** `count` frame slots of `bytes` in one block of memory, each FRAME_ALIGN past a 64-byte boundary. */
export function frameSlots(count: number, bytes: number): Uint8Array[] {
  const stride = slotStride(bytes);
  const memory = new ArrayBuffer(count * stride);
  const words = wholeWords(memory);
  const slots: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * stride + FRAME_ALIGN;
    slots.push(withWordView(new Uint8Array(memory, at, bytes), words, at));
  }
  return slots;
}

/** A frame buffer made here: it carries its word view (set once, when it is made). */
interface FrameBytes extends Uint8Array {
  wordView?: WordView;
}

/**
 * The word view `a` carries if frameBuffer or frameSlots made it (every frame buffer of the port and
 * the cables): `words` over its whole memory, and `base`, the byte of that memory `a` starts at (so
 * byte i of `a` is in word (base + i) >>> 2). Undefined for an array made elsewhere. One property load.
 */
export function ownWordView(a: Uint8Array): WordView | undefined {
  return (a as FrameBytes).wordView;
}

function wholeWords(memory: ArrayBuffer): Uint32Array {
  return new Uint32Array(memory, 0, memory.byteLength >>> 2);
}

/**
 * Gives frame buffer `a` (at byte `base` of the memory `words` covers) its word view as a property
 * of its own: every frame buffer the model copies through is made by frameBuffer or frameSlots, so
 * a copy finds the view with one property load, where the weak map lookup (wordViewOf) missed as a
 * loop's slots rotate (8-10 ns a copy, two copies a message). Every frame buffer has the property,
 * so the sites that read frames still see one shape of array.
 */
function withWordView(a: Uint8Array, words: Uint32Array, base: number): Uint8Array {
  const f = a as FrameBytes;
  f.wordView = { words, base };
  return f;
}

/**
 * Copies `length` bytes from src[srcAt...] to dst[dstAt...], a 32-bit word at a time where the
 * two are mutually 4-aligned (frame buffers and slots are, FRAME_ALIGN past a 64-byte boundary,
 * and so are payloads and host memory when the payload is aligned), byte by byte otherwise;
 * allocation-free (each array's word view is made once, wordViewOf). For the short copies
 * of the data path (ACKs and 64-byte SENDs into a cable's slot, their payloads to and from host
 * memory): a byte loop is four times the iterations, and a subarray for TypedArray.set would be
 * an allocation per copy.
 */
export function copyBytes(src: Uint8Array, srcAt: number, dst: Uint8Array, dstAt: number, length: number): void {
  let i = 0;
  if (length >= 16) {
    const sv = srcViewOf(src);
    const dv = dstViewOf(dst);
    const s = sv.base + srcAt;
    const d = dv.base + dstAt;
    if (((s ^ d) & 3) === 0) {
      for (; ((s + i) & 3) !== 0; i++) dst[dstAt + i] = src[srcAt + i]!;
      const words = (length - i) >>> 2;
      const sw = sv.words;
      const dw = dv.words;
      const si = (s + i) >>> 2;
      const di = (d + i) >>> 2;
      for (let k = 0; k < words; k++) dw[di + k] = sw[si + k]!;
      i += words * 4;
    }
  }
  for (; i < length; i++) dst[dstAt + i] = src[srcAt + i]!;
}

/**
 * copyBytes from host memory: `src` is a mapping's bytes, which start at byte 0 of their buffer,
 * and `srcWords` that buffer's 32-bit words (Iommu.viewWords), so only `dst` (a frame) needs
 * its word view looked up.
 */
export function copyFromWords(
  src: Uint8Array, srcWords: Uint32Array, srcAt: number, dst: Uint8Array, dstAt: number, length: number,
): void {
  let i = 0;
  if (length >= 16) {
    const fv = frameViewOf(dst);
    const d = fv.base + dstAt;
    if (((srcAt ^ d) & 3) === 0) {
      for (; ((srcAt + i) & 3) !== 0; i++) dst[dstAt + i] = src[srcAt + i]!;
      const words = (length - i) >>> 2;
      const dw = fv.words;
      const si = (srcAt + i) >>> 2;
      const di = (d + i) >>> 2;
      for (let k = 0; k < words; k++) dw[di + k] = srcWords[si + k]!;
      i += words * 4;
    }
  }
  for (; i < length; i++) dst[dstAt + i] = src[srcAt + i]!;
}

/** copyBytes into host memory: `dst` a mapping's bytes from byte 0 of their buffer, `dstWords` its words. */
export function copyToWords(
  src: Uint8Array, srcAt: number, dst: Uint8Array, dstWords: Uint32Array, dstAt: number, length: number,
): void {
  let i = 0;
  if (length >= 16) {
    const fv = frameViewOf(src);
    const s = fv.base + srcAt;
    if (((s ^ dstAt) & 3) === 0) {
      for (; ((dstAt + i) & 3) !== 0; i++) dst[dstAt + i] = src[srcAt + i]!;
      const words = (length - i) >>> 2;
      const sw = fv.words;
      const si = (s + i) >>> 2;
      const di = (dstAt + i) >>> 2;
      for (let k = 0; k < words; k++) dstWords[di + k] = sw[si + k]!;
      i += words * 4;
    }
  }
  for (; i < length; i++) dst[dstAt + i] = src[srcAt + i]!;
}

/** An array's buffer as 32-bit words, and where the array starts in it. */
export interface WordView {
  readonly words: Uint32Array;
  readonly base: number;
}

/**
 * The word view of each array a copy met that carries none of its own (withWordView: the IOMMU's
 * views of host memory, arrays made elsewhere), made once: reading an array's `buffer` and `byteOffset` cost more
 * than the whole 64-byte copy (30-40 ns each, measured), a weak map lookup a few ns.
 */
const wordViews = new WeakMap<Uint8Array, WordView>();

/**
 * The array each side of a copy met last, and its view: one side is host memory, the same
 * mapping copy after copy, and is answered without the map.
 */
let lastSrc: Uint8Array | undefined;
let lastSrcView: WordView | undefined;
let lastDst: Uint8Array | undefined;
let lastDstView: WordView | undefined;

function srcViewOf(a: Uint8Array): WordView {
  const own = (a as FrameBytes).wordView;
  if (own !== undefined) return own;
  if (a !== lastSrc) {
    lastSrcView = wordViewOf(a);
    lastSrc = a;
  }
  return lastSrcView!;
}

function dstViewOf(a: Uint8Array): WordView {
  const own = (a as FrameBytes).wordView;
  if (own !== undefined) return own;
  if (a !== lastDst) {
    lastDstView = wordViewOf(a);
    lastDst = a;
  }
  return lastDstView!;
}

/**
 * The frame copyFromWords or copyToWords met last, and its view: a frame a SEND's payload was
 * scattered from is often the buffer the port builds its next frame in (loop-cable.ts sendBuffer
 * hands back the buffer delivered last).
 */
let lastFrame: Uint8Array | undefined;
let lastFrameView: WordView | undefined;

function frameViewOf(a: Uint8Array): WordView {
  const own = (a as FrameBytes).wordView;
  if (own !== undefined) return own;
  if (a !== lastFrame) {
    lastFrameView = wordViewOf(a);
    lastFrame = a;
  }
  return lastFrameView!;
}

function wordViewOf(a: Uint8Array): WordView {
  let v = wordViews.get(a);
  if (v === undefined) {
    const buffer = a.buffer;
    v = { words: new Uint32Array(buffer, 0, buffer.byteLength >>> 2), base: a.byteOffset };
    wordViews.set(a, v);
  }
  return v;
}
