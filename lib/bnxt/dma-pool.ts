/**
 * The driver's bookkeeping of DMA memory. Memory that a firmware which stopped answering
 * may still name (a response buffer, a ring it was told about) is quarantined: never freed
 * nor reused until the NIC is closed, so a late DMA write cannot land in reused memory.
 */
import type { DmaBuffer, DmaMemory } from '../../drivers/device.ts';
import type { Result } from '../result.ts';

export class DmaPool {
  private readonly quarantined = new Set<DmaBuffer>();

  constructor(private readonly memory: DmaMemory) {}

  alloc(length: number): Result<DmaBuffer> {
    return this.memory.alloc(length);
  }

  free(buffer: DmaBuffer): void {
    if (this.quarantined.has(buffer)) return; // held until close
    this.memory.free(buffer);
  }

  /** The firmware may still write `buffers`: keep them until close. */
  quarantine(...buffers: DmaBuffer[]): void {
    for (const b of buffers) this.quarantined.add(b);
  }

  get quarantinedBytes(): number {
    let n = 0;
    for (const b of this.quarantined) n += b.length;
    return n;
  }

  get quarantinedBuffers(): number {
    return this.quarantined.size;
  }

  get allocatedBytes(): number {
    return this.memory.allocatedBytes;
  }

  /** At close, after the device can no longer DMA: release the quarantine too. */
  releaseQuarantine(): void {
    for (const b of this.quarantined) this.memory.free(b);
    this.quarantined.clear();
  }
}
