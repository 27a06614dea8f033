/**
 * The fixed facts of the soft-RoCE guest (addresses, paths) and every time limit the harness
 * uses, in one place. The addresses exist only inside QEMU's simulated segments; the host side
 * uses nothing but 127.0.0.1 (see docs/interop.md, "The wiring").
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (scripts/interop/ is two levels down). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const DEFAULT_CACHE_DIR = join(REPO_ROOT, 'build', 'interop');
export const BUILD_SCRIPT = join(REPO_ROOT, 'scripts', 'interop', 'build-guest.sh');
export const KERNEL_FILE = 'vmlinuz';
export const INITRD_FILE = 'rxe-initrd.cpio.gz';

/** The guest's data NIC (the RoCE segment) and the rxe device on it. guest-init.sh uses the same values. */
export const GUEST_DATA_MAC = '52:54:00:77:00:01';
export const GUEST_CONTROL_MAC = '52:54:00:00:00:01';
export const GUEST_DATA_IP = '10.77.0.1';
/** The host's software NIC on the same segment (what the host command is told to be). */
export const HOST_DATA_IP = '10.77.0.2';
export const HOST_DATA_MAC = '02:62:6e:00:00:02';
export const DATA_MTU = 1500;
/** ibv_rc_pingpong -m: the RoCE path MTU (a 4096-byte send is FIRST + 2 x MIDDLE + LAST). */
export const PATH_MTU = 1024;
/** The TCP port ibv_rc_pingpong listens on inside the guest (its default). */
export const GUEST_PINGPONG_PORT = 18515;
/** Where slirp's guestfwd answers the guest when the guest is the TCP client. */
export const GUESTFWD_IP = '10.0.2.100';

/** Every wait the harness does has one of these bounds (TCG on 2 shared cores; measured values in README.md). */
export const Limits = {
  /**
   * QEMU start -> RXE-READY: measured 6.5-7 s on a quiet machine, 85 s at load average 24 on 2
   * cores (other suites beside this one), where 90 s was too little. A bound on a boot that
   * hangs, not an expectation.
   */
  readyMs: 300_000,
  /** RXE-READY -> RXE-JOB-START. */
  jobStartMs: 15_000,
  /** A step's start -> its RXE-STEP-WAIT (the guest server listens). */
  stepWaitMs: 30_000,
  /** A step's fixed allowance, plus perIterMs per pingpong iteration (measured 5-9 ms/iter). */
  stepBaseMs: 30_000,
  perIterMs: 25,
  /** After RXE-JOB-DONE, QEMU powers off by itself within this; then it is killed. */
  powerOffMs: 15_000,
  /** SIGTERM -> SIGKILL for QEMU and host commands. */
  killGraceMs: 2_000,
  /** How often the serial log file is read. */
  serialPollMs: 20,
  /** Output kept per host command (the tail). */
  hostOutputBytes: 256 * 1024,
} as const;

/** The time a pingpong of `iters` iterations may take, on the guest and on the host side. */
export function stepLimitMs(iters: number): number {
  return Limits.stepBaseMs + iters * Limits.perIterMs;
}
