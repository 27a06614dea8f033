/**
 * A NIC: a bnxt function brought up over HWRM with its RoCE engine initialised. Open it
 * by name (a PCI address, or `emu` for the software NIC), make queue pairs and regions on
 * it, close it to give everything back.
 */
import type { Device } from '../drivers/device.ts';
import { openDevice, parseIpv4, type OpenOptions } from '../drivers/open-device.ts';
import { ok, err, type Result } from './result.ts';
import { invalid } from './errors.ts';
import { bringUp, tearDown, type BnxtFunction } from './bnxt/bringup.ts';
import { DmaPool } from './bnxt/dma-pool.ts';
import { bringUpRoce, tearDownRoce, type RoceDevice } from './bnxt/roce-device.ts';
import { TraceFile } from '../drivers/trace-file.ts';

export interface NicOptions extends OpenOptions {
  /** Caps every firmware wait, in ms (for tests of a firmware that stops answering). */
  readonly firmwareTimeoutMs?: number;
  /**
   * Writes every HWRM request and response, RoCE command and CREQ answer to this file, one JSON
   * record a line (firmware-hwrm/trace.ts), with every doorbell and, on the software NIC, every
   * WQE it fetched; unset, RIG_BNXT_TRACE's file, if set. Untraced, the data path runs no trace
   * code at all.
   */
  readonly trace?: string;
}

/** The environment variable naming the trace file of NICs opened without one. */
export const TRACE_ENV = 'RIG_BNXT_TRACE';

export interface NicInfo {
  readonly name: string;
  readonly chip: string;
  readonly chipNum: number;
  readonly chipFamily: string;
  readonly firmwareVersion: string;
  readonly hwrmVersion: string;
  readonly mac: string;
  readonly ipv4: string;
  readonly gid: string;
  readonly linkUp: boolean;
  readonly linkSpeedMbps: number;
  readonly mtu: number;
  /** DMA memory in use, and the part held back because a silent firmware may still name it. */
  readonly dmaBytes: number;
  readonly quarantinedBytes: number;
  readonly maxQps: number;
}

/**
 * @internal Handles other modules of lib/ use; not part of the public surface (kept out of the published declarations).
 */
export interface NicInternals {
  readonly device: Device;
  readonly func: BnxtFunction;
  readonly roce: RoceDevice;
  readonly id: number;
  /** Live objects (QPs, regions) to destroy at close. */
  readonly children: Set<{ closeWithNic(): void }>;
  /** The numbers of its live queue pairs (a peer on this NIC is one of them). */
  readonly qps: Set<number>;
}

const internals = new WeakMap<Nic, NicInternals>();
let nextNicId = 1;

/** @internal */
export function nicInternals(nic: Nic): NicInternals {
  const i = internals.get(nic);
  if (!i) invalid('this NIC is closed');
  return i;
}

export class Nic {
  readonly name: string;
  private readonly ipv4: Uint8Array;

  private constructor(name: string, ipv4: Uint8Array, i: NicInternals) {
    this.name = name;
    this.ipv4 = ipv4;
    internals.set(this, i);
  }

  /**
   * Opens and brings up a NIC: `0000:3b:00.0` (VFIO), `emu` (a software NIC cabled to
   * itself) or `emu:LOCAL:REMOTE` (a software NIC cabled over UDP on 127.0.0.1).
   * Throws InvalidArgument for a malformed name or option; an absent device or a firmware
   * refusal is a Result error.
   */
  static open(name: string, options: NicOptions = {}): Result<Nic> {
    const ipv4 = options.ipv4 !== undefined ? parseIpv4(options.ipv4) : undefined;
    const tracePath = options.trace ?? (process.env[TRACE_ENV] || undefined);
    if (tracePath !== undefined && typeof tracePath !== 'string') invalid('Nic.open: trace must be a file name');
    // The trace is created first: a software NIC appends the WQEs it fetches to the same file.
    let trace: TraceFile | undefined;
    try {
      trace = tracePath !== undefined ? new TraceFile(tracePath) : undefined;
    } catch (e) {
      return err(`${name}: ${(e as Error).message}`);
    }
    let dev: ReturnType<typeof openDevice>;
    try {
      dev = openDevice(name, options, trace && { path: trace.path, epochNs: trace.epochNs });
    } catch (e) {
      trace?.close(); // a misuse (InvalidArgument) leaves no file handle behind
      throw e;
    }
    if (!dev.ok) {
      trace?.close();
      return dev;
    }
    const { device, defaultIpv4 } = dev.value;
    const pool = new DmaPool(device.dma);
    const func = bringUp(device, { firmwareTimeoutMs: options.firmwareTimeoutMs, pool, trace });
    if (!func.ok) {
      trace?.close();
      device.close();
      pool.releaseQuarantine(); // the device can no longer DMA: what a silent firmware might name goes back
      return err(`${name}: ${func.error}`);
    }
    // On hardware the address defaults to one made from the MAC; the software NIC was given its own.
    const mac = func.value.info.mac;
    const address = ipv4 ?? (defaultIpv4 ?? Uint8Array.from([10, mac[3]!, mac[4]!, mac[5]!]));
    const roce = bringUpRoce(func.value, address);
    if (!roce.ok) {
      tearDown(func.value);
      trace?.close();
      device.close();
      pool.releaseQuarantine();
      return err(`${name}: ${roce.error}`);
    }
    return ok(new Nic(name, address, {
      device, func: func.value, roce: roce.value, id: nextNicId++, children: new Set(), qps: new Set(),
    }));
  }

  get info(): NicInfo {
    const { func, roce } = nicInternals(this);
    const i = func.info;
    return {
      name: this.name,
      chip: i.chip.name,
      chipNum: i.chipNum,
      chipFamily: i.chip.family,
      firmwareVersion: i.firmwareVersion,
      hwrmVersion: i.hwrmVersion,
      mac: [...i.mac].map((b) => b.toString(16).padStart(2, '0')).join(':'),
      ipv4: [...this.ipv4].join('.'),
      gid: formatGid(roce.gid),
      linkUp: i.linkUp,
      linkSpeedMbps: i.linkSpeedMbps,
      mtu: i.mtu,
      dmaBytes: func.pool.allocatedBytes,
      quarantinedBytes: func.pool.quarantinedBytes,
      maxQps: roce.caps.max_qp,
    };
  }

  get closed(): boolean {
    return !internals.has(this);
  }

  /** Destroys what is left on the NIC, tears RoCE and the function down, and releases the device. */
  close(): void {
    const i = internals.get(this);
    if (!i) return;
    for (const child of [...i.children]) child.closeWithNic();
    tearDownRoce(i.roce);
    tearDown(i.func);
    (i.func.hwrm.trace as TraceFile | undefined)?.close(); // every command of the teardown is in it
    i.device.close();
    // The device can no longer DMA: what a silent firmware might have named is safe to release.
    i.func.pool.releaseQuarantine();
    internals.delete(this);
  }
}

export function formatGid(gid: Uint8Array): string {
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(((gid[i]! << 8) | gid[i + 1]!).toString(16).padStart(4, '0'));
  return words.join(':');
}
