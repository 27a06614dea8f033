/**
 * The vfio-user wire format (QEMU docs/interop/vfio-user.rst; libvfio-user's vfio-user.h): a
 * 16-byte header, then a command's body, all little-endian, over one AF_UNIX stream socket.
 * Only the messages a PCI device with BARs, config space, MSI-X and DMA needs are described.
 * Pure: decoders take bytes and return plain values or a string saying what is malformed.
 */

export const HEADER_BYTES = 16;

export const CMD = {
  VERSION: 1,
  DMA_MAP: 2,
  DMA_UNMAP: 3,
  DEVICE_GET_INFO: 4,
  DEVICE_GET_REGION_INFO: 5,
  DEVICE_GET_REGION_IO_FDS: 6,
  DEVICE_GET_IRQ_INFO: 7,
  DEVICE_SET_IRQS: 8,
  REGION_READ: 9,
  REGION_WRITE: 10,
  DMA_READ: 11,
  DMA_WRITE: 12,
  DEVICE_RESET: 13,
  REGION_WRITE_MULTI: 15,
  DEVICE_FEATURE: 16,
} as const;

/** Header flags: the low nibble is the message type. */
export const FLAG = {
  TYPE_MASK: 0xf,
  COMMAND: 0,
  REPLY: 1,
  NO_REPLY: 0x10,
  ERROR: 0x20,
} as const;

export const ERRNO = { EINVAL: 22, ENOSYS: 38, EFAULT: 14, ENOSPC: 28 } as const;

/** vfio's region indices for a PCI device (linux/vfio.h VFIO_PCI_*_REGION_INDEX). */
export const REGION = { BAR0: 0, BAR1: 1, BAR2: 2, BAR3: 3, BAR4: 4, BAR5: 5, ROM: 6, CONFIG: 7, VGA: 8 } as const;
export const NUM_REGIONS = 9;
/** vfio's IRQ indices for a PCI device (VFIO_PCI_*_IRQ_INDEX). */
export const IRQ = { INTX: 0, MSI: 1, MSIX: 2, ERR: 3, REQ: 4 } as const;
export const NUM_IRQS = 5;

export const DEVICE_FLAGS = { RESET: 1, PCI: 2 } as const;
export const REGION_FLAGS = { READ: 1, WRITE: 2, MMAP: 4, CAPS: 8 } as const;
export const IRQ_INFO_FLAGS = { EVENTFD: 1, MASKABLE: 2, AUTOMASKED: 4, NORESIZE: 8 } as const;
export const SET_IRQS_FLAGS = {
  DATA_NONE: 1, DATA_BOOL: 2, DATA_EVENTFD: 4, ACTION_MASK: 8, ACTION_UNMASK: 16, ACTION_TRIGGER: 32,
} as const;
export const DMA_FLAGS = { READ: 1, WRITE: 2 } as const;

export interface Header {
  readonly id: number;
  readonly command: number;
  /** Whole message, header included. */
  readonly size: number;
  readonly flags: number;
  readonly error: number;
}

export function decodeHeader(b: Uint8Array): Header {
  const dv = view(b);
  return {
    id: dv.getUint16(0, true), command: dv.getUint16(2, true), size: dv.getUint32(4, true),
    flags: dv.getUint32(8, true), error: dv.getUint32(12, true),
  };
}

/** A whole message: header, then `body`. */
export function encodeMessage(h: Omit<Header, 'size'>, body: Uint8Array = EMPTY): Uint8Array {
  const out = new Uint8Array(HEADER_BYTES + body.length);
  const dv = view(out);
  dv.setUint16(0, h.id, true);
  dv.setUint16(2, h.command, true);
  dv.setUint32(4, out.length, true);
  dv.setUint32(8, h.flags, true);
  dv.setUint32(12, h.error, true);
  out.set(body, HEADER_BYTES);
  return out;
}

const EMPTY = new Uint8Array(0);

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

/** A u64 that must fit a JavaScript number exactly (addresses, sizes, offsets). */
function u64(dv: DataView, at: number): number {
  const v = dv.getUint32(at, true) + dv.getUint32(at + 4, true) * 2 ** 32;
  return v;
}
function setU64(dv: DataView, at: number, v: number): void {
  dv.setUint32(at, v % 2 ** 32, true);
  dv.setUint32(at + 4, Math.floor(v / 2 ** 32), true);
}

type Decoded<T> = T | string;

function need(body: Uint8Array, bytes: number, what: string): string | undefined {
  return body.length < bytes ? `${what}: body is ${body.length} bytes, needs ${bytes}` : undefined;
}

// ---- VERSION -------------------------------------------------------------------------------------

export interface Version {
  readonly major: number;
  readonly minor: number;
  /** The JSON capabilities object (parsed), or {} when absent. */
  readonly capabilities: Record<string, unknown>;
}

/** Body: u16 major, u16 minor, then a NUL-terminated JSON string (optional in a request). */
export function decodeVersion(body: Uint8Array): Decoded<Version> {
  const short = need(body, 4, 'VERSION');
  if (short) return short;
  const dv = view(body);
  let capabilities: Record<string, unknown> = {};
  if (body.length > 4) {
    const end = body.indexOf(0, 4);
    if (end < 0) return 'VERSION: the JSON string is not NUL-terminated';
    const text = new TextDecoder().decode(body.subarray(4, end));
    try {
      const parsed = JSON.parse(text) as { capabilities?: unknown };
      if (parsed.capabilities !== undefined &&
        (typeof parsed.capabilities !== 'object' || parsed.capabilities === null))
          return 'VERSION: "capabilities" is not an object';
      capabilities = (parsed.capabilities ?? {}) as Record<string, unknown>;
    } catch {
      return `VERSION: the JSON string does not parse: ${JSON.stringify(text.slice(0, 80))}`;
    }
  }
  return { major: dv.getUint16(0, true), minor: dv.getUint16(2, true), capabilities };
}

export function encodeVersion(major: number, minor: number, capabilities: Record<string, unknown>): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify({ capabilities }));
  const out = new Uint8Array(4 + json.length + 1);
  const dv = view(out);
  dv.setUint16(0, major, true);
  dv.setUint16(2, minor, true);
  out.set(json, 4); // the last byte stays 0: the NUL the client checks for
  return out;
}

// ---- DMA_MAP / DMA_UNMAP -------------------------------------------------------------------------

export interface DmaMap {
  readonly argsz: number;
  readonly flags: number;
  /** Offset into the passed fd. */
  readonly offset: number;
  readonly address: number;
  readonly size: number;
}

/** Body: u32 argsz, u32 flags, u64 offset, u64 address, u64 size. */
export function decodeDmaMap(body: Uint8Array): Decoded<DmaMap> {
  const short = need(body, 32, 'DMA_MAP');
  if (short) return short;
  const dv = view(body);
  return {
    argsz: dv.getUint32(0, true), flags: dv.getUint32(4, true), offset: u64(dv, 8), address: u64(dv, 16),
    size: u64(dv, 24),
  };
}

export interface DmaUnmap {
  readonly argsz: number;
  readonly flags: number;
  readonly address: number;
  readonly size: number;
}

/** Body: u32 argsz, u32 flags, u64 address, u64 size. */
export function decodeDmaUnmap(body: Uint8Array): Decoded<DmaUnmap> {
  const short = need(body, 24, 'DMA_UNMAP');
  if (short) return short;
  const dv = view(body);
  return { argsz: dv.getUint32(0, true), flags: dv.getUint32(4, true), address: u64(dv, 8), size: u64(dv, 16) };
}

export function encodeDmaUnmap(u: DmaUnmap): Uint8Array {
  const out = new Uint8Array(24);
  const dv = view(out);
  dv.setUint32(0, 24, true);
  dv.setUint32(4, u.flags, true);
  setU64(dv, 8, u.address);
  setU64(dv, 16, u.size);
  return out;
}

// ---- DEVICE_GET_INFO, GET_REGION_INFO, GET_IRQ_INFO --------------------------------------------

/** Reply body: u32 argsz, u32 flags, u32 num_regions, u32 num_irqs. */
export function encodeDeviceInfo(flags: number, numRegions: number, numIrqs: number): Uint8Array {
  const out = new Uint8Array(16);
  const dv = view(out);
  dv.setUint32(0, 16, true);
  dv.setUint32(4, flags, true);
  dv.setUint32(8, numRegions, true);
  dv.setUint32(12, numIrqs, true);
  return out;
}

export interface RegionInfoRequest {
  readonly argsz: number;
  readonly index: number;
}

/** Body: u32 argsz, u32 flags, u32 index, u32 cap_offset, u64 size, u64 offset. */
export function decodeRegionInfoRequest(body: Uint8Array): Decoded<RegionInfoRequest> {
  const short = need(body, 12, 'DEVICE_GET_REGION_INFO');
  if (short) return short;
  const dv = view(body);
  return { argsz: dv.getUint32(0, true), index: dv.getUint32(8, true) };
}

export interface RegionInfo {
  readonly index: number;
  readonly flags: number;
  readonly size: number;
  /** Offset in the fd for mmap (0: no fd is passed). */
  readonly offset: number;
}

export function encodeRegionInfo(r: RegionInfo): Uint8Array {
  const out = new Uint8Array(32);
  const dv = view(out);
  dv.setUint32(0, 32, true);
  dv.setUint32(4, r.flags, true);
  dv.setUint32(8, r.index, true);
  dv.setUint32(12, 0, true); // cap_offset: no capabilities (no sparse mmap areas)
  setU64(dv, 16, r.size);
  setU64(dv, 24, r.offset);
  return out;
}

/** Body: u32 argsz, u32 flags, u32 index, u32 count. */
export function decodeIrqInfoRequest(body: Uint8Array): Decoded<{ readonly argsz: number; readonly index: number }> {
  const short = need(body, 12, 'DEVICE_GET_IRQ_INFO');
  if (short) return short;
  const dv = view(body);
  return { argsz: dv.getUint32(0, true), index: dv.getUint32(8, true) };
}

export function encodeIrqInfo(index: number, flags: number, count: number): Uint8Array {
  const out = new Uint8Array(16);
  const dv = view(out);
  dv.setUint32(0, 16, true);
  dv.setUint32(4, flags, true);
  dv.setUint32(8, index, true);
  dv.setUint32(12, count, true);
  return out;
}

// ---- DEVICE_SET_IRQS -----------------------------------------------------------------------------

export interface SetIrqs {
  readonly argsz: number;
  readonly flags: number;
  readonly index: number;
  readonly start: number;
  readonly count: number;
  /** DATA_BOOL: one byte per vector. */
  readonly bools: Uint8Array | undefined;
}

/** Body: u32 argsz, u32 flags, u32 index, u32 start, u32 count, then (DATA_BOOL) count bytes. */
export function decodeSetIrqs(body: Uint8Array): Decoded<SetIrqs> {
  const short = need(body, 20, 'DEVICE_SET_IRQS');
  if (short) return short;
  const dv = view(body);
  const flags = dv.getUint32(4, true);
  const count = dv.getUint32(16, true);
  const data = flags & 0x7;
  if (data !== SET_IRQS_FLAGS.DATA_NONE && data !== SET_IRQS_FLAGS.DATA_BOOL && data !== SET_IRQS_FLAGS.DATA_EVENTFD)
    return `DEVICE_SET_IRQS: flags 0x${flags.toString(16)} name ${data === 0 ? 'no' : 'more than one'} data type`;
  const action = flags & 0x38;
  if (action !== SET_IRQS_FLAGS.ACTION_MASK && action !== SET_IRQS_FLAGS.ACTION_UNMASK &&
    action !== SET_IRQS_FLAGS.ACTION_TRIGGER)
      return `DEVICE_SET_IRQS: flags 0x${flags.toString(16)} name ${action === 0 ? 'no' : 'more than one'} action`;
  let bools: Uint8Array | undefined;
  if (data === SET_IRQS_FLAGS.DATA_BOOL) {
    if (body.length < 20 + count)
      return `DEVICE_SET_IRQS: DATA_BOOL for ${count} vectors, ${body.length - 20} bytes given`;
    bools = body.slice(20, 20 + count);
  }
  return {
    argsz: dv.getUint32(0, true), flags, index: dv.getUint32(8, true), start: dv.getUint32(12, true), count, bools,
  };
}

// ---- REGION_READ / REGION_WRITE ------------------------------------------------------------------

export interface RegionAccess {
  readonly offset: number;
  readonly region: number;
  readonly count: number;
  /** REGION_WRITE: the bytes written (a view into the message). */
  readonly data: Uint8Array;
}

/** Body: u64 offset, u32 region, u32 count, then (WRITE) count bytes. */
export function decodeRegionAccess(body: Uint8Array, write: boolean): Decoded<RegionAccess> {
  const what = write ? 'REGION_WRITE' : 'REGION_READ';
  const short = need(body, 16, what);
  if (short) return short;
  const dv = view(body);
  const count = dv.getUint32(12, true);
  if (write && body.length !== 16 + count) return `${what}: count ${count} but ${body.length - 16} data bytes`;
  return {
    offset: u64(dv, 0), region: dv.getUint32(8, true), count, data: write ? body.subarray(16, 16 + count) : EMPTY,
  };
}

/** REGION_READ's reply (with data) and REGION_WRITE's (without). */
export function encodeRegionAccess(offset: number, region: number, count: number, data?: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + (data?.length ?? 0));
  const dv = view(out);
  setU64(dv, 0, offset);
  dv.setUint32(8, region, true);
  dv.setUint32(12, count, true);
  if (data) out.set(data, 16);
  return out;
}

// ---- DMA_READ / DMA_WRITE (server to client) -----------------------------------------------------

/** DMA_READ request and DMA_WRITE reply: u64 address, u64 count; DMA_WRITE request adds the data. */
export function encodeDmaAccess(address: number, count: number, data?: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + (data?.length ?? 0));
  const dv = view(out);
  setU64(dv, 0, address);
  setU64(dv, 8, count);
  if (data) out.set(data, 16);
  return out;
}

/** DMA_READ reply: u64 address, u64 count, then count bytes (data at message byte 32). */
export function decodeDmaReadReply(body: Uint8Array): Decoded<{ readonly address: number; readonly data: Uint8Array }> {
  const short = need(body, 16, 'DMA_READ reply');
  if (short) return short;
  const dv = view(body);
  const count = u64(dv, 8);
  if (body.length !== 16 + count) return `DMA_READ reply: count ${count} but ${body.length - 16} data bytes`;
  return { address: u64(dv, 0), data: body.subarray(16) };
}

export function commandName(command: number): string {
  for (const [name, n] of Object.entries(CMD)) if (n === command) return name;
  return `command ${command}`;
}
