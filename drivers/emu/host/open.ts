/**
 * How a software NIC is opened by name (`emu`, `emu:LOCAL:REMOTE`) and what it is when the
 * user says nothing more: the software NIC's own policy, kept here so that
 * drivers/open-device.ts only dispatches by name.
 *
 *   cable   `emu` a loop back to itself (or `pair`: another stepped NIC of this process);
 *           `emu:LOCAL:REMOTE` a UDP tunnel from 127.0.0.1:LOCAL to 127.0.0.1:REMOTE
 *   number  the UDP local port, else (PID & 0xff) x 256 + 1..255 (distinct per NIC of a process)
 *   MAC     02:62:6e + the number (locally administered)
 *   IPv4    10.77.(number >> 8).(number & 0xff) (config.ts ipv4FromNumber: distinct numbers,
 *           distinct addresses)
 *   MTU     9000; a capture file from RIG_BNXT_PCAP; seed 1
 *   firmware RIG_BNXT_EMU_FIRMWARE's personality, else `current` (firmware/personality.ts)
 *   chip    RIG_BNXT_CHIP's, else BCM57608 (a profile of firmware-hwrm/chips.ts)
 *   model   where it runs (config.ts mode): stepped if asked; else in a worker thread when
 *           `thread` is asked (the NIC progresses while the program computes); else inline in
 *           the driver's thread on the real clock: loop and pair (nothing outside gives the model
 *           work, so it runs inside driver calls, without hand-offs between threads). UDP runs in
 *           a worker (its peer is another process, whose sends must be acknowledged while this
 *           program computes), which polls the socket through libc (koffi; RIG_BNXT_UDP_IO=dgram
 *           or no koffi: Node's dgram socket on its event loop); with `thread: false` and libc it
 *           runs inline, also when a datagram comes or a timer is due while the program waits on
 *           the event loop (inline-udp-host.ts). RIG_BNXT_EMU_THREAD=1 makes `thread` the
 *           default (to run a suite in thread mode).
 *
 * Cables that would clash are refused: a UDP cable whose two ends are one port, or whose local
 * MAC or address is the one the other end's port gives (the two NICs would take each other's
 * frames for forged ones and talk to nobody); a stepped NIC on a UDP cable (its virtual clock
 * would run the ACK timers out while real frames are on their way). A port another socket has
 * bound is an error of the open (the worker reports its bind before it starts).
 */
import type { Device } from '../../device.ts';
import { invalid } from '../../../firmware-hwrm/errors.ts';
import { ok, type Result } from '../../../firmware-hwrm/result.ts';
import { parseIpv4, parseMac } from '../../address-text.ts';
import { openEmu } from './device.ts';
import { emuChip, ipv4FromNumber, macFromNumber, type WqeTraceTarget } from '../model/config.ts';
import type { CableSpec } from '../model/cable/port-cable.ts';
import { firmwarePersonality } from '../model/firmware/personality.ts';
import { udpThroughLibc } from './cable/udp-socket-cable.ts';
import { udpLibc } from './cable/udp-libc.ts';

/** What a user may say about a NIC when opening it (drivers/open-device.ts OpenOptions). */
export interface EmuOpenOptions {
  /** The NIC's IPv4 address (dotted quad); its GID is the IPv4-mapped RoCEv2 GID. */
  readonly ipv4?: string;
  /** Software NIC only: its MAC (aa:bb:cc:dd:ee:ff). */
  readonly mac?: string;
  /** Software NIC only: its Ethernet MTU (path MTU follows: 1500 gives 1024, 9000 gives 4096). */
  readonly mtu?: number;
  /** Software NIC only: append every frame sent and received to this pcap file. */
  readonly pcap?: string;
  /**
   * Software NIC only: write what the device received and answered (every HWRM request and
   * response, RoCE command and CREQ entry, decoded: firmware-hwrm/trace.ts) to this file.
   */
  readonly deviceTrace?: string;
  /** Software NIC only: seed of its random choices. */
  readonly seed?: number;
  /** Software NIC only: run the model stepped in this thread on a virtual clock (deterministic tests). */
  readonly stepped?: boolean;
  /**
   * Software NIC only: run the model in a worker thread, so the NIC progresses while the program
   * computes without calling the driver. Default: true on a UDP cable (its peer is another
   * process); else inline in this thread on the real clock (it progresses inside driver calls).
   * `false` on a UDP cable runs it inline where libc reads the socket: inside driver calls and
   * while the program waits on the event loop, not while it computes.
   */
  readonly thread?: boolean;
  /**
   * Software NIC only, not in a worker thread: two NICs opened with the same pair name are cabled
   * to each other in this process; stepped ones share one virtual clock (deterministic), inline
   * ones the real clock (a wait on either runs both). No sockets.
   */
  readonly pair?: string;
  /**
   * Software NIC only: the firmware it plays, `current` (unified MR registration, hardware
   * retransmission) or `p5-legacy` (neither); unset, RIG_BNXT_EMU_FIRMWARE's, else `current`
   * (firmware/personality.ts).
   */
  readonly firmware?: string;
  /**
   * Software NIC only: the chip it is, a profile name of firmware-hwrm/chips.ts (BCM57508,
   * BCM57608, ...): PCI ids, VER_GET's chip_num, doorbell offsets and limits follow it. Unset,
   * RIG_BNXT_CHIP's, else BCM57608. A hardware NIC is the chip it is (VFIO ignores this).
   */
  readonly chip?: string;
}

const EMU = /^emu(?::(\d{1,5}):(\d{1,5}))?$/;
const DEFAULT_MTU = 9000;
const MIN_MTU = 576;
const MAX_MTU = 9216;
let emuCount = 0;

/** The environment variable that runs loop-cabled software NICs in a worker thread unless told otherwise. */
export const THREAD_ENV = 'RIG_BNXT_EMU_THREAD';

function threadByDefault(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env[THREAD_ENV] === '1';
}

/** True if `name` names a software NIC. */
export function isEmuName(name: string): boolean {
  return EMU.test(name);
}

export interface OpenedEmu {
  readonly device: Device;
  /** The address the NIC answers to unless the user gave one. */
  readonly defaultIpv4: Uint8Array;
}

export function openEmuNamed(name: string, options: EmuOpenOptions, wqeTrace?: WqeTraceTarget): Result<OpenedEmu> {
  const m = EMU.exec(name);
  if (!m) invalid(`Nic.open: "${name}" is not emu / emu:LOCAL:REMOTE`);
  if (options.stepped !== undefined && typeof options.stepped !== 'boolean')
    invalid('Nic.open: stepped must be true or false');
  if (options.thread !== undefined && typeof options.thread !== 'boolean')
    invalid('Nic.open: thread must be true or false');
  if (options.stepped && options.thread)
    invalid('Nic.open: a NIC is stepped (on a virtual clock in this thread) or run in a worker thread, not both');
  const thread = options.thread ?? (options.stepped ? false : threadByDefault());
  let cable: CableSpec = { kind: 'loop' };
  if (options.pair !== undefined) {
    if (typeof options.pair !== 'string' || options.pair === '') invalid('Nic.open: pair must be a non-empty name');
    if (m[1] !== undefined) invalid('Nic.open: pair cables two NICs opened as "emu"');
    if (options.thread)
      invalid(
        'Nic.open: a pair cables two NICs whose models run in this thread (stepped or inline), not in worker threads',
      );
    cable = { kind: 'pair', name: options.pair };
  }
  // 1..255: the address's last byte (below) is never 0, so no two NICs of a process share one.
  let number = (process.pid & 0xff) * 256 + ((emuCount++ % 255) + 1);
  if (m[1] !== undefined) {
    const localPort = Number(m[1]);
    const remotePort = Number(m[2]);
    if (localPort < 1 || localPort > 65535 || remotePort < 1 || remotePort > 65535)
      invalid(`Nic.open: ports of "${name}" must be 1..65535`);
    if (localPort === remotePort)
      invalid(
        `Nic.open: "${name}" cables port ${localPort} to itself: the two ends of a cable are two NICs, on two ports`,
      );
    if (options.stepped)
      invalid(
        `Nic.open: "${name}" is a UDP cable, which runs in real time; a stepped NIC runs on a virtual clock (cable ` +
          `two stepped NICs with pair)`,
      );
    cable = { kind: 'udp', localPort, remotePort };
    number = localPort;
  }
  // A UDP cable has a peer in another process, whose sends a real NIC acknowledges whatever this
  // program does: its model runs in a worker unless the program says `thread: false` (it then
  // promises to call the driver or yield often; inline-udp-host.ts), and only where libc reads the
  // socket. Inline, a program computing for longer than 7 x 67 ms would fail its peer's sends.
  const udpLibcUsable = cable.kind === 'udp' && udpThroughLibc() && typeof udpLibc() !== 'string';
  const udpInline = udpLibcUsable && options.thread === false;
  const mode = options.stepped ? 'stepped'
    : (thread || (cable.kind === 'udp' && !udpInline)) && cable.kind !== 'pair' ? 'thread' : 'inline';
  const mac = options.mac !== undefined ? parseMac(options.mac) : macFromNumber(number);
  const ipv4 = options.ipv4 !== undefined ? parseIpv4(options.ipv4) : ipv4FromNumber(number);
  if (cable.kind === 'udp') refuseSharedAddress(name, cable.remotePort, mac, ipv4);
  const mtu = options.mtu ?? DEFAULT_MTU;
  if (!Number.isInteger(mtu) || mtu < MIN_MTU || mtu > MAX_MTU)
    invalid(`Nic.open: MTU ${mtu} is not in ${MIN_MTU}..${MAX_MTU}`);
  if (options.firmware !== undefined && typeof options.firmware !== 'string')
    invalid('Nic.open: firmware must be a name');
  const firmware = firmwarePersonality(options.firmware).name;
  if (options.chip !== undefined && typeof options.chip !== 'string') invalid('Nic.open: chip must be a name');
  const chip = emuChip(options.chip, process.env, 'Nic.open').name;
  const d = openEmu({
    mac, ipv4, mtu, cable, pcapPath: options.pcap ?? process.env.RIG_BNXT_PCAP, seed: options.seed ?? 1,
    mode, firmware, tracePath: options.deviceTrace, wqeTrace, chip,
    ...(udpLibcUsable ? { udpIo: 'libc' as const } : {}),
  });
  return d.ok ? ok({ device: d.value, defaultIpv4: ipv4 }) : d;
}

/**
 * The other end of `emu:LOCAL:REMOTE`, if it is a software NIC opened with its defaults, has the
 * MAC and address its port gives: this end must not have them too (a given --mac or --ipv4).
 */
function refuseSharedAddress(name: string, remotePort: number, mac: Uint8Array, ipv4: Uint8Array): void {
  const theirs = ipv4FromNumber(remotePort);
  if (ipv4.every((b, i) => b === theirs[i])) {
    invalid(
      `Nic.open: ${[...ipv4].join('.')} is the address of the NIC at the other end of "${name}" (port ` +
        `${remotePort}): two ends of a cable need two addresses`,
    );
  }
  const theirMac = macFromNumber(remotePort);
  if (mac.every((b, i) => b === theirMac[i])) {
    invalid(
      `Nic.open: ${[...mac].map((b) => b.toString(16).padStart(2, '0')).join(':')} is the MAC of the NIC at the ` +
        `other end of "${name}" (port ${remotePort}): two ends of a cable need two MACs`,
    );
  }
}
