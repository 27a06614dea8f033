/**
 * A Device that records every HWRM request the driver writes into BAR0's ChiMP window
 * (offsets 0..127, then 1 to the trigger at 0x100: Linux bnxt_hwrm.c __hwrm_send), as the
 * bytes the firmware reads, so tests compare them with fixtures written from the header.
 */
import type { Device, Mmio } from '../../drivers/device.ts';

const WINDOW = 128;
const TRIGGER = 0x100;

export interface CapturedRequest {
  readonly reqType: number;
  readonly bytes: Uint8Array;
}

export function capturing(device: Device): { device: Device; requests: CapturedRequest[] } {
  const requests: CapturedRequest[] = [];
  const window = new Uint8Array(WINDOW);
  const words = new DataView(window.buffer);
  const inner = device.bar(0);
  const bar0: Mmio = {
    size: inner.size,
    read32: (o) => inner.read32(o),
    write32: (o, v) => {
      if (o < WINDOW) words.setUint32(o, v >>> 0, true);
      if (o === TRIGGER && v === 1) requests.push({ reqType: words.getUint16(0, true), bytes: window.slice() });
      inner.write32(o, v);
    },
    doorbell64: (o, lo, hi) => inner.doorbell64(o, lo, hi),
  };
  const wrapped: Device = Object.create(device, { bar: { value: (i: 0 | 2) => (i === 0 ? bar0 : device.bar(i)) } });
  return { device: wrapped, requests };
}
