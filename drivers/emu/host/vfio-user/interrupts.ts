/**
 * MSI-X vectors as the vfio-user client wires them: DEVICE_SET_IRQS hands one eventfd per
 * vector, and the device raises a vector by adding 1 to its eventfd (QEMU then delivers the
 * message from its emulated MSI-X table, or sets its own pending bit while the guest masked the
 * vector there). The device itself sends no message while MSI-X is off or bus mastering is
 * disabled (PCI: an MSI is a memory write, which needs Bus Master Enable).
 *
 * SET_IRQS ACTION_MASK / ACTION_UNMASK (linux/vfio.h, offered as VFIO_IRQ_INFO_MASKABLE) mask a
 * vector at the device, as the MSI-X table's mask bit does on a card (PCIe base spec, MSI-X
 * "Per-vector Masking"): a masked vector's message is held, its pending bit set in the PBA
 * (BAR4 + 0x2000), and sent when the vector is unmasked. Disabling MSI-X or a reset drops
 * what was held and unmasks every vector.
 */
import { writeSync } from 'node:fs';
import { closeFd } from './socket-libc.ts';
import { SET_IRQS_FLAGS, type SetIrqs } from './protocol.ts';

const ONE = new Uint8Array([1, 0, 0, 0, 0, 0, 0, 0]);
const DATA_TYPE = 0x7;
const ACTION_TYPE = 0x38;

export class MsixVectors {
  private readonly fds: (number | undefined)[];
  private readonly masked: Uint8Array;
  private readonly pending: Uint8Array;
  /** Raised per vector (tests, traces). */
  readonly raised: Uint32Array;

  /** Vectors not raised because MSI-X was off or bus mastering disabled. */
  suppressed = 0;
  /** Messages held because their vector was masked (each sent, once, at its unmask). */
  held = 0;

  constructor(
    readonly count: number,
    /** True while the device may send an MSI-X message (MSI-X enabled, Bus Master Enable set). */
    private readonly mayInterrupt: () => boolean,
    private readonly closeFdFn: (fd: number) => void = (fd) => { closeFd(fd); },
    /** Told when a vector's pending bit changes (the device's PBA). */
    private readonly onPending: (vector: number, pending: boolean) => void = () => {},
  ) {
    this.fds = new Array<number | undefined>(count).fill(undefined);
    this.masked = new Uint8Array(count);
    this.pending = new Uint8Array(count);
    this.raised = new Uint32Array(count);
  }

  /** Applies a SET_IRQS for the MSI-X index; returns an error text, or undefined. Takes the fds. */
  set(req: SetIrqs, fds: readonly number[]): string | undefined {
    const data = req.flags & DATA_TYPE;
    const action = req.flags & ACTION_TYPE;
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
    // DATA_NONE acts on every vector of the range, DATA_BOOL on those whose byte is non-zero.
    for (let i = 0; i < req.count; i++) {
      if (req.bools !== undefined && req.bools[i] === 0) continue;
      const v = req.start + i;
      if (action === SET_IRQS_FLAGS.ACTION_TRIGGER) this.signal(v); // a software trigger, as the device's
      else if (action === SET_IRQS_FLAGS.ACTION_MASK) this.masked[v] = 1;
      else this.unmask(v);
    }
    return undefined;
  }

  has(vector: number): boolean {
    return this.fds[vector] !== undefined;
  }

  isMasked(vector: number): boolean {
    return this.masked[vector] === 1;
  }

  isPending(vector: number): boolean {
    return this.pending[vector] === 1;
  }

  /**
   * Raises `vector`: true if its message went to the eventfd now; false if it has no eventfd,
   * the device may not interrupt, or the vector is masked (then it is held pending).
   */
  signal(vector: number): boolean {
    const fd = this.fds[vector];
    if (fd === undefined) return false;
    if (!this.mayInterrupt()) { this.suppressed++; return false; }
    if (this.masked[vector] === 1) {
      if (this.pending[vector] === 0) {
        this.pending[vector] = 1;
        this.onPending(vector, true);
      }
      this.held++;
      return false;
    }
    writeSync(fd, ONE);
    this.raised[vector]!++;
    return true;
  }

  /** Unmasks `vector`; a message held while it was masked is sent now (one, however many were held). */
  private unmask(vector: number): void {
    this.masked[vector] = 0;
    if (this.pending[vector] === 0) return;
    this.pending[vector] = 0;
    this.onPending(vector, false);
    this.signal(vector);
  }

  /** Every vector unmasked, nothing held (a function reset; the eventfds stay). */
  resetMasks(): void {
    for (let v = 0; v < this.count; v++) {
      this.masked[v] = 0;
      if (this.pending[v] === 1) {
        this.pending[v] = 0;
        this.onPending(v, false);
      }
    }
  }

  clear(): void {
    for (let v = 0; v < this.count; v++) {
      const fd = this.fds[v];
      if (fd !== undefined) this.closeFdFn(fd);
      this.fds[v] = undefined;
    }
    this.resetMasks();
  }
}
