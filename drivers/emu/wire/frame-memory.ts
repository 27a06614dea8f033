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
  return new Uint8Array(new ArrayBuffer(bytes + 64), FRAME_ALIGN, bytes);
}

/** `count` frame slots of `bytes` in one block of memory, each FRAME_ALIGN past a 64-byte boundary. */
export function frameSlots(count: number, bytes: number): Uint8Array[] {
  const stride = slotStride(bytes);
  const memory = new ArrayBuffer(count * stride);
  const slots: Uint8Array[] = [];
  for (let i = 0; i < count; i++) slots.push(new Uint8Array(memory, i * stride + FRAME_ALIGN, bytes));
  return slots;
}

/**
 * Copies `length` bytes from src[srcAt...] to dst[dstAt...], a 32-bit word at a time where the
 * two are mutually 4-aligned (frame buffers and slots are, FRAME_ALIGN past a 64-byte boundary,
 * and so are payloads and host memory when the payload is aligned), byte by byte otherwise;
 * allocation-free (the word views of the last two buffers seen are kept). For the short copies
 * of the data path (ACKs and 64-byte SENDs into a cable's slot, their payloads to and from host
 * memory): a byte loop is four times the iterations, and a subarray for TypedArray.set would be
 * an allocation per copy.
 */
export function copyBytes(src: Uint8Array, srcAt: number, dst: Uint8Array, dstAt: number, length: number): void {
  const s = src.byteOffset + srcAt;
  const d = dst.byteOffset + dstAt;
  let i = 0;
  if (((s ^ d) & 3) === 0 && length >= 16) {
    const sw = wordsOf(src.buffer);
    const dw = wordsOf(dst.buffer);
    for (; ((s + i) & 3) !== 0; i++) dst[dstAt + i] = src[srcAt + i]!;
    const words = (length - i) >>> 2;
    const si = (s + i) >>> 2;
    const di = (d + i) >>> 2;
    for (let k = 0; k < words; k++) dw[di + k] = sw[si + k]!;
    i += words * 4;
  }
  for (; i < length; i++) dst[dstAt + i] = src[srcAt + i]!;
}

/**
 * Word views of the buffers copyBytes met last: a frame buffer, a cable's slots, host memory.
 * Looked up by identity among WORD_VIEWS entries, the oldest replaced (an allocation only then).
 */
const WORD_VIEWS = 8;
const viewBuffers: (ArrayBufferLike | undefined)[] = new Array<ArrayBufferLike | undefined>(WORD_VIEWS).fill(undefined);
const viewWords: Uint32Array[] = Array.from({ length: WORD_VIEWS }, () => new Uint32Array(0));
let nextView = 0;

function wordsOf(buffer: ArrayBufferLike): Uint32Array {
  for (let i = 0; i < WORD_VIEWS; i++) if (viewBuffers[i] === buffer) return viewWords[i]!;
  const i = nextView;
  nextView = (nextView + 1) % WORD_VIEWS;
  viewBuffers[i] = buffer;
  return (viewWords[i] = new Uint32Array(buffer, 0, buffer.byteLength >>> 2));
}
