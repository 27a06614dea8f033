/**
 * The one place that opens a device by name: a PCI address is real hardware through VFIO,
 * `emu` / `emu:LOCAL:REMOTE` a software NIC. Above this, nothing knows which it got.
 */
import type { Device } from './device.ts';
import { openEmu } from './emu/device.ts';
import { macFromNumber, type CableSpec } from './emu/config.ts';
import { openVfio } from './vfio/index.ts';
import { invalid } from '../firmware-hwrm/errors.ts';
import { ok, type Result } from '../firmware-hwrm/result.ts';

export interface OpenOptions {
  /** The NIC's IPv4 address (dotted quad); its GID is the IPv4-mapped RoCEv2 GID. */
  readonly ipv4?: string;
  /** Software NIC only: its MAC (aa:bb:cc:dd:ee:ff). */
  readonly mac?: string;
  /** Software NIC only: its Ethernet MTU (path MTU follows: 1500 gives 1024, 9000 gives 4096). */
  readonly mtu?: number;
  /** Software NIC only: append every frame sent and received to this pcap file. */
  readonly pcap?: string;
  /** Software NIC only: seed of its random choices. */
  readonly seed?: number;
  /** Software NIC only: run the model stepped in this thread on a virtual clock (deterministic tests). */
  readonly stepped?: boolean;
  /**
   * Stepped software NIC only: two NICs opened with the same pair name are cabled to each other
   * in this process and share one virtual clock (two NICs, deterministic, no sockets).
   */
  readonly pair?: string;
}

const PCI_ADDRESS = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;
const EMU = /^emu(?::(\d{1,5}):(\d{1,5}))?$/;
let emuCount = 0;

export interface OpenedDevice {
  readonly device: Device;
  /** The address the NIC answers to unless the user gave one (software NIC: from its cable). */
  readonly defaultIpv4: Uint8Array | undefined;
}

export function openDevice(name: string, options: OpenOptions): Result<OpenedDevice> {
  if (typeof name !== 'string') invalid('Nic.open: the name must be a string');
  if (PCI_ADDRESS.test(name)) {
    const d = openVfio(name);
    return d.ok ? ok({ device: d.value, defaultIpv4: undefined }) : d;
  }
  const m = EMU.exec(name);
  if (!m) invalid(`Nic.open: "${name}" is neither a PCI address (0000:3b:00.0) nor emu / emu:LOCAL:REMOTE`);
  let cable: CableSpec = { kind: 'loop' };
  if (options.pair !== undefined) {
    if (typeof options.pair !== 'string' || options.pair === '') invalid('Nic.open: pair must be a non-empty name');
    if (!options.stepped || m[1] !== undefined) invalid('Nic.open: pair cables two stepped NICs opened as "emu"');
    cable = { kind: 'pair', name: options.pair };
  }
  // 1..255: the address's last byte (below) is never 0, so no two NICs of a process share one.
  let number = (process.pid & 0xff) * 256 + ((emuCount++ % 255) + 1);
  if (m[1] !== undefined) {
    const localPort = Number(m[1]);
    const remotePort = Number(m[2]);
    if (localPort < 1 || localPort > 65535 || remotePort < 1 || remotePort > 65535) invalid(`Nic.open: ports of "${name}" must be 1..65535`);
    cable = { kind: 'udp', localPort, remotePort };
    number = localPort;
  }
  const mac = options.mac !== undefined ? parseMac(options.mac) : macFromNumber(number);
  // The software NIC's address comes from its cable: 10.77.x.y from its local port or number.
  const ipv4 = options.ipv4 !== undefined ? parseIpv4(options.ipv4) : Uint8Array.from([10, 77, (number >> 8) & 0xff, number & 0xff || 1]);
  const mtu = options.mtu ?? 9000;
  if (!Number.isInteger(mtu) || mtu < 576 || mtu > 9216) invalid(`Nic.open: MTU ${mtu} is not in 576..9216`);
  const d = openEmu({ mac, ipv4, mtu, cable, pcapPath: options.pcap ?? process.env.RIG_BNXT_PCAP, seed: options.seed ?? 1, mode: options.stepped ? 'stepped' : 'thread' });
  return d.ok ? ok({ device: d.value, defaultIpv4: ipv4 }) : d;
}

export function parseMac(text: string): Uint8Array {
  const m = /^([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})$/.exec(text);
  if (!m) invalid(`"${text}" is not a MAC address (aa:bb:cc:dd:ee:ff)`);
  return Uint8Array.from(m.slice(1).map((h) => parseInt(h, 16)));
}

export function parseIpv4(text: string): Uint8Array {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) invalid(`"${text}" is not an IPv4 address`);
  return Uint8Array.from(parts.map(Number));
}
