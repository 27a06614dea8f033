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
