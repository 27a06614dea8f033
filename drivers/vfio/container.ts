/**
 * The VFIO container and group steps of the kernel's Documentation/driver-api/vfio.rst (legacy type1 path), the
 * IOMMU's usable address space (§5.5) and the DMA map/unmap calls. Each function does one
 * step and says, on failure, what the user can do about it.
 */
import { join } from 'node:path';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { IovaAllocator, IOVA_BASE, IOVA_LIMIT, type IovaRange } from '../iova-allocator.ts';
import {
  VFIO_CONST,
  VFIO_IOCTL,
  vfio_group_status,
  vfio_iommu_type1_dma_map,
  vfio_iommu_type1_dma_unmap,
  vfio_iommu_type1_info,
  vfio_iommu_type1_info_cap_iova_range,
  vfio_iova_range,
  VFIO_FLEXIBLE_ARRAYS,
} from './abi.ts';
import { LINUX, errnoName, type Libc, type Pointer } from '../native/libc.ts';
import type { IommuMapper } from './dma.ts';
import { iommuGroupMembers } from './sysfs.ts';
import { findCapability } from './info-capabilities.ts';

export { IOVA_BASE, IOVA_LIMIT };
/** Where DMA buffers go unless VfioOptions.iovaWindow says otherwise. */
export const DEFAULT_IOVA_WINDOW: IovaRange = { start: IOVA_BASE, end: IOVA_LIMIT };
/** Used when the kernel reports no IOVA ranges: 39 bits is the smallest VT-d address width. */
const IOVA_DEFAULT_END = 2 ** 39;
/** Room for VFIO_IOMMU_GET_INFO's capability chain; the kernel tells us if it needs more. */
const IOMMU_INFO_BYTES = 4096;

const RDWR = LINUX.O_RDWR | LINUX.O_CLOEXEC;

/** Steps 1–3: the container, its API version and type1v2 support. Returns the container fd. */
export function openContainer(libc: Libc, devRoot: string): Result<number> {
  const path = join(devRoot, 'vfio', 'vfio');
  const fd = libc.open(path, RDWR);
  if (fd < 0) {
    const why = errnoName(fd);
    if (why === 'ENOENT') return err(`${path} does not exist: load VFIO with 'modprobe vfio-pci'`);
    if (why === 'EACCES' || why === 'EPERM') return err(`permission denied opening ${path}: run as root`);
    return err(`cannot open ${path}: ${why}`);
  }
  const version = libc.ioctlValue(fd, VFIO_IOCTL.VFIO_GET_API_VERSION, 0);
  const type1v2 = version === VFIO_CONST.VFIO_API_VERSION
    ? libc.ioctlValue(fd, VFIO_IOCTL.VFIO_CHECK_EXTENSION, VFIO_CONST.VFIO_TYPE1v2_IOMMU) : 0;
  if (version !== VFIO_CONST.VFIO_API_VERSION || type1v2 <= 0) {
    libc.close(fd);
    if (version !== VFIO_CONST.VFIO_API_VERSION)
      return err(
        `${path} speaks VFIO API version ${version}, not ${VFIO_CONST.VFIO_API_VERSION}: this kernel's VFIO is not ` +
          `supported`,
      );
    return err(
      `the kernel's VFIO offers no type1v2 IOMMU: enable the IOMMU (intel_iommu=on on Intel; AMD-Vi/VT-d in the ` +
        `firmware setup) and load vfio_iommu_type1`,
    );
  }
  return ok(fd);
}

/** Steps 4–5: the group node, which must be viable (every member bound to vfio-pci or unbound). */
export function openGroup(
  libc: Libc, devRoot: string, sysfsRoot: string, group: string, address: string,
): Result<number> {
  const path = join(devRoot, 'vfio', group);
  const fd = libc.open(path, RDWR);
  if (fd < 0) {
    const why = errnoName(fd);
    if (why === 'ENOENT')
      return err(`${path} does not exist: bind ${address} to vfio-pci with scripts/bind-vfio.sh ${address}`);
    if (why === 'EACCES' || why === 'EPERM') {
      return err(
        `permission denied opening ${path}: run as root, or 'sudo chown $USER ${path}' and raise the locked-memory ` +
          `limit (ulimit -l)`,
      );
    }
    if (why === 'EBUSY') return err(`${path} is already open: another process owns IOMMU group ${group}`);
    return err(`cannot open ${path}: ${why}`);
  }
  const status = vfio_group_status.encode({ argsz: vfio_group_status.size });
  const r = libc.ioctl(fd, VFIO_IOCTL.VFIO_GROUP_GET_STATUS, status);
  const flags = r < 0 ? 0 : vfio_group_status.decode(status).flags;
  if (r < 0 || (flags & VFIO_CONST.VFIO_GROUP_FLAGS_VIABLE) === 0) {
    libc.close(fd);
    if (r < 0) return err(`VFIO_GROUP_GET_STATUS on ${path} failed: ${errnoName(r)}`);
    const others = iommuGroupMembers(sysfsRoot, group).filter((m) => m.driver !== null && m.driver !== 'vfio-pci');
    const blame = others.map((m) => `${m.address} is bound to ${m.driver}`).join(', ');
    return err(
      `IOMMU group ${group} is not viable${blame ? `: ${blame}` : ''}; every device in the group must be bound to ` +
        `vfio-pci ` +
        `(scripts/bind-vfio.sh ${others.map((m) => m.address).join(' ') || '<address>'}) or have no driver`,
    );
  }
  return ok(fd);
}

/** Step 6: puts the group into the container. */
export function setContainer(libc: Libc, groupFd: number, containerFd: number): Result<void> {
  const arg = new Uint8Array(4);
  new DataView(arg.buffer).setInt32(0, containerFd, true);
  const r = libc.ioctl(groupFd, VFIO_IOCTL.VFIO_GROUP_SET_CONTAINER, arg);
  return r < 0 ? err(`VFIO_GROUP_SET_CONTAINER failed: ${errnoName(r)}`) : ok();
}

export function unsetContainer(libc: Libc, groupFd: number): string | undefined {
  const r = libc.ioctlValue(groupFd, VFIO_IOCTL.VFIO_GROUP_UNSET_CONTAINER, 0);
  return r < 0 ? errnoName(r) : undefined;
}

/** Step 7: the type1v2 IOMMU model; must precede GET_DEVICE_FD and MAP_DMA. */
export function setIommu(libc: Libc, containerFd: number): Result<void> {
  const r = libc.ioctlValue(containerFd, VFIO_IOCTL.VFIO_SET_IOMMU, VFIO_CONST.VFIO_TYPE1v2_IOMMU);
  if (r >= 0) return ok();
  // vfio_iommu_type1_attach_group (Linux drivers/vfio/vfio_iommu_type1.c) refuses, with EPERM and
  // "No interrupt remapping support" in the kernel log, a group whose IOMMU cannot isolate MSIs.
  if (errnoName(r) === 'EPERM') {
    return err(
      `VFIO_SET_IOMMU (type1v2) failed: EPERM: the IOMMU gives no interrupt remapping (see 'dmesg | tail': "No ` +
        `interrupt remapping support"): enable it (Intel: intel_iommu=on with interrupt remapping on in the ` +
        `firmware; a QEMU guest: -device intel-iommu,intremap=on with -machine kernel-irqchip=split), or, if ` +
        `you trust the device not to forge interrupts, load vfio_iommu_type1 with allow_unsafe_interrupts=1`,
    );
  }
  return err(`VFIO_SET_IOMMU (type1v2) failed: ${errnoName(r)}`);
}

/** Step 10: the device fd, from the group, by PCI address. */
export function getDeviceFd(libc: Libc, groupFd: number, address: string): Result<number> {
  const name = new TextEncoder().encode(`${address}\0`);
  const fd = libc.ioctl(groupFd, VFIO_IOCTL.VFIO_GROUP_GET_DEVICE_FD, name);
  return fd < 0 ? err(`VFIO_GROUP_GET_DEVICE_FD for ${address} failed: ${errnoName(fd)} (is it bound to vfio-pci?)`)
    : ok(fd);
}

export interface IommuSpace {
  /** Minimum IOMMU page size (lowest bit of iova_pgsizes). */
  readonly granuleBytes: number;
  /** Usable IOVA windows, already clipped to the requested window (default [IOVA_BASE, IOVA_LIMIT)). */
  readonly ranges: readonly IovaRange[];
}

/**
 * Step 8: page sizes and usable IOVA windows (the IOVA_RANGE capability) of the container,
 * clipped to `window` (a device with a narrow DMA mask needs IOVAs below its limit).
 */
export function readIommuSpace(
  libc: Libc, containerFd: number, window: IovaRange = DEFAULT_IOVA_WINDOW,
): Result<IommuSpace> {
  let info = new Uint8Array(IOMMU_INFO_BYTES);
  for (let attempt = 0; ; attempt++) {
    vfio_iommu_type1_info.encode({ argsz: info.length }, info);
    const r = libc.ioctl(containerFd, VFIO_IOCTL.VFIO_IOMMU_GET_INFO, info);
    if (r < 0) return err(`VFIO_IOMMU_GET_INFO failed: ${errnoName(r)}`);
    const wanted = vfio_iommu_type1_info.decode(info).argsz;
    if (wanted <= info.length || attempt > 0) break;
    info = new Uint8Array(wanted); // the capability chain did not fit: ask again with room for it
  }
  const head = vfio_iommu_type1_info.decode(info);
  let granuleBytes = 4096;
  if (head.flags & VFIO_CONST.VFIO_IOMMU_INFO_PGSIZES) {
    const sizes = head.iova_pgsizes;
    if (sizes === 0n) return err('the IOMMU reports no page sizes');
    granuleBytes = Math.max(4096, Number(sizes & -sizes)); // lowest set bit
  }
  if (granuleBytes > 4096) return err(`the IOMMU's smallest page is ${granuleBytes} bytes; only 4096 is supported`);

  // Without the capability, assume the smallest VT-d address width.
  const assumed = Math.min(window.end, IOVA_DEFAULT_END);
  let windows: IovaRange[] = window.start < assumed ? [{ start: window.start, end: assumed }] : [];
  if (head.flags & VFIO_CONST.VFIO_IOMMU_INFO_CAPS) {
    const cap = findCapability(
      info, head.cap_offset, vfio_iommu_type1_info.size, VFIO_CONST.VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE,
    );
    if (cap !== undefined) windows = iovaWindows(info, cap, window);
  }
  if (windows.length === 0) return err(`the IOMMU offers no IOVA range between ${window.start} and ${window.end}`);
  return ok({ granuleBytes, ranges: windows });
}

/** The IOVA allocator for a container's address space. */
export function iovaAllocatorFor(space: IommuSpace): IovaAllocator {
  return new IovaAllocator({ ranges: space.ranges, granuleBytes: space.granuleBytes });
}

function iovaWindows(info: Uint8Array, cap: number, window: IovaRange): IovaRange[] {
  const count = vfio_iommu_type1_info_cap_iova_range.decode(info, cap).nr_iovas;
  const first = cap + VFIO_FLEXIBLE_ARRAYS['vfio_iommu_type1_info_cap_iova_range.iova_ranges'];
  const windows: IovaRange[] = [];
  for (let i = 0; i < count && first + (i + 1) * vfio_iova_range.size <= info.length; i++) {
    const range = vfio_iova_range.decode(info, first + i * vfio_iova_range.size);
    const start = range.start < BigInt(window.start) ? window.start : range.start;
    const end = range.end + 1n > BigInt(window.end) ? window.end : range.end + 1n; // `end` is inclusive
    if (BigInt(start) < BigInt(end)) windows.push({ start: Number(start), end: Number(end) });
  }
  return windows;
}

/** VFIO_IOMMU_MAP_DMA / UNMAP_DMA on a container, read and write for the device. */
export function vfioIommuMapper(libc: Libc, containerFd: number): IommuMapper {
  return {
    map(vaddr: Pointer, iova: number, lengthBytes: number): Result<void> {
      const flags = VFIO_CONST.VFIO_DMA_MAP_FLAG_READ | VFIO_CONST.VFIO_DMA_MAP_FLAG_WRITE;
      const arg = vfio_iommu_type1_dma_map.encode({
        argsz: vfio_iommu_type1_dma_map.size, flags, vaddr: Number(vaddr), iova, size: lengthBytes,
      });
      const r = libc.ioctl(containerFd, VFIO_IOCTL.VFIO_IOMMU_MAP_DMA, arg);
      if (r >= 0) return ok();
      const why = errnoName(r);
      if (why === 'ENOMEM')
        return err(
          `VFIO_IOMMU_MAP_DMA: ENOMEM (pinned memory counts against RLIMIT_MEMLOCK: raise 'ulimit -l' or run as root)`,
        );
      if (why === 'ENOSPC')
        return err(`VFIO_IOMMU_MAP_DMA: ENOSPC (too many DMA mappings: vfio_iommu_type1 dma_entry_limit)`);
      return err(`VFIO_IOMMU_MAP_DMA: ${why}`);
    },
    unmap(iova: number, lengthBytes: number): Result<void> {
      const arg =
        vfio_iommu_type1_dma_unmap.encode({ argsz: vfio_iommu_type1_dma_unmap.size, iova, size: lengthBytes });
      const r = libc.ioctl(containerFd, VFIO_IOCTL.VFIO_IOMMU_UNMAP_DMA, arg);
      if (r < 0) return err(`VFIO_IOMMU_UNMAP_DMA: ${errnoName(r)}`);
      const unmapped = vfio_iommu_type1_dma_unmap.decode(arg).size;
      return unmapped === lengthBytes ? ok() : err(`VFIO_IOMMU_UNMAP_DMA unmapped ${unmapped} of ${lengthBytes} bytes`);
    },
  };
}
