/**
 * Opens a bnxt physical function through VFIO, in the order the kernel wants (Linux's
 * Documentation/driver-api/vfio.rst, "VFIO Usage Example"; include/uapi/linux/vfio.h): sysfs
 * checks, container, group, IOMMU, device, DMA memory, BARs, and finally Memory Space + Bus
 * Master. Each step that acquires something records its release in a ledger
 * (drivers/ledger.ts); a failure unwinds everything acquired so far, newest first, and says
 * what to do.
 */
import { join } from 'node:path';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { PCI_CONFIG, VFIO_CONST } from './abi.ts';
import { HostClock } from './clock.ts';
import { invalid } from '../../firmware-hwrm/errors.ts';
import type { IovaRange } from '../iova-allocator.ts';
import {
  DEFAULT_IOVA_WINDOW,
  getDeviceFd,
  iovaAllocatorFor,
  openContainer,
  openGroup,
  readIommuSpace,
  setContainer,
  setIommu,
  unsetContainer,
  vfioIommuMapper,
} from './container.ts';
import { VfioDmaMemory } from './dma.ts';
import { errnoName, loadSystemLibc, type Libc } from '../native/libc.ts';
import { BarMmio } from './mmio.ts';
import { normalizePciAddress } from './pci-address.ts';
import { bnxtPhysicalFunction, isBnxtVirtualFunction, type BnxtPciId } from './pci-ids.ts';
import { mapBar, readCommand, regionInfo, writeCommand } from './region.ts';
import { Ledger } from '../ledger.ts';
import { readPciFunction } from './sysfs.ts';
import { VfioDevice } from './vfio-device.ts';

/** Every place the backend touches the OS, so tests can substitute each one. */
export interface VfioOptions {
  /** Root of sysfs; default "/sys". */
  readonly sysfsRoot?: string;
  /** Root of the device nodes (vfio/vfio, vfio/<group>); default "/dev". */
  readonly devRoot?: string;
  /** The libc calls; default the process's libc through koffi. */
  readonly libc?: Libc;
  /** Use 2 MiB hugepages for DMA buffers of 2 MiB or more when reserved; default true. */
  readonly hugePages?: boolean;
  /**
   * The IOVAs DMA buffers may take, `end` exclusive, inside the ranges the kernel reports;
   * default [4 GiB, 2^48). A device that reaches fewer address bits (a narrow DMA mask)
   * needs a window below its limit.
   */
  readonly iovaWindow?: IovaRange;
}

export interface PciDeviceIds {
  readonly vendorId: number;
  readonly deviceId: number;
}

/**
 * Options that also accept one function that is not a bnxt PF, by its exact ids: only for
 * proving the VFIO layer on other hardware (QEMU's edu device in scripts/vfio-guest). Such
 * a device has no `chip`, and its BAR2 may be absent. Every other id still gets the bnxt
 * check and its advice.
 */
export interface VfioAllowOptions extends VfioOptions {
  readonly allowDevice: PciDeviceIds;
}

/**
 * Opens `address` ("0000:3b:00.0"). A malformed address, IOVA window or allowDevice throws
 * InvalidArgument; every other failure is a Result error that tells the user what to do.
 */
export function openVfio(address: string, options: VfioAllowOptions): Result<VfioDevice<BnxtPciId | undefined>>;
export function openVfio(address: string, options?: VfioOptions): Result<VfioDevice>;
export function openVfio(
  address: string, options: VfioOptions & { readonly allowDevice?: PciDeviceIds } = {},
): Result<VfioDevice<BnxtPciId | undefined>> {
  const bdf = normalizePciAddress(address);
  const sysfsRoot = options.sysfsRoot ?? '/sys';
  const devRoot = options.devRoot ?? '/dev';
  const iovaWindow = checkedIovaWindow(options.iovaWindow ?? DEFAULT_IOVA_WINDOW);
  const allowed = options.allowDevice === undefined ? undefined : checkedIds(options.allowDevice);

  // sysfs: the function must exist, be a bnxt PF, be bound to vfio-pci and have an IOMMU group.
  const facts = readPciFunction(sysfsRoot, bdf);
  if (!facts.ok) return facts;
  const { vendorId, deviceId, driver, iommuGroup } = facts.value;
  const ids = `vendor 0x${vendorId.toString(16).padStart(4, '0')}, device 0x${deviceId.toString(16).padStart(4, '0')}`;
  const chip = bnxtPhysicalFunction(vendorId, deviceId);
  const isAllowed = allowed !== undefined && allowed.vendorId === vendorId && allowed.deviceId === deviceId;
  if (!chip && !isAllowed) {
    if (isBnxtVirtualFunction(vendorId, deviceId))
      return err(`${bdf} is a bnxt virtual function (${ids}): rig-bnxt drives physical functions; use the PF`);
    return err(`${bdf} is not a Broadcom bnxt NIC function (${ids}): list bnxt functions with 'lspci -D -d 14e4:'`);
  }
  if (driver !== 'vfio-pci') {
    const state = driver === null ? 'is not bound to any driver' : `is bound to ${driver}`;
    return err(`${bdf} ${state}: run scripts/bind-vfio.sh ${bdf}`);
  }
  if (iommuGroup === null) {
    return err(
      `${bdf} has no IOMMU group: enable the IOMMU (kernel command line intel_iommu=on on Intel, ` +
        `amd_iommu=on on AMD, and VT-d/AMD-Vi in the firmware setup), reboot, then run scripts/bind-vfio.sh ${bdf}`,
    );
  }

  // koffi is loaded here, the first time a PCI device is opened: the software NIC never needs it.
  const bound = options.libc !== undefined ? ok(options.libc) : loadSystemLibc();
  if (!bound.ok) return bound;
  const libc = bound.value;
  const acquired = new Ledger();
  const opened = bringUp(
    libc, bdf, chip, { vendorId, deviceId }, iommuGroup, sysfsRoot, devRoot, options.hugePages ?? true, iovaWindow,
    acquired,
  );
  if (!opened.ok) {
    const failures = acquired.unwind();
    return failures.length === 0 ? opened : err(`${opened.error} (and while releasing: ${failures.join('; ')})`);
  }
  return opened;
}

function checkedIovaWindow(w: IovaRange): IovaRange {
  const fine = typeof w === 'object' && w !== null && Number.isSafeInteger(w.start) && Number.isSafeInteger(w.end) &&
    w.start > 0 && w.end > w.start;
  if (!fine)
    invalid(`openVfio: iovaWindow must be {start, end} with 0 < start < end, safe integers (got ${JSON.stringify(w)})`);
  return { start: w.start, end: w.end };
}

function checkedIds(ids: PciDeviceIds): PciDeviceIds {
  const id16 = (n: unknown) => Number.isInteger(n) && (n as number) >= 0 && (n as number) <= 0xffff;
  if (typeof ids !== 'object' || ids === null || !id16(ids.vendorId) || !id16(ids.deviceId)) {
    invalid(`openVfio: allowDevice must be {vendorId, deviceId}, 16-bit PCI ids (got ${JSON.stringify(ids)})`);
  }
  return { vendorId: ids.vendorId, deviceId: ids.deviceId };
}

function bringUp(
  libc: Libc,
  bdf: string,
  chip: BnxtPciId | undefined,
  ids: { vendorId: number; deviceId: number },
  group: string,
  sysfsRoot: string,
  devRoot: string,
  hugePages: boolean,
  iovaWindow: IovaRange,
  acquired: Ledger,
): Result<VfioDevice<BnxtPciId | undefined>> {
  const closeFd = (fd: number) => () => {
    const r = libc.close(fd);
    return r < 0 ? errnoName(r) : undefined;
  };

  // vfio.rst steps 1-3: container, API version, type1v2.
  const container = openContainer(libc, devRoot);
  if (!container.ok) return container;
  acquired.release('close the VFIO container', closeFd(container.value));

  // Steps 4–5: the group, which must be viable.
  const groupFd = openGroup(libc, devRoot, sysfsRoot, group, bdf);
  if (!groupFd.ok) return groupFd;
  acquired.release(`close ${join(devRoot, 'vfio', group)}`, closeFd(groupFd.value));

  // Step 6: the group joins the container.
  const joined = setContainer(libc, groupFd.value, container.value);
  if (!joined.ok) return joined;
  acquired.release('VFIO_GROUP_UNSET_CONTAINER', () => unsetContainer(libc, groupFd.value));

  // Step 7: type1v2 IOMMU; step 8: its page size and IOVA windows.
  const iommu = setIommu(libc, container.value);
  if (!iommu.ok) return iommu;
  const space = readIommuSpace(libc, container.value, iovaWindow);
  if (!space.ok) return space;

  // Step 10: the device fd. (vfio-pci resets the function when it is first opened.)
  const deviceFd = getDeviceFd(libc, groupFd.value, bdf);
  if (!deviceFd.ok) return deviceFd;
  acquired.release(`close the ${bdf} device fd`, closeFd(deviceFd.value));

  // VFIO_IOMMU_MAP_DMA: DMA memory mapped into this container's IOMMU; all of it is unmapped on close.
  const dma = new VfioDmaMemory({
    libc, iommu: vfioIommuMapper(libc, container.value), iovas: iovaAllocatorFor(space.value), hugePages,
  });
  acquired.release('free the DMA memory', () => {
    dma.freeAll();
    return undefined;
  });

  // Step 12: where BAR0, BAR2 and config space sit in the device fd.
  const bar0Info = regionInfo(libc, deviceFd.value, VFIO_CONST.VFIO_PCI_BAR0_REGION_INDEX, 'BAR0');
  if (!bar0Info.ok) return bar0Info;
  const bar2Info = regionInfo(libc, deviceFd.value, VFIO_CONST.VFIO_PCI_BAR2_REGION_INDEX, 'BAR2');
  if (!bar2Info.ok) return bar2Info;
  const config = regionInfo(libc, deviceFd.value, VFIO_CONST.VFIO_PCI_CONFIG_REGION_INDEX, 'PCI config space');
  if (!config.ok) return config;

  // Step 13: map BAR0 (HWRM and CMDQ mailboxes) and BAR2 (doorbells). Every bnxt PF has
  // both; an allowed non-bnxt device (allowDevice) may have no BAR2.
  const bar0 = mapBar(libc, deviceFd.value, bar0Info.value, 'BAR0');
  if (!bar0.ok) return bar0;
  acquired.release('unmap BAR0', () => retired(bar0.value.retire()));
  let bar2Mmio: BarMmio | undefined;
  if (chip !== undefined || bar2Info.value.size !== 0) {
    const bar2 = mapBar(libc, deviceFd.value, bar2Info.value, 'BAR2');
    if (!bar2.ok) return bar2;
    acquired.release('unmap BAR2', () => retired(bar2.value.retire()));
    bar2Mmio = new BarMmio(bar2.value.buffer);
  }

  // Step 14, PCI_COMMAND in config space: Memory Space + Bus Master; without Bus Master the NIC cannot DMA.
  const command = readCommand(libc, deviceFd.value, config.value);
  if (!command.ok) return command;
  const enable = PCI_CONFIG.PCI_COMMAND_MEMORY | PCI_CONFIG.PCI_COMMAND_MASTER;
  const enabled = writeCommand(libc, deviceFd.value, config.value, command.value | enable);
  if (!enabled.ok) return enabled;
  acquired.release('clear Bus Master', () => {
    const now = readCommand(libc, deviceFd.value, config.value);
    const cleared = writeCommand(
      libc, deviceFd.value, config.value, (now.ok ? now.value : command.value) & ~PCI_CONFIG.PCI_COMMAND_MASTER,
    );
    return cleared.ok ? undefined : cleared.error;
  });
  // Step 15 (VFIO_DEVICE_RESET) skipped: vfio-pci already reset the function when the fd opened.

  return ok(
    new VfioDevice({ address: bdf, ...ids }, chip, new BarMmio(bar0.value.buffer), bar2Mmio, dma, new HostClock(),
      acquired),
  );
}

function retired(r: number): string | undefined {
  return r < 0 ? errnoName(r) : undefined;
}
