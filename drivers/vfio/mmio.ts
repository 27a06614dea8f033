/**
 * A BAR mapped into the process: 32-bit register access and the 64-bit doorbell store,
 * on typed arrays made once over the mapping. Nothing here allocates per call.
 *
 * How each access reaches the device (x86_64):
 * - read32 uses Atomics.load: on x86_64 a plain 32-bit load, which the JIT may never cache
 *   or hoist out of a polling loop (Node 20 calls a builtin for it; BAR reads are control
 *   path only).
 * - write32 is a plain Uint32Array store, NOT Atomics.store: a sequentially consistent
 *   store is a locked `xchg` (or mov + mfence) on x86_64, and a locked access must not be
 *   sent to device memory.
 * - doorbell64 is one 64-bit store of a double: the two 32-bit halves are assembled in a
 *   scratch whose Uint32Array and Float64Array alias the same 8 bytes, and the double is
 *   stored through a Float64Array over the BAR (`movsd`: one 8-byte store). No BigInt is
 *   made. Loads and stores of doubles move the raw bits, NaN and denormal patterns
 *   included; test/vfio-mmio.test.ts checks every doorbell-like pattern survives at every
 *   V8 tier, and that TurboFan's x86_64 code for this function has exactly one 8-byte store.
 * Ordering: V8 keeps typed-array stores in program order, and x86 keeps stores in order
 * (TSO), so a doorbell lands after every earlier write to DMA memory, as the Device
 * interface requires. After the device is closed, accesses reach a zero placeholder
 * (mapping.ts), never the device and never unmapped memory.
 */
import type { Mmio } from '../device.ts';
import { invalid } from '../../firmware-hwrm/errors.ts';

// The doorbell scratch: one 8-byte cell seen as two u32 halves (little-endian) and a double.
const doorbellScratchF64 = new Float64Array(1);
const doorbellScratchU32 = new Uint32Array(doorbellScratchF64.buffer);

export class BarMmio implements Mmio {
  readonly size: number;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;

  /** `buffer` is the ArrayBuffer over the mapped BAR. */
  constructor(buffer: ArrayBuffer) {
    this.size = buffer.byteLength;
    this.u32 = new Uint32Array(buffer, 0, this.size >>> 2);
    this.f64 = new Float64Array(buffer, 0, this.size >>> 3);
  }

  read32(offset: number): number {
    if ((offset >>> 0) !== offset || (offset & 3) !== 0 || offset + 4 > this.size) badOffset(offset, 4, this.size);
    return Atomics.load(this.u32, offset >>> 2);
  }

  write32(offset: number, value: number): void {
    if ((offset >>> 0) !== offset || (offset & 3) !== 0 || offset + 4 > this.size) badOffset(offset, 4, this.size);
    this.u32[offset >>> 2] = value;
  }

  doorbell64(offset: number, lo: number, hi: number): void {
    if ((offset >>> 0) !== offset || (offset & 7) !== 0 || offset + 8 > this.size) badOffset(offset, 8, this.size);
    doorbellScratchU32[0] = lo;
    doorbellScratchU32[1] = hi;
    this.f64[offset >>> 3] = doorbellScratchF64[0]!;
  }
}

function badOffset(offset: number, width: number, size: number): never {
  invalid(`BAR access of ${width} bytes at offset ${offset}: not ${width}-byte aligned inside the ${size}-byte BAR`);
}
