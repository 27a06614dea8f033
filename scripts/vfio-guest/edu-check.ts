/**
 * Runs inside the QEMU guest (scripts/vfio-guest/init, as root): drives QEMU's edu device
 * through drivers/vfio against the guest kernel's real VFIO, behind an emulated Intel
 * IOMMU, and reports each step as a marker line (markers.ts) that
 * test/vfio-guest.test.ts asserts. Bundled on the host by build.sh (koffi stays external).
 *
 * Steps: the kernel's VFIO sequence one call at a time (container, group, IOMMU, device,
 * region info); the default bnxt check refusing the edu device; openVfio with allowDevice
 * and an IOVA window below the edu's 28-bit DMA limit; the identification and liveness
 * registers through the mmapped BAR0; DMA from a buffer into the device and back out into
 * another buffer through the IOMMU; an unmap that the IOMMU honours (a DMA to the unmapped
 * IOVA faults); close; and a second open.
 *
 * Usage: node edu-check.mjs [DDDD:BB:DD.F]  (default: the first edu device in sysfs)
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import {
  getDeviceFd, openContainer, openGroup, readIommuSpace, setContainer, setIommu, unsetContainer,
} from '../../drivers/vfio/container.ts';
import { VFIO_CONST } from '../../drivers/vfio/abi.ts';
import { errnoName, LINUX, systemLibc } from '../../drivers/native/libc.ts';
import { openVfio } from '../../drivers/vfio/open.ts';
import { regionInfo, type RegionInfo } from '../../drivers/vfio/region.ts';
import { readPciFunction } from '../../drivers/vfio/sysfs.ts';
import type { Clock, DmaBuffer, Mmio } from '../../drivers/device.ts';
import type { VfioDevice } from '../../drivers/vfio/vfio-device.ts';
import type { BnxtPciId } from '../../drivers/vfio/pci-ids.ts';
import { EDU, eduDma } from './edu.ts';
import { END_MARKER, formatStep } from './markers.ts';

const MiB = 1024 * 1024;
const EDU_IDS = { vendorId: EDU.VENDOR_ID, deviceId: EDU.DEVICE_ID };
/** Below the edu's 28-bit DMA mask; above 0 so no buffer sits at bus address 0. */
const IOVA_WINDOW = { start: 16 * MiB, end: 2 ** EDU.DMA_MASK_BITS };
const OPTIONS = { allowDevice: EDU_IDS, iovaWindow: IOVA_WINDOW, hugePages: false } as const;

class StepFailed extends Error {}

const hex = (n: number) => `0x${n.toString(16)}`;

function report(step: string, ok: boolean, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${formatStep({ step, ok, ...fields })}\n`);
}

/** Reports a failed step and stops the run. */
function fail(step: string, error: string, fields: Record<string, unknown> = {}): never {
  report(step, false, { error, ...fields });
  throw new StepFailed(error);
}

function must<A>(step: string, r: { ok: true; value: A } | { ok: false; error: string }): A {
  if (!r.ok) fail(step, r.error);
  return r.value;
}

function findEdu(): string {
  const root = '/sys/bus/pci/devices';
  for (const name of readdirSync(root).sort()) {
    const id = (file: string) => Number.parseInt(readFileSync(`${root}/${name}/${file}`, 'utf8'), 16);
    if (id('vendor') === EDU.VENDOR_ID && id('device') === EDU.DEVICE_ID) return name;
  }
  return fail('find-device', 'no edu device (1234:11e8) in /sys/bus/pci/devices: start QEMU with -device edu');
}

const openFds = () => readdirSync('/proc/self/fd').length;

function regionFacts(r: RegionInfo) {
  return { size: r.size, offset: hex(r.offset), flags: r.flags, sparse: r.sparse };
}

/** A deterministic, non-repeating-looking byte pattern (so a shifted copy cannot match). */
function pattern(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  return bytes;
}

function mismatches(actual: Uint8Array, expected: Uint8Array): number {
  let n = Math.abs(actual.length - expected.length);
  for (let i = 0; i < Math.min(actual.length, expected.length); i++) if (actual[i] !== expected[i]) n++;
  return n;
}

const headHex = (b: Uint8Array) => Buffer.from(b.subarray(0, 16)).toString('hex');

/**
 * The guest-physical address of a DMA buffer's first page, from /proc/self/pagemap (root
 * sees page frame numbers), or null. It shows the IOMMU translating: the device reaches
 * the page at its IOVA, not at this address. The buffer's virtual address is not part of
 * the DmaBuffer interface, so it is read off drivers/vfio's buffer object, checked here.
 */
function physicalAddress(buffer: DmaBuffer): number | null {
  const address = (buffer as unknown as { mapping?: { address?: unknown } }).mapping?.address;
  if (typeof address !== 'bigint') return null;
  const fd = openSync('/proc/self/pagemap', 'r');
  try {
    const entry = Buffer.alloc(8);
    if (readSync(fd, entry, 0, 8, Number(address / 4096n) * 8) !== 8) return null;
    const bits = entry.readBigUInt64LE(0);
    if (bits >> 63n === 0n) return null; // page not present
    return Number(bits & ((1n << 55n) - 1n)) * 4096;
  } finally {
    closeSync(fd);
  }
}

/** The kernel's VFIO sequence one call at a time, reporting what the kernel says. */
function kernelSequence(bdf: string): void {
  const step = 'kernel-sequence';
  const libc = systemLibc();
  const facts = must(step, readPciFunction('/sys', bdf));
  if (facts.iommuGroup === null) fail(step, `${bdf} has no IOMMU group`);
  const fds: number[] = [];
  let joined = -1;
  try {
    const container = must(step, openContainer(libc, '/dev'));
    fds.push(container);
    const group = must(step, openGroup(libc, '/dev', '/sys', facts.iommuGroup, bdf));
    fds.push(group);
    must(step, setContainer(libc, group, container));
    joined = group;
    must(step, setIommu(libc, container));
    // The whole space the driver could use, to show what the kernel reserves in it.
    const space = must(step, readIommuSpace(libc, container, { start: 4096, end: 2 ** 48 }));
    const device = must(step, getDeviceFd(libc, group, bdf));
    fds.push(device);
    const bar0 = must(step, regionInfo(libc, device, VFIO_CONST.VFIO_PCI_BAR0_REGION_INDEX, 'BAR0'));
    const bar2 = must(step, regionInfo(libc, device, VFIO_CONST.VFIO_PCI_BAR2_REGION_INDEX, 'BAR2'));
    const config = must(step, regionInfo(libc, device, VFIO_CONST.VFIO_PCI_CONFIG_REGION_INDEX, 'config'));
    report(step, true, {
      address: bdf,
      vendorId: facts.vendorId,
      deviceId: facts.deviceId,
      driver: facts.driver,
      iommuGroup: facts.iommuGroup,
      iommuGranuleBytes: space.granuleBytes,
      iovaRanges: space.ranges.map((r) => [hex(r.start), hex(r.end)]),
      bar0: regionFacts(bar0),
      bar2: regionFacts(bar2),
      config: regionFacts(config),
    });
  } finally {
    const device = fds[2];
    if (device !== undefined) libc.close(device);
    if (joined >= 0) unsetContainer(libc, joined);
    for (const fd of fds.slice(0, 2).reverse()) libc.close(fd);
  }
}

function defaultCheckRefuses(bdf: string): void {
  const opened = openVfio(bdf);
  if (opened.ok) {
    opened.value.close();
    fail('bnxt-check', 'openVfio without allowDevice accepted a non-bnxt device');
  }
  report('bnxt-check', true, { refusal: opened.error });
}

/** openVfio on the edu, then the register and DMA steps, close, and a second open. */
function run(bdf: string): void {
  const libc = systemLibc();
  const group = readPciFunction('/sys', bdf);
  const groupNode = `/dev/vfio/${group.ok ? group.value.iommuGroup : '?'}`;
  const fdsBefore = openFds();
  const device = must('open', openVfio(bdf, OPTIONS));
  let bar2Refused = false;
  try {
    device.bar(2);
  } catch {
    bar2Refused = true;
  }
  // VFIO lets one process hold a group: a second open of its node must be refused.
  const second = libc.open(groupNode, LINUX.O_RDWR);
  if (second >= 0) libc.close(second);
  const fdsOpened = openFds() - fdsBefore;
  report('open', device.bar(0).size === EDU.BAR0_BYTES && bar2Refused && second < 0 && fdsOpened === 3, {
    identity: device.identity,
    chip: device.chip ?? null,
    bar0Bytes: device.bar(0).size,
    bar2Refused,
    groupNode,
    secondGroupOpen: second >= 0 ? 'opened' : errnoName(second),
    fdsOpened,
  });
  let firstIova: number;
  try {
    firstIova = registersAndDma(device);
  } catch (e) {
    device.close(); // a failed step still gives the device back
    throw e;
  }
  closeAndReopen(bdf, device, groupNode, fdsBefore, firstIova);
}

/** BAR0 registers, then DMA into the device and out again; returns the first IOVA handed out. */
function registersAndDma(device: VfioDevice<BnxtPciId | undefined>): number {
  const bar0 = device.bar(0);
  const id = bar0.read32(EDU.REG_ID);
  bar0.write32(EDU.REG_LIVENESS, 0x12345678);
  const liveness = bar0.read32(EDU.REG_LIVENESS);
  report('identify', id === EDU.ID_VALUE && liveness === 0xedcba987, {
    id: hex(id), livenessWrote: hex(0x12345678), livenessRead: hex(liveness),
  });

  const source = must('dma-alloc', device.dma.alloc(EDU.BUFFER_BYTES));
  const target = must('dma-alloc', device.dma.alloc(EDU.BUFFER_BYTES));
  const iovas = [source.iova, target.iova];
  const inWindow = iovas.every(
    (iova) => iova >= IOVA_WINDOW.start && iova + EDU.BUFFER_BYTES <= IOVA_WINDOW.end && iova % 4096 === 0,
  );
  report('dma-alloc', inWindow && source.iova !== target.iova, {
    window: [hex(IOVA_WINDOW.start), hex(IOVA_WINDOW.end)],
    iovas: iovas.map(hex),
    physical: [source, target].map((b) => {
      const at = physicalAddress(b);
      return at === null ? null : hex(at);
    }),
    lengths: [source.length, target.length],
    allocatedBuffers: device.dma.allocatedBuffers,
  });

  // Into the device from one buffer, back out into another (zeroed) one: the bytes the
  // device copied arrive, and the tail it was not asked to write stays zero.
  const count = EDU.MAX_TRANSFER_BYTES;
  const expected = pattern(EDU.BUFFER_BYTES, 0xed0);
  source.bytes.set(expected);
  const inMs = must(
    'dma-to-device', eduDma(bar0, device.clock, 'ram-to-device', source.iova, EDU.BUFFER_ADDRESS, count),
  );
  report('dma-to-device', true, { from: hex(source.iova), to: hex(EDU.BUFFER_ADDRESS), count, ms: inMs });

  target.bytes.fill(0);
  const outMs = must('dma-to-ram', eduDma(bar0, device.clock, 'device-to-ram', EDU.BUFFER_ADDRESS, target.iova, count));
  const want = new Uint8Array(target.length);
  want.set(expected.subarray(0, count));
  const wrong = mismatches(target.bytes, want);
  report('dma-to-ram', wrong === 0, {
    from: hex(EDU.BUFFER_ADDRESS),
    to: hex(target.iova),
    count,
    ms: outMs,
    mismatchedBytes: wrong,
    expectedHead: headHex(expected),
    gotHead: headHex(target.bytes),
    untouchedTailBytes: target.length - count,
    sourceUnchanged: mismatches(source.bytes, expected) === 0,
  });

  offsetTransfer(bar0, device.clock, target, expected);
  unmapHonoured(device, target, source, expected);
  return source.iova;
}

/** close gives everything back: fds, buffers, the group; a second open starts afresh. */
function closeAndReopen(
  bdf: string, device: VfioDevice<BnxtPciId | undefined>, groupNode: string, fdsBefore: number, firstIova: number,
): void {
  const libc = systemLibc();
  device.close();
  let bar0Refused = false;
  try {
    device.bar(0);
  } catch {
    bar0Refused = true;
  }
  const after = libc.open(groupNode, LINUX.O_RDWR);
  if (after >= 0) libc.close(after);
  const fdsLeft = openFds() - fdsBefore;
  report('close', after >= 0 && fdsLeft === 0 && bar0Refused, {
    groupOpenAfterClose: after >= 0 ? 'opened' : errnoName(after),
    fdsLeft,
    bar0Refused,
    allocatedBuffers: device.dma.allocatedBuffers,
  });

  // A second open gets a fresh container: the same first IOVA, and the device answers.
  const again = must('reopen', openVfio(bdf, OPTIONS));
  const againId = again.bar(0).read32(EDU.REG_ID);
  const buffer = must('reopen', again.dma.alloc(EDU.BUFFER_BYTES));
  const againIova = buffer.iova;
  again.close();
  report('reopen', againId === EDU.ID_VALUE && againIova === firstIova, {
    id: hex(againId), firstIova: hex(againIova), fdsLeft: openFds() - fdsBefore,
  });
}

/** 256 bytes from the middle of the device buffer to the middle of a page: only those change. */
function offsetTransfer(bar0: Mmio, clock: Clock, target: DmaBuffer, expected: Uint8Array): void {
  const from = 0x80;
  const to = 0x300;
  const count = 0x100;
  target.bytes.fill(0xa5);
  const ms = must(
    'dma-offset', eduDma(bar0, clock, 'device-to-ram', EDU.BUFFER_ADDRESS + from, target.iova + to, count),
  );
  const want = new Uint8Array(target.length).fill(0xa5);
  want.set(expected.subarray(from, from + count), to);
  const wrong = mismatches(target.bytes, want);
  report('dma-offset', wrong === 0, {
    from: hex(EDU.BUFFER_ADDRESS + from), to: hex(target.iova + to), count, ms, mismatchedBytes: wrong,
  });
}

/**
 * free() must take the buffer out of the IOMMU: the kernel maps the same IOVA again at the
 * next alloc (it refuses an IOVA that is still mapped), and a DMA to a freed IOVA faults
 * in the IOMMU instead of reaching memory (the guest kernel logs a DMAR fault).
 */
function unmapHonoured(
  device: VfioDevice<BnxtPciId | undefined>, target: DmaBuffer, source: DmaBuffer, expected: Uint8Array,
): void {
  const step = 'unmap';
  const iova = target.iova;
  device.dma.free(target);
  const remapped = must(step, device.dma.alloc(EDU.BUFFER_BYTES));
  const sameIova = remapped.iova === iova;
  device.dma.free(remapped);
  const buffersLeft = device.dma.allocatedBuffers;

  const ms = must(
    step, eduDma(device.bar(0), device.clock, 'device-to-ram', EDU.BUFFER_ADDRESS, iova, EDU.MAX_TRANSFER_BYTES),
  );
  // The fault interrupt is handled asynchronously: look a few times.
  let fault: { device: string; addr: number; line: string } | undefined;
  for (let look = 0; look < 20 && fault === undefined; look++) {
    fault = dmarWriteFault(iova);
    if (fault === undefined) device.clock.sleep(100_000);
  }
  const sourceUnchanged = mismatches(source.bytes, expected) === 0;
  report(step, sameIova && buffersLeft === 1 && fault !== undefined && sourceUnchanged, {
    freedIova: hex(iova),
    remappedSameIova: sameIova,
    allocatedBuffers: buffersLeft,
    dmaToFreedIovaMs: ms,
    dmarFault: fault ? { device: fault.device, addr: hex(fault.addr), line: fault.line } : null,
    sourceUnchanged,
  });
}

/** The guest kernel's DMAR write fault at the page of `iova`, if logged. */
function dmarWriteFault(iova: number): { device: string; addr: number; line: string } | undefined {
  const log = execFileSync('dmesg', { encoding: 'utf8' });
  for (const line of log.split('\n')) {
    const m =
      /\[DMA Write NO_PASID\] Request device \[([0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\] fault addr 0x([0-9a-f]+)/.exec(line);
    if (m && Math.floor(Number.parseInt(m[2]!, 16) / 4096) === iova / 4096)
      return { device: m[1]!, addr: Number.parseInt(m[2]!, 16), line: line.trim() };
  }
  return undefined;
}

function main(): void {
  const started = performance.now();
  report('start', true, {
    node: process.version, kernel: readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim(),
    cmdline: readFileSync('/proc/cmdline', 'utf8').trim(),
  });
  try {
    const bdf = process.argv[2] ?? findEdu();
    kernelSequence(bdf);
    defaultCheckRefuses(bdf);
    run(bdf);
    report('done', true, { ms: Math.round(performance.now() - started) });
  } catch (e) {
    if (!(e instanceof StepFailed))
      report('crash', false, {
        error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
        stack: e instanceof Error ? e.stack : undefined,
      });
  }
  process.stdout.write(`${END_MARKER}\n`);
}

main();
