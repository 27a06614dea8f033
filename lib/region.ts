/**
 * Regions: DMA memory registered with the NIC, so queue pairs can send from, receive into and
 * serve reads of it. `bytes` is the memory itself. This module is the spec-shaped API and its
 * argument checks; the registration is lib/bnxt/memory-region.ts.
 */
import { ok, err, type Result } from './result.ts';
import { invalid } from './errors.ts';
import { Nic, nicInternals } from './nic.ts';
import { BnxtRegion } from './bnxt/memory-region.ts';

/** Largest message and region: 2^31 bytes (the spec's bound). */
export const MAX_REGION_BYTES = 2 ** 31;

/**
 * Every Region this module made. An object with Region's prototype and a claimed length is not
 * one: the posting calls check membership here, not the prototype.
 */
const made = new WeakSet<object>();

/** True only for a Region that Region.alloc made. */
export function isRegion(x: unknown): x is Region {
  return typeof x === 'object' && x !== null && made.has(x);
}

export class Region {
  readonly bytes: Uint8Array;
  // Initialized here (and set in the constructor) so V8 keeps them as Smi fields: see the
  // hot-path state of lib/bnxt/queue-pair.ts BnxtQp. Qp.send and Qp.receive read them per post.
  readonly length: number = 0;
  /** lkey = rkey. */
  readonly key: number = 0;
  /** The region's address as the NIC sees it (its IOVA), as two 32-bit halves for the data path. */
  readonly vaLo: number = 0;
  readonly vaHi: number = 0;

  private constructor(readonly nic: Nic, private readonly driverRegion: BnxtRegion) {
    const { buffer, length, key } = driverRegion;
    this.bytes = buffer.bytes.subarray(0, length);
    this.length = length;
    this.key = key;
    this.vaLo = buffer.iova % 4294967296;
    this.vaHi = Math.floor(buffer.iova / 4294967296);
    made.add(this);
    // The fields the data path posts from (key, address, length) cannot be changed afterwards.
    Object.freeze(this);
  }

  get deregistered(): boolean {
    return !this.driverRegion.registered;
  }

  /**
   * Allocates `length` bytes of DMA memory and registers them. Throws InvalidArgument for a
   * length that is not an integer in 1..2^31; no memory or a refusal is a Result error.
   */
  static alloc(nic: Nic, length: number): Result<Region> {
    if (!(nic instanceof Nic)) invalid('Region.alloc: not a NIC');
    if (!Number.isInteger(length) || length < 1 || length > MAX_REGION_BYTES)
      invalid(`Region.alloc: length ${length} is not an integer in 1..2^31`);
    const { func, roce, children } = nicInternals(nic);
    const registered = BnxtRegion.register(func, roce, length);
    if (!registered.ok) return err(`Region.alloc: ${registered.error}`);
    const region = new Region(nic, registered.value);
    children.add(region);
    return ok(region);
  }

  /** DEALLOCATE_KEY (the region's key), then frees the memory. A refusal leaves the region registered. */
  deregister(): Result<void> {
    if (this.deregistered) return err('Region.deregister: the region is already deregistered');
    if (this.nic.closed) return err('Region.deregister: its NIC is closed');
    const { children } = nicInternals(this.nic);
    try {
      const r = this.driverRegion.deregister();
      return r.ok ? r : err(`Region.deregister: ${r.error}`);
    } finally {
      if (this.deregistered) children.delete(this);
    }
  }

  /** @internal Called by Nic.close. */
  closeWithNic(): void {
    if (!this.deregistered) this.deregister();
  }
}
