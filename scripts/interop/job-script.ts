/**
 * What a guest boot does, as a list of steps, and the shell script (sourced by guest-init.sh,
 * which defines the functions named here) that the guest runs for them. Sizes are run one after
 * another in one boot, each step starting only after the previous one ended (the doc's
 * pitfall 5: two exchanges must not overlap).
 */
import { GUESTFWD_IP, HOST_DATA_IP, HOST_DATA_MAC, stepLimitMs } from './guest-config.ts';

export type GuestStep =
  /** ibv_rc_pingpong server in the guest; the host command is the client (through hostfwd). */
  | { readonly kind: 'pingpong-server'; readonly id: string; readonly sizeBytes: number; readonly iters: number }
  /** ibv_rc_pingpong client in the guest, connecting through guestfwd; the host command is the server. */
  | { readonly kind: 'pingpong-client'; readonly id: string; readonly sizeBytes: number; readonly iters: number }
  /**
   * perftest's ib_send_lat / ib_send_bw as the server in the guest; the host's rig-bnxt perf is the
   * client. `qps` (send_bw only, default 1) is both sides' -q.
   */
  | {
    readonly kind: 'perftest-server'; readonly id: string; readonly test: PerftestTest; readonly sizeBytes: number;
    readonly iters: number; readonly qps?: number;
  }
  /** perftest as the client in the guest (through guestfwd); the host's rig-bnxt perf is the server. */
  | {
    readonly kind: 'perftest-client'; readonly id: string; readonly test: PerftestTest; readonly sizeBytes: number;
    readonly iters: number; readonly qps?: number;
  }
  /** Server and client both in the guest on rxe0 (no host side; rxe loops the packets back). */
  | { readonly kind: 'pingpong-loopback'; readonly id: string; readonly sizeBytes: number; readonly iters: number }
  /** Any guest command (e.g. ibv_devinfo), its output captured. */
  | { readonly kind: 'command'; readonly id: string; readonly argv: readonly string[] }
  /** A snapshot of rxe0's hardware counters. */
  | { readonly kind: 'counters'; readonly id: string }
  /** The kernel's rxe / ICRC messages. */
  | { readonly kind: 'kernel-log'; readonly id: string };

/** perftest's tests a step may run (rig-bnxt perf runs read_lat too: scripts/vfio-bnxt-guest). */
export type PerftestTest = 'send_lat' | 'send_bw' | 'read_lat';

export type PingpongStep = Extract<GuestStep, { kind: 'pingpong-server' | 'pingpong-client' | 'pingpong-loopback' }>;
export type PerftestStep = Extract<GuestStep, { kind: 'perftest-server' | 'perftest-client' }>;

/** Steps that need the host command to run while they wait. */
export function hostSide(step: GuestStep): 'client' | 'server' | null {
  if (step.kind === 'pingpong-server' || step.kind === 'perftest-server') return 'client';
  if (step.kind === 'pingpong-client' || step.kind === 'perftest-client') return 'server';
  return null;
}

export interface JobOptions {
  /** The host's software NIC on the data segment (default HOST_DATA_IP / HOST_DATA_MAC). */
  readonly peerIp?: string;
  readonly peerMac?: string;
  /**
   * ibv_rc_pingpong -e: sleep on completion events instead of busy-polling the CQ (default true).
   * Nothing changes on the wire, but on the guest's one TCG vCPU a polling process starves rxe's
   * own kernel work: measured 12 ms/iter polling against 0.45 ms (64 B) / 1.2 ms (4096 B) with -e.
   */
  readonly events?: boolean;
  /**
   * ibv_rc_pingpong -c: the guest checks received buffers. rc_pingpong's check only looks at the
   * first byte of each page, which its peer sets to 0 (only if the host command does the same).
   */
  readonly checkBuffer?: boolean;
  /** Where the guest's clients reach the host's server (default GUESTFWD_IP, slirp's guestfwd). */
  readonly serverAddress?: string;
  /** The port they connect to there (default the guest's own PP_PORT). */
  readonly serverPort?: number;
}

const ID = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}$/;
const SAFE_WORD = /^[A-Za-z0-9_./:=,+-]+$/;

/** Rejects what the guest's shell could misread; throws with the reason (a caller bug). */
export function checkSteps(steps: readonly GuestStep[]): void {
  const seen = new Set<string>();
  for (const step of steps) {
    if (!ID.test(step.id)) throw new Error(`step id "${step.id}": use letters, digits, _ . - (max 40)`);
    if (seen.has(step.id)) throw new Error(`step id "${step.id}" used twice`);
    seen.add(step.id);
    if ('qps' in step && step.qps !== undefined) {
      // perftest allows several QPs in bandwidth tests only ("Multiple QPs only available on bw tests").
      if (!Number.isInteger(step.qps) || step.qps < 1 || step.qps > 64)
        throw new Error(`step ${step.id}: qps ${step.qps} not in 1..64`);
      if (step.qps > 1 && step.test !== 'send_bw') throw new Error(`step ${step.id}: several QPs need send_bw`);
    }
    if ('sizeBytes' in step) {
      if (!Number.isInteger(step.sizeBytes) || step.sizeBytes < 1 || step.sizeBytes > 1 << 20)
        throw new Error(`step ${step.id}: size ${step.sizeBytes} not in 1..1048576`);
      if (!Number.isInteger(step.iters) || step.iters < 1 || step.iters > 1_000_000)
        throw new Error(`step ${step.id}: iters ${step.iters} not in 1..1000000`);
    }
    if (step.kind === 'command') {
      if (step.argv.length === 0) throw new Error(`step ${step.id}: empty command`);
      for (const word of step.argv)
        if (!SAFE_WORD.test(word))
          throw new Error(`step ${step.id}: argument "${word}" has characters the job script does not quote`);
    }
  }
}

/** The job script text for `steps`. */
export function jobScript(steps: readonly GuestStep[], options: JobOptions = {}): string {
  checkSteps(steps);
  const peerIp = options.peerIp ?? HOST_DATA_IP;
  const peerMac = options.peerMac ?? HOST_DATA_MAC;
  const server = options.serverAddress ?? GUESTFWD_IP;
  if (!SAFE_WORD.test(peerIp) || !SAFE_WORD.test(peerMac) || !SAFE_WORD.test(server))
    throw new Error('peer address has unexpected characters');
  if (options.serverPort !== undefined &&
    (!Number.isInteger(options.serverPort) || options.serverPort < 1 || options.serverPort > 65535))
      throw new Error(`server port ${options.serverPort} is not 1..65535`);
  const flags =
    [options.events === false ? '' : '-e', options.checkBuffer === true ? '-c' : ''].filter((f) => f !== '').join(' ');
  const lines = [
    '# written by scripts/interop/job-script.ts; sourced by guest-init.sh',
    `PP_FLAGS="${flags}"`,
    ...(options.serverPort !== undefined ? [`PP_SERVER_PORT=${options.serverPort}`] : []),
    `add_peer ${peerIp} ${peerMac}`,
  ];
  for (const step of steps) {
    switch (step.kind) {
      case 'pingpong-server':
      case 'pingpong-loopback':
      case 'pingpong-client': {
        const fn =
          { 'pingpong-server': 'pp_server', 'pingpong-client': 'pp_client',
          'pingpong-loopback': 'pp_loopback' }[step.kind];
        const limitS = Math.ceil(stepLimitMs(step.iters) / 1000);
        lines.push(
          `${fn} ${step.id} ${step.sizeBytes} ${step.iters} ` +
            `${limitS}${step.kind === 'pingpong-client' ? ` ${server}` : ''}`,
        );
        break;
      }
      case 'perftest-server':
      case 'perftest-client': {
        if (step.test !== 'send_lat' && step.test !== 'send_bw' && step.test !== 'read_lat')
          throw new Error(`step ${step.id}: perftest test ${String(step.test)}`);
        const limitS = Math.ceil(stepLimitMs(step.iters) / 1000);
        const fn = step.kind === 'perftest-server' ? 'pt_server' : 'pt_client';
        const qps = step.qps ?? 1;
        const at = step.kind === 'perftest-client' ? ` ${server}` : '';
        lines.push(`${fn} ${step.id} ib_${step.test} ${step.sizeBytes} ${step.iters} ${qps} ${limitS}${at}`);
        break;
      }
      case 'command':
        lines.push(`run_cmd ${step.id} ${step.argv.join(' ')}`);
        break;
      case 'counters':
        lines.push(`counters ${step.id}`);
        break;
      case 'kernel-log':
        lines.push(`kernel_log ${step.id}`);
        break;
    }
  }
  // The job's status is 0 (each step reports its own status).
  lines.push('true', '');
  return lines.join('\n');
}
