/**
 * The device fd's regions (VFIO_DEVICE_GET_REGION_INFO, include/uapi/linux/vfio.h; the sequence of
 * Documentation/driver-api/vfio.rst): where each BAR and the config space sit in the fd, mapping a BAR, and the PCI
 * command register.
 */
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { PCI_CONFIG, VFIO_CONST, VFIO_IOCTL, vfio_region_info } from './abi.ts';
import { findCapability } from './info-capabilities.ts';
import { LINUX, errnoName, type Libc } from '../native/libc.ts';
import { Mapping } from './mapping.ts';

export interface RegionInfo {
  readonly index: number;
  readonly flags: number;
  readonly size: number;
  /** File offset of the region in the device fd. */
  readonly offset: number;
  /** True when the kernel allows mmap of some parts only (sparse-mmap capability). */
  readonly sparse: boolean;
}

/** VFIO_DEVICE_GET_REGION_INFO for region `index` (0 BAR0, 2 BAR2, 7 config). */
export function regionInfo(libc: Libc, deviceFd: number, index: number, name: string): Result<RegionInfo> {
  let arg = new Uint8Array(vfio_region_info.size);
  for (let attempt = 0; ; attempt++) {
    vfio_region_info.encode({ argsz: arg.length, index }, arg);
    const r = libc.ioctl(deviceFd, VFIO_IOCTL.VFIO_DEVICE_GET_REGION_INFO, arg);
    if (r < 0) return err(`VFIO_DEVICE_GET_REGION_INFO for ${name} failed: ${errnoName(r)}`);
    const wanted = vfio_region_info.decode(arg).argsz;
    if (wanted <= arg.length || attempt > 0) break;
    arg = new Uint8Array(wanted); // capabilities follow: ask again with room for them
  }
  const info = vfio_region_info.decode(arg);
  const sparse =
    (info.flags & VFIO_CONST.VFIO_REGION_INFO_FLAG_CAPS) !== 0 &&
    findCapability(arg, info.cap_offset, vfio_region_info.size,
      VFIO_CONST.VFIO_REGION_INFO_CAP_SPARSE_MMAP) !== undefined;
  return ok({ index, flags: info.flags, size: info.size, offset: info.offset, sparse });
}

/** mmaps a whole BAR region, read/write, shared. */
export function mapBar(libc: Libc, deviceFd: number, region: RegionInfo, name: string): Result<Mapping> {
  if (region.size === 0) return err(`${name} is absent (size 0) on this function`);
  if ((region.flags & VFIO_CONST.VFIO_REGION_INFO_FLAG_MMAP) === 0)
    return err(`${name} cannot be mmapped (VFIO region flags 0x${region.flags.toString(16)})`);
  if (region.sparse) return err(`${name} can only be mmapped in parts (VFIO sparse-mmap capability): not supported`);
  const address = libc.mmap(region.size, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED, deviceFd, region.offset);
  if (address < 0n) return err(`cannot mmap ${name} (${region.size} bytes): ${errnoName(Number(address))}`);
  return ok(new Mapping(libc, address, region.size));
}

/** Reads the 16-bit PCI command register through the config region. */
export function readCommand(libc: Libc, deviceFd: number, config: RegionInfo): Result<number> {
  const word = new Uint8Array(2);
  const r = libc.pread(deviceFd, word, config.offset + PCI_CONFIG.PCI_COMMAND);
  return r === 2 ? ok(word[0]! | (word[1]! << 8))
    : err(`cannot read the PCI command register: ${r < 0 ? errnoName(r) : `short read (${r})`}`);
}

export function writeCommand(libc: Libc, deviceFd: number, config: RegionInfo, value: number): Result<void> {
  const word = Uint8Array.of(value & 0xff, (value >>> 8) & 0xff);
  const r = libc.pwrite(deviceFd, word, config.offset + PCI_CONFIG.PCI_COMMAND);
  return r === 2 ? ok() : err(`cannot write the PCI command register: ${r < 0 ? errnoName(r) : `short write (${r})`}`);
}
