/**
 * MSI-X vectors as the vfio-user client wires them: DEVICE_SET_IRQS hands one eventfd per
 * vector, and the device raises a vector by adding 1 to its eventfd (QEMU then delivers the
 * message from its emulated MSI-X table, or sets the pending bit while the vector is masked).
 * The device itself sends no message while MSI-X is off or bus mastering is disabled
 * (PCI: an MSI is a memory write, which needs Bus Master Enable).
 */
import { writeSync } from 'node:fs';
import { closeFd } from './socket-libc.ts';
import { SET_IRQS_FLAGS, type SetIrqs } from './protocol.ts';

const ONE = new Uint8Array([1, 0, 0, 0, 0, 0, 0, 0]);

export class MsixVectors {
  private readonly fds: (number | undefined)[];
  /** Raised per vector (tests, traces). */
  readonly raised: Uint32Array;

  /** Vectors not raised because MSI-X was off or bus mastering disabled. */
  suppressed = 0;

  constructor(
    readonly count: number,
    /** True while the device may send an MSI-X message (MSI-X enabled, Bus Master Enable set). */
    private readonly mayInterrupt: () => boolean,
    private readonly closeFdFn: (fd: number) => void = (fd) => { closeFd(fd); },
  ) {
    this.fds = new Array<number | undefined>(count).fill(undefined);
    this.raised = new Uint32Array(count);
  }

  /** Applies a SET_IRQS for the MSI-X index; returns an error text, or undefined. Takes the fds. */
  set(req: SetIrqs, fds: readonly number[]): string | undefined {
    const data = req.flags & 0x7;
    const action = req.flags & 0x38;
    if (data === SET_IRQS_FLAGS.DATA_NONE && action === SET_IRQS_FLAGS.ACTION_TRIGGER && req.count === 0) {
      this.clear(); // MSI-X disabled: every vector loses its eventfd
      return undefined;
    }
    if (req.start + req.count > this.count)
      return `SET_IRQS vectors ${req.start}..${req.start + req.count - 1}: the device has ${this.count}`;
    if (data === SET_IRQS_FLAGS.DATA_EVENTFD) {
      if (action !== SET_IRQS_FLAGS.ACTION_TRIGGER) return 'SET_IRQS: eventfds only for ACTION_TRIGGER';
      if (fds.length > req.count) return `SET_IRQS: ${fds.length} fds for ${req.count} vectors`;
      // QEMU sends count vectors and fds for those that have one: -1 never travels, so a
      // shorter fd list fills the first vectors (libvfio-user does the same).
      for (let i = 0; i < req.count; i++) {
        const v = req.start + i;
        const old = this.fds[v];
        if (old !== undefined) this.closeFdFn(old);
        this.fds[v] = fds[i];
      }
      return undefined;
    }
    if (data === SET_IRQS_FLAGS.DATA_NONE && action === SET_IRQS_FLAGS.ACTION_TRIGGER) {
      for (let i = 0; i < req.count; i++) this.signal(req.start + i); // a software trigger
      return undefined;
    }
    // Masking is QEMU's (it emulates the MSI-X table); accepted and nothing to do here.
    return undefined;
  }

  has(vector: number): boolean {
    return this.fds[vector] !== undefined;
  }

  /** Raises `vector` if it has an eventfd and the device may interrupt; false if not. */
  signal(vector: number): boolean {
    const fd = this.fds[vector];
    if (fd === undefined) return false;
    if (!this.mayInterrupt()) { this.suppressed++; return false; }
    writeSync(fd, ONE);
    this.raised[vector]!++;
    return true;
  }

  clear(): void {
    for (let v = 0; v < this.count; v++) {
      const fd = this.fds[v];
      if (fd !== undefined) this.closeFdFn(fd);
      this.fds[v] = undefined;
    }
  }
}
