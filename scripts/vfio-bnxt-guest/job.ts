/**
 * What the two guests of run.ts do, step by step: guest A's job (steps.sh's functions, through
 * scripts/interop/job-script.ts) and both guests' second jobs, against each other.
 */
import type { GuestStep } from '../interop/job-script.ts';
import { GUEST_IP as B_IP, GUEST_MAC as B_MAC } from '../bnxt-guest/run.ts';
import { GUEST_DEVICE } from './project-archive.ts';

export { GUEST_DEVICE };
/**
 * NIC A's MAC, and the IPv4 address rig-bnxt gives it without --ipv4 (10.<MAC bytes 3-5>,
 * lib/nic.ts): 10.77.0.4, on the segment's 10.77.0.0/24 with guest B (10.77.0.2) and the host's
 * NIC (10.77.0.3), so bnxt_re's route lookup for A's GID goes out of B's eth0.
 */
export const A_MAC = '02:62:6e:4d:00:04';
export const A_IP = '10.77.0.4';

/** The traffic steps against rig-bnxt on the host (the guest serves, the host connects). */
export const HOST_TRAFFIC: readonly GuestStep[] = [
  { kind: 'pingpong-server', id: 'pingpong', sizeBytes: 4096, iters: 5 },
  { kind: 'perftest-server', id: 'send_lat', test: 'send_lat', sizeBytes: 64, iters: 20 },
  { kind: 'perftest-server', id: 'send_bw', test: 'send_bw', sizeBytes: 65536, iters: 20 },
];

/**
 * read_lat's iterations and size. The spec serves reads only to queue pairs of the same NIC, so
 * read_lat has no peer on the cable: both sides run in the guest on NIC A (perf read_lat -d).
 */
export const READ_LAT = { sizeBytes: 64, iters: 20 } as const;

/** 2 MiB hugepages bind-vfio.sh reserves in the guest (its RAM is 1 GiB). */
export const HUGEPAGES = 16;

const command = (id: string, ...argv: string[]): GuestStep => ({ kind: 'command', id, argv });
const BIND = '/opt/rig-bnxt/scripts/bind-vfio.sh';

/**
 * Guest A's job: what a VFIO user meets before and after bind-vfio.sh, the README's API example
 * (its trace printed back), rig-bnxt probe, the traffic against the host, read_lat on the NIC
 * alone, the kernel log.
 */
export function guestSteps(): GuestStep[] {
  return [
    command('probe-unbound', 'refused', 'rig-bnxt', 'probe', GUEST_DEVICE),
    command('bind', 'bash', BIND, GUEST_DEVICE),
    command('bind-again', 'bash', BIND, GUEST_DEVICE),
    command('state', 'device_state'),
    // First on the NIC after its reset, as the in-process NIC it is compared with is new (same-trace.ts).
    command('api', 'api_example'),
    command('api-trace', 'print_file', '/tmp/api-trace.jsonl'),
    // 2 MiB hugepages from here on (README "Using a real NIC", step 2): buffers of 2 MiB or more.
    command('hugepages', 'bash', BIND, '--hugepages', String(HUGEPAGES)),
    command('transfers', 'transfer_check'),
    command('probe-nobody', 'refused', 'as_nobody', 'rig-bnxt', 'probe', GUEST_DEVICE),
    command('chown-nobody', 'own_group_node', 'nobody'),
    command('probe-nobody-owner', 'as_nobody', 'rig-bnxt', 'probe', GUEST_DEVICE),
    command('chown-root', 'own_group_node', 'root'),
    command('probe-list', 'rig-bnxt', 'probe'),
    command('probe', 'rig-bnxt', 'probe', GUEST_DEVICE, '-v'),
    ...HOST_TRAFFIC,
    command('read_lat', 'rig-bnxt', 'perf', 'read_lat', '-d', GUEST_DEVICE, '-s', String(READ_LAT.sizeBytes), '-n',
      String(READ_LAT.iters)),
    { kind: 'kernel-log', id: 'kernel-log' },
  ];
}

/** One exchange of the second jobs: the server's step, the client's, and the gate between them. */
export interface PeerRole {
  readonly id: string;
  /** Which guest serves: its step that listens, and the gate that lets the other's client go. */
  readonly serverIn: 'a' | 'b';
  readonly serverStep: string;
  readonly clientStep: string;
  readonly gate: string;
  readonly tool: 'pingpong' | 'send_lat';
  readonly sizeBytes: number;
  readonly iters: number;
}

/** rig-bnxt over VFIO serves ibv_rc_pingpong; bnxt_re's ib_send_lat serves rig-bnxt perf. */
export const PEER_STEPS: readonly PeerRole[] = [
  { id: 'pp', serverIn: 'a', serverStep: 'a-pp', clientStep: 'b-pp', gate: 'b-pp', tool: 'pingpong', sizeBytes: 4096,
    iters: 5 },
  { id: 'lat', serverIn: 'b', serverStep: 'b-lat', clientStep: 'a-lat', gate: 'a-lat', tool: 'send_lat',
    sizeBytes: 64, iters: 20 },
];

/** Seconds a second-job step may take in the guest (its timeout), on a loaded 2-core machine. */
const PEER_STEP_LIMIT_S = 240;

/**
 * The second jobs' texts: guest A's (steps.sh, prefix PEER-) and guest B's (the bnxt guest's
 * steps.sh; `gate` is defined in the job, as that image has none). `tcpA`/`tcpB`: the host ports
 * of each guest's hostfwd to its server port, which the other guest reaches at 10.0.2.2.
 */
export function peerJobs(o: { gatePort: number; tcpA: number; tcpB: number; payloadFile: string }): {
  a: string; b: string;
} {
  const a = [`add_peer ${B_IP} ${B_MAC}`, `PP_SERVER_PORT=${o.tcpB}`];
  const b = [
    `PT_PAYLOAD=${o.payloadFile}`, `PP_SERVER_PORT=${o.tcpA}`, `GATE_PORT=${o.gatePort}`,
    'gate() { n=0; while [ $n -lt 1200 ]; do',
    '  [ "$(echo "$1" | nc 10.0.2.2 "$GATE_PORT" 2>/dev/null)" = go ] && return 0; n=$((n + 1)); sleep 0.5; done',
    '  echo "BNXT-OUT gate $1 never opened"; return 1; }',
    `add_peer ${A_IP} ${A_MAC}`,
  ];
  for (const r of PEER_STEPS) {
    const server = r.tool === 'pingpong'
      ? `pp_server ${r.serverStep} ${r.sizeBytes} ${r.iters} ${PEER_STEP_LIMIT_S}`
      : `pt_server ${r.serverStep} ib_${r.tool} ${r.sizeBytes} ${r.iters} 1 ${PEER_STEP_LIMIT_S}`;
    const client = r.tool === 'pingpong'
      ? `pp_client ${r.clientStep} ${r.sizeBytes} ${r.iters} ${PEER_STEP_LIMIT_S} 10.0.2.2`
      : `pt_client ${r.clientStep} ib_${r.tool} ${r.sizeBytes} ${r.iters} 1 ${PEER_STEP_LIMIT_S} 10.0.2.2`;
    (r.serverIn === 'a' ? a : b).push(server);
    (r.serverIn === 'a' ? b : a).push(`gate ${r.gate} && ${client}`);
  }
  return { a: [...a, 'true', ''].join('\n'), b: [...b, 'true', ''].join('\n') };
}
