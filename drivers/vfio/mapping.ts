/**
 * One mmap'ed range and the ArrayBuffer over it (made once; typed views are made from it).
 *
 * Why "retire" instead of a bare munmap: koffi's external ArrayBuffers cannot be detached,
 * so a typed array somebody kept after free()/close() would still point at the range, and
 * touching unmapped memory kills the process with SIGSEGV. Retiring replaces the range in
 * one step (MAP_FIXED) with private anonymous zero pages: the BAR or DMA pages are released
 * at once, a stale view reads zeros and its writes go nowhere, and the placeholder itself is
 * munmapped once the ArrayBuffer is garbage collected (no view can exist by then).
 */
import { LINUX, type Libc, type Pointer } from '../native/libc.ts';

interface Placeholder {
  readonly libc: Libc;
  readonly address: Pointer;
  readonly lengthBytes: number;
}

const placeholders = new FinalizationRegistry<Placeholder>((p) => {
  p.libc.munmap(p.address, p.lengthBytes);
});

export class Mapping {
  readonly buffer: ArrayBuffer;
  private retired = false;

  constructor(
    private readonly libc: Libc,
    readonly address: Pointer,
    readonly lengthBytes: number,
  ) {
    this.buffer = libc.view(address, lengthBytes);
  }

  /** Releases what was mapped; returns -errno if it could not be replaced or unmapped. */
  retire(): number {
    if (this.retired) return 0;
    this.retired = true;
    const { libc, address, lengthBytes } = this;
    const placeholder = libc.mmap(
      lengthBytes,
      LINUX.PROT_READ | LINUX.PROT_WRITE,
      LINUX.MAP_PRIVATE | LINUX.MAP_ANONYMOUS | LINUX.MAP_FIXED | LINUX.MAP_NORESERVE,
      -1,
      0,
      address,
    );
    if (placeholder === address) {
      placeholders.register(this.buffer, { libc, address, lengthBytes });
      return 0;
    }
    // Could not put a placeholder there: unmap anyway (a stale view would then fault).
    return libc.munmap(address, lengthBytes);
  }
}
