/** What a software NIC is: its identity and its cable, fixed when it is opened. */
import type { CableSpec } from './cable/port-cable.ts';
import { chipByName, chipNames, type ChipProfile } from '../../../firmware-hwrm/chips.ts';
import { invalid } from '../../../firmware-hwrm/errors.ts';

/**
 * The firmware personalities a NIC may play (firmware/personality.ts FIRMWARE_PERSONALITIES has
 * one row each): named here, where the config that chooses one is, so the config needs nothing
 * of the firmware.
 */
export type FirmwareName = 'current' | 'current-msn' | 'current-iqm' | 'p5-legacy';

export interface EmuConfig {
  readonly mac: Uint8Array; // 6 bytes, wire order
  readonly ipv4: Uint8Array; // 4 bytes, wire order
  /** Ethernet MTU; the RoCE path MTU follows it (1500 gives 1024, 9000 gives 4096). */
  readonly mtu: number;
  readonly cable: CableSpec;
  readonly pcapPath: string | undefined;
  /** Seeds every random choice the model makes (fault injection, ids). */
  readonly seed: number;
  /**
   * Where the model runs: in a worker thread in real time ('thread': it progresses while the
   * program computes), inline in the caller's thread on the real clock ('inline': it progresses
   * inside driver calls; cables with no outside peer only), or stepped in the caller's thread on
   * a virtual clock ('stepped': deterministic). drivers/emu/host/open.ts says which a name gets.
   */
  readonly mode: 'thread' | 'inline' | 'stepped';
  /**
   * What a broken invariant inside the model does: strict models throw (the driver's next call,
   * or close, fails with ModelInternalError); counting ones count it (internalErrors) and live
   * on. Unset: strict when RIG_BNXT_EMU_STRICT=1 (every test: package.json tap.test-env),
   * counting otherwise (the CLI, long runs).
   */
  readonly strict?: boolean;
  /**
   * The firmware the NIC plays (firmware/personality.ts): `current` or `p5-legacy`. Unset:
   * RIG_BNXT_EMU_FIRMWARE's, else `current`.
   */
  readonly firmware?: FirmwareName;
  /**
   * Write every HWRM request and response, RoCE command and CREQ entry the model handled to
   * this file, one JSON record a line, decoded from the public layouts (firmware-hwrm/trace.ts):
   * what a driver sent, as the device saw it.
   */
  readonly tracePath?: string;
  /**
   * Append a "wqe" record for every WQE the NIC fetches to this trace, which the driver writes
   * (its doorbells, commands): one file for a run, times from the driver's epoch.
   */
  readonly wqeTrace?: WqeTraceTarget;
  /**
   * The chip the NIC is (a profile name of firmware-hwrm/chips.ts: BCM57508, BCM57608, ...): its
   * PCI ids, VER_GET chip_num, doorbell offsets and limits all come from that profile. A name,
   * not the profile, so the config crosses to a worker thread as it is. Unset: RIG_BNXT_CHIP's,
   * else BCM57608.
   */
  readonly chip?: string;
  /**
   * How a UDP cable's socket is read: 'libc' by the model's own thread through native calls (a host
   * that runs the model inline or in worker.ts polls it; cable/udp-socket-cable.ts), else
   * (unset) Node's dgram socket on the event loop, for hosts that run the model on its events
   * (the vfio-user server). drivers/emu/host/open.ts sets 'libc' where they load.
   */
  readonly udpIo?: 'libc';
}

/** Where the software NIC appends its WQE records: the driver's trace file and its epoch. */
export interface WqeTraceTarget {
  readonly path: string;
  /** process.hrtime.bigint() when the driver's trace began. */
  readonly epochNs: bigint;
}

/** The environment variable that makes software NICs strict unless their config says otherwise. */
export const STRICT_ENV = 'RIG_BNXT_EMU_STRICT';

/** Whether a model whose config leaves `strict` unset is strict, in environment `env`. */
export function strictByDefault(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env[STRICT_ENV] === '1';
}

/** The environment variable naming the chip of software NICs opened without one. */
export const CHIP_ENV = 'RIG_BNXT_CHIP';
/** The chip a software NIC is when nobody says: Thor2's BCM57608 PF (the generation sold now; issue 12). */
export const DEFAULT_EMU_CHIP = 'BCM57608';

/**
 * The profile of chip `name`, else of the environment's RIG_BNXT_CHIP, else BCM57608. A name no
 * profile has (given, or in the environment) is a misuse: InvalidArgument naming the known ones.
 */
export function emuChip(
  name: string | undefined, env: Readonly<Record<string, string | undefined>> = process.env, where = 'software NIC',
): ChipProfile {
  const chosen = name ?? (env[CHIP_ENV] || undefined) ?? DEFAULT_EMU_CHIP;
  const profile = typeof chosen === 'string' ? chipByName(chosen) : undefined;
  if (!profile) {
    const from = name !== undefined ? 'chip' : CHIP_ENV;
    invalid(`${where}: ${from} ${JSON.stringify(chosen)} is not a known chip (one of ${chipNames().join(', ')})`);
  }
  return profile;
}

/**
 * The software NIC's IPv4 address made from a number (a UDP cable's local port, else a
 * per-process number, 1..65535): 10.77.HI.LO, the number's two bytes, so distinct numbers get
 * distinct addresses (ports 256 and 257 too: a rule that moved a last byte of 0 to 1 gave
 * them one address). 65535 would be 10.77.255.255, the broadcast address of 10.77.0.0/16,
 * which a Linux peer will not send to: it gets 10.78.0.1, outside the numbers' range.
 */
export function ipv4FromNumber(n: number): Uint8Array {
  if (!(Number.isInteger(n) && n >= 1 && n <= 0xffff))
    throw new RangeError(`software NIC address number ${n} is not in 1..65535`);
  return n === 0xffff ? Uint8Array.from([10, 78, 0, 1]) : Uint8Array.from([10, 77, n >> 8, n & 0xff]);
}

/** A locally administered MAC made from a number (02:...), unique per opened NIC in a process. */
export function macFromNumber(n: number): Uint8Array {
  return Uint8Array.from([0x02, 0x62, 0x6e, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
}
