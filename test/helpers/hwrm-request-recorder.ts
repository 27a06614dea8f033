/**
 * A Device wrapper that keeps the bytes of every HWRM request the driver hands the firmware,
 * read where the firmware reads them (the BAR0 window, or host memory at a short command's
 * req_addr), so tests check the driver's requests byte by byte against fixtures written from
 * the public header's offsets, not through the project's own codecs.
 */
import type { Device, DmaBuffer, DmaMemory, Mmio } from '../../drivers/device.ts';

/** The BAR0 request window and its trigger (Linux bnxt.h GRCPF_REG_CHIMP_COMM 0x0, _CHIMP_COMM_TRIGGER 0x100). */
const WINDOW = 0x000;
const WINDOW_BYTES = 0x100;
const TRIGGER = 0x100;
/** bnxt_hsi.h hwrm_short_input: signature at byte 2 (SHORT_CMD 0x4321), size at 6, req_addr at 8. */
const SHORT_SIGNATURE = 0x4321;

export interface RecordedRequest {
  /** bnxt_hsi.h req_type, read from bytes 0-1 of the request. */
  readonly reqType: number;
  readonly bytes: Uint8Array;
}

export function recordHwrmRequests(device: Device): { device: Device; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const buffers: DmaBuffer[] = [];
  const window = new Uint8Array(WINDOW_BYTES);
  const wv = new DataView(window.buffer);
  const inner = device.bar(0);
  const bar0: Mmio = {
    size: inner.size,
    read32: (o) => inner.read32(o),
    doorbell64: (o, lo, hi) => inner.doorbell64(o, lo, hi),
    write32: (offset, value) => {
      if (offset >= WINDOW && offset < WINDOW + WINDOW_BYTES) wv.setUint32(offset - WINDOW, value >>> 0, true);
      if (offset === TRIGGER && value === 1) requests.push(take());
      inner.write32(offset, value);
    },
  };
  const take = (): RecordedRequest => {
    if (wv.getUint16(2, true) !== SHORT_SIGNATURE) return { reqType: wv.getUint16(0, true), bytes: window.slice() };
    const size = wv.getUint16(6, true);
    const addr = Number(wv.getBigUint64(8, true));
    const b = buffers.find((x) => addr >= x.iova && addr + size <= x.iova + x.length);
    if (!b) throw new Error(`short command names 0x${addr.toString(16)}, which is no DMA buffer of the driver`);
    const bytes = b.bytes.slice(addr - b.iova, addr - b.iova + size);
    return { reqType: bytes[0]! | (bytes[1]! << 8), bytes };
  };
  const dma: DmaMemory = {
    alloc: (length) => {
      const r = device.dma.alloc(length);
      if (r.ok) buffers.push(r.value);
      return r;
    },
    free: (b) => {
      const i = buffers.indexOf(b);
      if (i >= 0) buffers.splice(i, 1);
      device.dma.free(b);
    },
    get allocatedBytes() { return device.dma.allocatedBytes; },
    get allocatedBuffers() { return device.dma.allocatedBuffers; },
  };
  const wrapped: Device = {
    identity: device.identity, dma, clock: device.clock, random: device.random,
    bar: (i) => (i === 0 ? bar0 : device.bar(i)),
    close: () => device.close(),
  };
  return { device: wrapped, requests };
}
