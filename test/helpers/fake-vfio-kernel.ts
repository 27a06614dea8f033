/**
 * A fake kernel behind the `Libc` interface: /dev/vfio/vfio, one group node, one device
 * with BAR0, BAR2 and config space, type1 DMA mapping, memfds and mmap. It checks each
 * request the way the kernel would (argsz, order of steps, fds of the right kind) and
 * answers with -errno when one is wrong, and it logs what happened in order.
 *
 * It is written from include/uapi/linux/vfio.h and Documentation/driver-api/vfio.rst with its own literal numbers and
 * offsets, not from drivers/vfio/abi.ts, so it checks the backend against the document.
 */
import type { Libc, Pointer } from '../../drivers/native/libc.ts';

const EINVAL = 22;
const ENOENT = 2;
const EBADF = 9;
const EBUSY = 16;
const ENOMEM = 12;
const EPERM = 1;
const EACCES = 13;

type FdKind = 'container' | 'group' | 'device' | 'memfd';

export interface FakeFaults {
  apiVersion?: number;
  noType1v2?: boolean;
  notViable?: boolean;
  groupBusy?: boolean;
  deviceFdRefused?: boolean;
  bar2NotMappable?: boolean;
  mapDmaRefused?: boolean;
  /** open() of /dev/vfio/vfio, or of the group node, refused for want of permission (EACCES). */
  containerDenied?: boolean;
  groupDenied?: boolean;
  /**
   * VFIO_SET_IOMMU refused with EPERM, as vfio_iommu_type1_attach_group refuses a group whose
   * IOMMU cannot isolate MSIs (no interrupt remapping) unless allow_unsafe_interrupts is set.
   */
  noInterruptRemapping?: boolean;
}

const REGION = {
  0: { name: 'BAR0', size: 0x10000 },
  2: { name: 'BAR2', size: 0x20000 },
  7: { name: 'config', size: 0x1000 },
} as const;
const REGION_SHIFT = 2 ** 40; // vfio-pci puts region i at file offset i << 40 (§5.3)

export class FakeVfioKernel implements Libc {
  readonly log: string[] = [];
  readonly faults: FakeFaults = {};
  /** Config space of the device; command register at 0x04 starts as INTx-disable only. */
  readonly config = new Uint8Array(256);
  readonly bars = new Map<string, Uint8Array>();
  /** Live DMA mappings by IOVA. */
  readonly dma = new Map<number, { vaddr: number; size: number }>();
  private readonly fds = new Map<number, { kind: FdKind; size?: number }>();
  private readonly memory = new Map<Pointer, ArrayBuffer>();
  /** What each mapping is ("BAR0", "BAR2", "memfd@<address>"), for the log. */
  private readonly addressOf = new Map<string, Pointer>();
  private nextFd = 10;
  private nextAddress = 0x7f00_0000_0000n;
  private groupContainer: number | undefined;
  private iommuSet = false;
  private deviceOpen = false;

  constructor(
    private readonly devRoot: string,
    private readonly group: string,
    private readonly address: string,
  ) {
    this.config[4] = 0x00;
    this.config[5] = 0x04; // PCI_COMMAND_INTX_DISABLE (bit 10): must survive our writes
  }

  open(path: string, _flags: number): number {
    let kind: FdKind;
    if (path === `${this.devRoot}/vfio/vfio`) {
      if (this.faults.containerDenied) return -EACCES;
      kind = 'container';
    } else if (path === `${this.devRoot}/vfio/${this.group}`) {
      if (this.faults.groupDenied) return -EACCES;
      if (this.faults.groupBusy || [...this.fds.values()].some((f) => f.kind === 'group')) return -EBUSY;
      kind = 'group';
    } else return -ENOENT;
    const fd = this.nextFd++;
    this.fds.set(fd, { kind });
    this.log.push(`open ${kind}`);
    return fd;
  }

  close(fd: number): number {
    const f = this.fds.get(fd);
    if (!f) return -EBADF;
    this.fds.delete(fd);
    if (f.kind === 'group') this.groupContainer = undefined;
    if (f.kind === 'device') this.deviceOpen = false;
    if (f.kind !== 'memfd') this.log.push(`close ${f.kind}`);
    return 0;
  }

  ioctlValue(fd: number, request: number, value: number): number {
    const f = this.fds.get(fd);
    if (!f) return -EBADF;
    switch (request) {
      case 0x3b64: // VFIO_GET_API_VERSION
        return f.kind === 'container' ? (this.faults.apiVersion ?? 0) : -EINVAL;
      case 0x3b65: // VFIO_CHECK_EXTENSION
        return f.kind === 'container' && value === 3 && !this.faults.noType1v2 ? 1 : 0;
      case 0x3b66: // VFIO_SET_IOMMU
        if (f.kind !== 'container' || value !== 3 || this.groupContainer !== fd)
          return this.bad('VFIO_SET_IOMMU before a group joined, or not type1v2');
        if (this.faults.noInterruptRemapping) return -EPERM;
        this.iommuSet = true;
        this.log.push('set iommu type1v2');
        return 0;
      case 0x3b69: // VFIO_GROUP_UNSET_CONTAINER
        if (f.kind !== 'group' || this.groupContainer === undefined)
          return this.bad('UNSET_CONTAINER without a container');
        this.groupContainer = undefined;
        this.log.push('unset container');
        return 0;
      default:
        return this.bad(`ioctlValue 0x${request.toString(16)} on ${f.kind}`);
    }
  }

  ioctl(fd: number, request: number, arg: Uint8Array): number {
    const f = this.fds.get(fd);
    if (!f) return -EBADF;
    const v = new DataView(arg.buffer, arg.byteOffset, arg.byteLength);
    const argsz = arg.byteLength >= 4 ? v.getUint32(0, true) : 0;
    switch (request) {
      case 0x3b67: // VFIO_GROUP_GET_STATUS: {argsz @0, flags @4}; 0x1 VIABLE, 0x2 CONTAINER_SET
        if (f.kind !== 'group' || argsz < 8) return this.bad('GROUP_GET_STATUS');
        v.setUint32(4, (this.faults.notViable ? 0 : 1) | (this.groupContainer !== undefined ? 2 : 0), true);
        return 0;
      case 0x3b68: { // VFIO_GROUP_SET_CONTAINER: pointer to an int32 container fd
        const container = v.getInt32(0, true);
        if (f.kind !== 'group' || this.fds.get(container)?.kind !== 'container')
          return this.bad('SET_CONTAINER with a non-container fd');
        this.groupContainer = container;
        this.log.push('set container');
        return 0;
      }
      case 0x3b6a: { // VFIO_GROUP_GET_DEVICE_FD: NUL-terminated address
        const name = new TextDecoder().decode(arg.subarray(0, arg.indexOf(0)));
        if (f.kind !== 'group' || !this.iommuSet) return this.bad('GET_DEVICE_FD before SET_IOMMU');
        if (name !== this.address || this.faults.deviceFdRefused) return -EPERM;
        const dev = this.nextFd++;
        this.fds.set(dev, { kind: 'device' });
        this.deviceOpen = true;
        this.log.push('open device');
        return dev;
      }
      case 0x3b6c: { // VFIO_DEVICE_GET_REGION_INFO: argsz @0, flags @4, index @8, size @16, offset @24
        if (f.kind !== 'device' || argsz < 32) return this.bad('GET_REGION_INFO');
        const index = v.getUint32(8, true);
        const region = REGION[index as keyof typeof REGION];
        if (!region) return -EINVAL;
        const mappable = index !== 7 && !(index === 2 && this.faults.bar2NotMappable);
        v.setUint32(4, 0x1 | 0x2 | (mappable ? 0x4 : 0), true);
        setU64(v, 16, region.size);
        setU64(v, 24, index * REGION_SHIFT);
        return 0;
      }
      case 0x3b70: { // VFIO_IOMMU_GET_INFO with an IOVA_RANGE capability of two windows
        if (f.kind !== 'container' || !this.iommuSet) return this.bad('IOMMU_GET_INFO before SET_IOMMU');
        const need = 24 + 16 + 2 * 16;
        v.setUint32(0, need, true);
        if (argsz < need) return 0; // the kernel reports the size it needs
        v.setUint32(4, 0x1 | 0x2, true); // PGSIZES | CAPS
        setU64(v, 8, 0x40201000); // 4 KiB | 2 MiB | 1 GiB
        v.setUint32(16, 24, true); // cap_offset
        v.setUint16(24, 1, true); // id IOVA_RANGE
        v.setUint16(26, 1, true); // version
        v.setUint32(28, 0, true); // next: end of chain
        v.setUint32(32, 2, true); // nr_iovas
        setU64(v, 40, 0); // [0, 0xfedfffff]
        setU64(v, 48, 0xfedf_ffff);
        setU64(v, 56, 0xfef0_0000); // [0xfef00000, 2^48 - 1]
        setU64(v, 64, 2 ** 48 - 1);
        return 0;
      }
      case 0x3b71: { // VFIO_IOMMU_MAP_DMA: argsz, flags (1 READ | 2 WRITE), vaddr @8, iova @16, size @24
        if (f.kind !== 'container' || argsz !== 32 || v.getUint32(4, true) !== 3) return this.bad('MAP_DMA arguments');
        if (this.faults.mapDmaRefused) return -ENOMEM;
        const iova = getU64(v, 16);
        const size = getU64(v, 24);
        for (const [other, m] of this.dma)
          if (iova < other + m.size && other < iova + size) return this.bad('MAP_DMA overlapping an existing mapping');
        if (iova % 4096 !== 0 || size % 4096 !== 0) return this.bad('MAP_DMA not page aligned');
        this.dma.set(iova, { vaddr: getU64(v, 8), size });
        this.log.push(`map dma 0x${iova.toString(16)} +${size}`);
        return 0;
      }
      case 0x3b72: { // VFIO_IOMMU_UNMAP_DMA: argsz, flags, iova @8, size @16 (bytes unmapped on return)
        const iova = getU64(v, 8);
        const size = getU64(v, 16);
        if (f.kind !== 'container' || argsz !== 24 || this.dma.get(iova)?.size !== size)
          return this.bad('UNMAP_DMA of something not mapped');
        this.dma.delete(iova);
        this.log.push(`unmap dma 0x${iova.toString(16)} +${size}`);
        return 0;
      }
      default:
        return this.bad(`ioctl 0x${request.toString(16)} on ${f.kind}`);
    }
  }

  mmap(lengthBytes: number, _prot: number, flags: number, fd: number, offset: number, at?: Pointer): Pointer {
    if (at !== undefined) {
      // MAP_FIXED | MAP_ANONYMOUS placeholder over something we mapped (a retired mapping).
      const name = this.nameOf(at);
      if (!this.memory.has(at) || (flags & 0x30) !== 0x30) return BigInt(this.bad('MAP_FIXED over unknown memory'));
      this.memory.set(at, new ArrayBuffer(lengthBytes));
      this.bars.forEach((bytes, bar) => {
        if (this.addressOf.get(bar) === at) this.bars.delete(bar);
      });
      this.log.push(`release ${name}`);
      return at;
    }
    const f = this.fds.get(fd);
    if (!f) return BigInt(-EBADF);
    const address = this.nextAddress;
    this.nextAddress += 0x1_0000_0000n;
    if (f.kind === 'device') {
      const index = offset / REGION_SHIFT;
      const region = REGION[index as keyof typeof REGION];
      if (!region || index === 7 || lengthBytes !== region.size || (index === 2 && this.faults.bar2NotMappable))
        return BigInt(-EINVAL);
      const buffer = new ArrayBuffer(lengthBytes);
      this.memory.set(address, buffer);
      this.bars.set(region.name, new Uint8Array(buffer));
      this.addressOf.set(region.name, address);
      this.log.push(`map ${region.name}`);
      return address;
    }
    if (f.kind === 'memfd') {
      if (lengthBytes !== f.size || (flags & 0x1) === 0) return BigInt(-EINVAL);
      this.memory.set(address, new ArrayBuffer(lengthBytes));
      this.addressOf.set(`memfd@${address}`, address);
      return address;
    }
    return BigInt(-EINVAL);
  }

  private nameOf(address: Pointer): string {
    for (const [name, a] of this.addressOf) if (a === address) return name.startsWith('memfd@') ? 'dma memory' : name;
    return 'unknown';
  }

  munmap(address: Pointer, _lengthBytes: number): number {
    if (!this.memory.delete(address)) return -EINVAL;
    return 0;
  }

  memfd_create(_name: string, flags: number): number {
    if (flags & 0x4) return -EINVAL; // no hugetlb in this fake
    const fd = this.nextFd++;
    this.fds.set(fd, { kind: 'memfd', size: 0 });
    return fd;
  }

  ftruncate(fd: number, lengthBytes: number): number {
    const f = this.fds.get(fd);
    if (f?.kind !== 'memfd') return -EINVAL;
    f.size = lengthBytes;
    return 0;
  }

  pread(fd: number, into: Uint8Array, offset: number): number {
    const at = this.configOffset(fd, offset, into.length);
    if (at < 0) return at;
    into.set(this.config.subarray(at, at + into.length));
    return into.length;
  }

  pwrite(fd: number, from: Uint8Array, offset: number): number {
    const at = this.configOffset(fd, offset, from.length);
    if (at < 0) return at;
    this.config.set(from, at);
    if (at === 4)
      this.log.push(`command 0x${(this.config[4]! | (this.config[5]! << 8)).toString(16).padStart(4, '0')}`);
    return from.length;
  }

  view(address: Pointer, lengthBytes: number): ArrayBuffer {
    const buffer = this.memory.get(address);
    if (!buffer || buffer.byteLength !== lengthBytes)
      throw new Error(`fake kernel: no ${lengthBytes}-byte mapping at 0x${address.toString(16)}`);
    return buffer;
  }

  /** Fds still open (the test checks none leak). */
  openFds(): FdKind[] {
    return [...this.fds.values()].map((f) => f.kind);
  }

  get commandRegister(): number {
    return this.config[4]! | (this.config[5]! << 8);
  }

  get deviceIsOpen(): boolean {
    return this.deviceOpen;
  }

  private configOffset(fd: number, offset: number, length: number): number {
    if (this.fds.get(fd)?.kind !== 'device') return -EBADF;
    const at = offset - 7 * REGION_SHIFT;
    return at >= 0 && at + length <= this.config.length ? at : -EINVAL;
  }

  private bad(what: string): number {
    this.log.push(`EINVAL ${what}`);
    return -EINVAL;
  }
}

function setU64(v: DataView, at: number, value: number): void {
  v.setUint32(at, value % 2 ** 32, true);
  v.setUint32(at + 4, Math.floor(value / 2 ** 32), true);
}

function getU64(v: DataView, at: number): number {
  return v.getUint32(at, true) + v.getUint32(at + 4, true) * 2 ** 32;
}
