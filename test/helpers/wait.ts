/** Waits (on the event loop) until `done()` is true; rejects after `limitMs` with `what`. */
export async function waitUntil(done: () => boolean, what: string, limitMs = 10000): Promise<void> {
  const start = Date.now();
  while (!done()) {
    if (Date.now() - start > limitMs) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A frame of `length` bytes whose content names its sequence number `seq`. */
export function numberedFrame(seq: number, length: number): Uint8Array {
  const b = new Uint8Array(length);
  for (let i = 0; i < length; i++) b[i] = (seq * 31 + i) & 0xff;
  b[0] = seq >>> 8;
  b[1] = seq & 0xff;
  return b;
}
