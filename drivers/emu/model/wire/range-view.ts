/**
 * array.subarray(from, end), kept per array and remade only when the range moves. The CRC
 * calls of the ICRC (node:zlib's and libdeflate's, the host's) read a range through a view
 * that is exactly it or starts where it does, and a frame buffer's ranges sit at the same place
 * frame after frame (the covered bytes after the masked headers), so the data path makes no view
 * per frame.
 */
interface RangeView { from: number; end: number; view: Uint8Array }
const rangeViews = new WeakMap<Uint8Array, RangeView>();

export function rangeView(array: Uint8Array, from: number, end: number): Uint8Array {
  let r = rangeViews.get(array);
  if (r === undefined) {
    r = { from, end, view: array.subarray(from, end) };
    rangeViews.set(array, r);
  } else if (r.from !== from || r.end !== end) {
    r.from = from;
    r.end = end;
    r.view = array.subarray(from, end);
  }
  return r.view;
}
