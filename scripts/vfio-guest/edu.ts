/**
 * QEMU's educational PCI device, "edu" (QEMU hw/misc/edu.c, docs/specs/edu.rst): the few
 * BAR0 registers scripts/vfio-guest/edu-check.ts uses, and one DMA transfer.
 *
 * The DMA engine copies between the device's 4 KiB buffer, which it addresses as
 * 0x40000..0x40fff, and a bus address (an IOVA behind the IOMMU). It starts 100 ms of
 * virtual time after the command is written and clears the start bit when done. It only
 * drives 28 address bits: a higher bus address is masked ("clamped") to 28 bits.
 */
import type { Clock, Mmio } from '../../drivers/device.ts';
import { ok, err, type Result } from '../../lib/result.ts';

export const EDU = {
  VENDOR_ID: 0x1234,
  DEVICE_ID: 0x11e8,
  BAR0_BYTES: 1024 * 1024,
  /** Identification: 0xRRrr00ed, version 1.0. */
  REG_ID: 0x00,
  ID_VALUE: 0x010000ed,
  /** Liveness check: reads back the bitwise NOT of the last value written. */
  REG_LIVENESS: 0x04,
  REG_DMA_SOURCE: 0x80,
  REG_DMA_DESTINATION: 0x88,
  REG_DMA_COUNT: 0x90,
  REG_DMA_COMMAND: 0x98,
  /** Command bits: start (cleared by the device when done); direction 1 = device buffer to RAM. */
  DMA_START: 0x1,
  DMA_TO_RAM: 0x2,
  /** The device's own buffer as its DMA engine addresses it. */
  BUFFER_ADDRESS: 0x40000,
  BUFFER_BYTES: 4096,
  /**
   * The longest transfer used: QEMU releases before the fix "hw/misc/edu: fix 2 off-by-one
   * errors" (Debian 12's QEMU 7.2 among them) stop the whole VM with a hardware error when
   * a transfer ends exactly at the end of the device buffer, so every transfer stops short.
   */
  MAX_TRANSFER_BYTES: 4096 - 64,
  DMA_MASK_BITS: 28,
} as const;

export type EduDirection = 'ram-to-device' | 'device-to-ram';

/**
 * One DMA transfer of `count` bytes from `source` to `destination` (bus addresses; the
 * device buffer is EDU.BUFFER_ADDRESS + offset), polled to completion. Returns how long
 * the device took, in ms.
 */
export function eduDma(
  bar0: Mmio, clock: Clock, direction: EduDirection, source: number, destination: number, count: number,
  limitMs = 10_000,
): Result<number> {
  if (bar0.read32(EDU.REG_DMA_COMMAND) & EDU.DMA_START)
    return err('the edu DMA engine is still busy with an earlier transfer');
  // 32-bit writes: the engine stores each as the whole (zero-extended) register, and every
  // address here is below 2^28.
  bar0.write32(EDU.REG_DMA_SOURCE, source);
  bar0.write32(EDU.REG_DMA_DESTINATION, destination);
  bar0.write32(EDU.REG_DMA_COUNT, count);
  const started = clock.nowNs();
  bar0.write32(EDU.REG_DMA_COMMAND, EDU.DMA_START | (direction === 'device-to-ram' ? EDU.DMA_TO_RAM : 0));
  while (bar0.read32(EDU.REG_DMA_COMMAND) & EDU.DMA_START) {
    const waitedMs = (clock.nowNs() - started) / 1e6;
    if (waitedMs > limitMs) return err(`the edu DMA (${direction}, ${count} bytes) did not finish in ${limitMs} ms`);
    clock.sleep(2000);
  }
  return ok(Math.round((clock.nowNs() - started) / 1e6));
}
