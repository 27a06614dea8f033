/**
 * Boots the bnxt guest once against a software NIC served over vfio-user and reports what
 * happened: the HWRM commands bnxt_en sent (in order, with the model's answers), the guest's
 * markers and its bnxt log. Never throws for a failed boot: the failure is in the report.
 *
 * node --import ./scripts/register-ts.mjs scripts/bnxt-guest/run.ts [--re] [--rc-loopback] [--ping] [--host-peer]
 * [--wait S] [--plain-ram]
 *
 * --plain-ram: guest RAM without an fd (plain -m), so the model's DMA goes through vfio-user's
 * in-band DMA_READ/DMA_WRITE (docs/vfio-user.md).
 *
 * --host-peer: after its own tests the guest runs ibv_rc_pingpong and ib_send_lat on bnxt_re0
 * against rig-bnxt pingpong / perf on the host, both roles (host-peer.ts).
 *
 * Needs the cache built by build.sh (default /var/cache/rig-bnxt/bnxt-guest) and root (the
 * chroot QEMU runs in; a private mount namespace, so nothing is left mounted).
 */
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import {
  existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync, copyFileSync, linkSync, readdirSync, rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { serveVfioUser, type HwrmObservation } from '../../drivers/emu/host/vfio-user/index.ts';
import { macFromNumber } from '../../drivers/emu/model/config.ts';
import type { CableSpec } from '../../drivers/emu/model/cable/port-cable.ts';
import { startL2Peer } from './l2-peer.ts';
import { startTcpRelay } from './tcp-relay.ts';
import { driveHostPeer, peerStepResults, HOST_NIC, type PeerStepResult } from './host-peer.ts';
import { freeTcpPort, freeUdpPort } from '../interop/free-ports.ts';
import { jobScript, type GuestStep } from '../interop/job-script.ts';
import { SerialFollower } from '../interop/serial-follow.ts';
import { SerialTranscript } from '../interop/serial-transcript.ts';
import type { HostRun } from '../interop/run-guest.ts';
import { BNXT_GUEST_CHIP } from './guest-chip.ts';

const PEER_MAC = Uint8Array.from([0x02, 0x62, 0x6e, 0x00, 0x99, 0x01]);
const PEER_IP = Uint8Array.from([10, 77, 0, 9]);
/** The served NIC's MAC and the guest's address on its port. */
export const GUEST_MAC = '02:62:6e:00:50:01';
export const GUEST_IP = '10.77.0.2';
/** The guest's control NIC (QEMU user networking); init.sh finds it by this MAC. */
const CONTROL_MAC = '52:54:00:00:00:01';
/**
 * What the guest's perftest sends, so that a capture can check its messages byte for byte (perftest
 * fills its buffer with random words otherwise, from /dev/urandom: perftest_resources.c
 * init_perftest_rand_state): 64 different bytes, repeated to the message size. steps.sh hands them
 * to perftest as --payload_file_path, whose format is create_payload's: comma-separated DWORDs
 * "0xDDCCBBAA", bytes AA BB CC DD in buffer order.
 */
export const GUEST_PERFTEST_PAYLOAD = Uint8Array.from({ length: 64 }, (_, i) => (i * 29 + 0x47) & 0xff);

/** The bytes of one guest perftest message of `size` bytes. */
export function guestPerftestMessage(size: number): Uint8Array {
  return Uint8Array.from({ length: size }, (_, i) => GUEST_PERFTEST_PAYLOAD[i % GUEST_PERFTEST_PAYLOAD.length]!);
}

/** GUEST_PERFTEST_PAYLOAD in perftest's payload-file format. */
export function perftestPayloadFile(): string {
  const words: string[] = [];
  const p = GUEST_PERFTEST_PAYLOAD;
  for (let i = 0; i < p.length; i += 4) {
    words.push(`0x${[p[i + 3]!, p[i + 2]!, p[i + 1]!, p[i]!].map((b) => b.toString(16).padStart(2, '0')).join('')}`);
  }
  return words.join(',');
}

/** ibv_rc_pingpong's and perftest's port in the guest (steps.sh PP_PORT). */
const GUEST_SERVER_PORT = 18515;

export const DEFAULT_CACHE = process.env.RIG_BNXT_GUEST_CACHE ?? '/var/cache/rig-bnxt/bnxt-guest';
const BUILD_SCRIPT = fileURLToPath(new URL('./build.sh', import.meta.url));

/**
 * Builds (or finds up to date) the guest image of this work tree's scripts: build.sh keys each
 * image by what it was built from and names its folder on its last line.
 */
export function buildGuest(cacheDir: string = DEFAULT_CACHE): Result<string> {
  const build = spawnSync(BUILD_SCRIPT, [cacheDir], { encoding: 'utf8', timeout: 900_000 });
  const image = /^image: (.+)$/m.exec(build.stdout ?? '')?.[1];
  if (build.status !== 0 || image === undefined)
    return err(
      `scripts/bnxt-guest/build.sh failed ` +
        `(${build.error?.message ?? `exit ${build.status}`}):\n${build.stdout ?? ''}\n${build.stderr ?? ''}`,
    );
  return ok(image);
}

export interface GuestRunOptions {
  readonly cacheDir?: string;
  /** The image folder to boot (buildGuest's); built from this work tree when absent. */
  readonly imageDir?: string;
  /** The chip the served NIC is (default BNXT_GUEST_CHIP). */
  readonly chip?: string;
  /**
   * Guest RAM without an fd (plain -m instead of a shared memfd backend): every model access
   * goes through vfio-user's in-band DMA_READ/DMA_WRITE (docs/vfio-user.md). Default false.
   */
  readonly plainRam?: boolean;
  readonly bnxtRe?: boolean;
  /** ibv_rc_pingpong server and client in the guest, through the model's port (it delivers its own frames). */
  readonly rcLoopback?: boolean;
  /** Cable the NIC (UDP) to an ARP/ICMP peer at 10.77.0.9 and ping it from the guest. */
  readonly ping?: boolean;
  /**
   * Then these job steps against rig-bnxt on the host (host-peer.ts): a second software NIC
   * on the far end of the served NIC's cable, a control NIC for the TCP exchanges.
   */
  readonly hostSteps?: readonly GuestStep[];
  /**
   * Drop the first frame the served NIC sends with this BTH opcode (engine.dropFrames): the
   * guest's requester must then resend from its own SQ tables (PSN search, or the MSN table on P7).
   */
  readonly dropFirstTxOpcode?: number;
  /** Seconds the guest waits for the netdev (default 20). */
  readonly waitS?: number;
  /** Whole-run limit in ms (default 240 s). */
  readonly limitMs?: number;
  readonly log?: (line: string) => void;
}

export interface GuestRunReport {
  readonly hwrm: readonly HwrmObservation[];
  readonly serial: string;
  readonly markers: readonly string[];
  readonly serverLog: readonly string[];
  readonly endReason: string;
  readonly qemuExit: number | null;
  readonly timedOut: boolean;
  readonly workDir: string;
  /** With `ping`: echo requests the peer answered. */
  readonly peerEchoes: number;
  /** With `hostSteps`: each step's outcome, and the first failure of the job (null: none). */
  readonly hostSteps: readonly PeerStepResult[];
  readonly hostFailure: string | null;
  /** The served NIC's port capture (both directions) and the decoded command trace. */
  readonly pcapPath: string;
  readonly tracePath: string;
  /** The served model's engine counters at the end (engine.counters), or the reason there are none. */
  readonly counters: Record<string, number> | string;
}

/** Run folders kept in the cache (the newest); older ones are removed when a run starts. */
const KEEP_RUNS = 5;

function pruneRuns(dir: string, keep: number): void {
  const runs =
    readdirSync(dir).filter((n) => n.startsWith('run-')).map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs })).sort(
      (a, b) => b.t - a.t,
    );
  for (const r of runs.slice(keep)) rmSync(join(dir, r.n), { recursive: true, force: true });
}

/** The images (built if needed) hard-linked into a fresh run folder; old run folders pruned. */
function prepareRun(o: GuestRunOptions): { chroot: string; work: string } {
  const cache = o.cacheDir ?? DEFAULT_CACHE;
  const chroot = join(cache, 'chroot');
  let imageDir = o.imageDir;
  if (imageDir === undefined) {
    const built = buildGuest(cache);
    if (!built.ok) throw new Error(built.error);
    imageDir = built.value;
  }
  for (const f of [
    join(imageDir, 'vmlinuz'), join(imageDir, 'initrd.cpio.gz'), join(chroot, 'usr/bin/qemu-system-x86_64'),
  ]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: run scripts/bnxt-guest/build.sh`);
  }
  mkdirSync(join(cache, 'runs'), { recursive: true });
  pruneRuns(join(cache, 'runs'), KEEP_RUNS - 1);
  const work = mkdtempSync(join(cache, 'runs', 'run-'));
  // Hard links (same file system): a run folder costs no copy of the 23 MB images, and holds
  // its files even when the image folder is pruned.
  for (const f of ['vmlinuz', 'initrd.cpio.gz']) {
    try { linkSync(join(imageDir, f), join(work, f)); } catch { copyFileSync(join(imageDir, f), join(work, f)); }
  }
  return { chroot, work };
}

/** QEMU's command line (paths as the chroot sees the run folder: /share). */
export function qemuArgv(o: GuestRunOptions, withHost: boolean, tcpPort: number): string[] {
  // no_timer_check: under TCG on a loaded host the kernel's IO-APIC timer check can miss its
  // ticks and panic ("IO-APIC + timer doesn't work!"), as scripts/vfio-guest/boot.sh notes.
  const append = [
    `console=ttyS0`, 'panic=-1', 'loglevel=7', 'no_timer_check', `WAIT=${o.waitS ?? 20}`,
    o.bnxtRe || o.rcLoopback || withHost ? 'BNXT_RE=1' : '', o.rcLoopback ? 'RC_LOOPBACK=1' : '',
    o.rcLoopback || o.ping || withHost ? `GUEST_IP=${GUEST_IP}` : '', o.ping ? 'PEER_IP=10.77.0.9' : '',
  ].join(' ');
  const qemu = [
    'qemu-system-x86_64', '-accel', 'tcg', '-cpu', 'max', '-m', '512', '-smp', '1', '-nodefaults', '-no-user-config',
    '-display', 'none', '-no-reboot',
    ...(o.plainRam === true ? ['-machine', 'q35']
      : ['-object', 'memory-backend-memfd,id=mem,size=512M,share=on', '-machine', 'q35,memory-backend=mem']),
    '-kernel', '/share/vmlinuz', '-initrd', '/share/initrd.cpio.gz', '-append', append,
    // Behind a PCIe root port, so the guest sees a PCIe endpoint with extended config space (DSN).
    '-device', 'pcie-root-port,id=rp0,chassis=1,slot=0',
    '-device',
    JSON.stringify({
      driver: 'vfio-user-pci', socket: { type: 'unix', path: '/share/bnxt.sock' }, bus: 'rp0', addr: '00.0',
    }), '-serial', 'file:/share/serial.log', '-monitor', 'none',
  ];
  if (withHost) {
    // The control NIC: the host reaches the guest's servers through hostfwd; the guest reaches the
    // host's at 10.0.2.2 (slirp's host address is the host's 127.0.0.1, which restrict=on would
    // forbid), through the relay. The guest has no default route: nothing beyond 10.0.2.0/24.
    const netdev = `user,id=ctl,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:${tcpPort}-:${GUEST_SERVER_PORT}`;
    qemu.push('-netdev', netdev, '-device', `virtio-net-pci,netdev=ctl,mac=${CONTROL_MAC}`);
    qemu.push('-fw_cfg', 'name=opt/rig/job,file=/share/job.sh');
  }
  return qemu;
}

/** QEMU in the chroot, in a private mount namespace: its /proc, /dev and the run folder vanish with it. */
export function spawnQemu(chroot: string, work: string, qemu: readonly string[]) {
  const script = 'set -e; C=$1; W=$2; shift 2; mount -t proc proc "$C/proc"; mount --bind /dev "$C/dev"; '
    + 'mount --bind /sys "$C/sys"; mount --bind "$W" "$C/share"; exec chroot "$C" "$@"';
  const argv = ['--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', chroot, work, ...qemu];
  return spawn('unshare', argv, { stdio: ['ignore', 'pipe', 'pipe'] });
}

export async function runGuest(o: GuestRunOptions = {}): Promise<GuestRunReport> {
  const { chroot, work } = prepareRun(o);
  const socketPath = join(work, 'bnxt.sock');
  const serverLog: string[] = [];
  const log = o.log ?? (() => {});
  const steps = o.hostSteps ?? [];
  const withHost = steps.length > 0;
  // The far end of the NIC's UDP cable: the ping peer, and (with host steps) the host NIC's way in.
  const nicPort = o.ping || withHost ? await freeUdpPort() : 0;
  const hostPort = withHost ? await freeUdpPort() : 0;
  const peer = o.ping || withHost
    ? await startL2Peer({
      mac: PEER_MAC, ip: PEER_IP, nicPort: () => nicPort, port: await freeUdpPort(),
      passPort: withHost ? hostPort : undefined,
    }) : undefined;
  const tcpPort = withHost ? await freeTcpPort() : 0;
  const serverPort = withHost ? await freeTcpPort() : 0;
  const relay = withHost ? await startTcpRelay(await freeTcpPort(), serverPort) : undefined;
  const relayPort = relay?.port ?? 0;
  const cable: CableSpec = peer ? { kind: 'udp', localPort: nicPort, remotePort: peer.port } : { kind: 'loop' };
  const pcapPath = join(work, 'port.pcap');
  const tracePath = join(work, 'trace.jsonl');
  const started = await serveVfioUser({
    socketPath,
    tracePath,
    config: {
      mac: macFromNumber(0x5001), ipv4: Uint8Array.from([10, 77, 0, 2]), mtu: 1500, cable, pcapPath, seed: 1,
      mode: 'thread', chip: o.chip ?? BNXT_GUEST_CHIP,
    },
    verbose: true,
    onEvent: (e) => {
      if (e.kind === 'log') { serverLog.push(e.line); log(`server: ${e.line}`); }
      if (e.kind === 'model-failed') {
        serverLog.push(`MODEL FAILED in ${e.part}: ${e.detail}`);
        log(`server: the model failed in ${e.part}: ${e.detail}`);
      }
      if (e.kind === 'hwrm') log(`hwrm: ${e.name} seq ${e.seqId} -> ${e.errorCode}`);
    },
  });
  if (!started.ok) throw new Error(started.error);
  const server = started.value;
  if (o.dropFirstTxOpcode !== undefined) await server.control('engine.dropFrames', 'tx', o.dropFirstTxOpcode, -1, 1);
  if (withHost) {
    writeFileSync(join(work, 'job.sh'), `PT_PAYLOAD=${perftestPayloadFile()}\n` + jobScript(steps, {
      peerIp: HOST_NIC.ip, peerMac: HOST_NIC.mac, events: false, serverAddress: '10.0.2.2', serverPort: relayPort,
    }));
  }
  const child = spawnQemu(chroot, work, qemuArgv(o, withHost, tcpPort));
  let qemuOut = '';
  child.stdout.on('data', (d) => { qemuOut += d; });
  child.stderr.on('data', (d) => { qemuOut += d; });
  let timedOut = false;
  const limitMs = o.limitMs ?? 240_000;
  const limit = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, limitMs);
  let qemuGone = false;
  const qemuExited = new Promise<number | null>((r) => child.on('exit', (code) => { qemuGone = true; r(code); }));
  const serialPath = join(work, 'serial.log');
  let host: { failure: string | null; hostRuns: Map<string, HostRun> } = { failure: null, hostRuns: new Map() };
  const follower = new SerialFollower(serialPath, new SerialTranscript('BNXT-'));
  if (withHost) {
    host = await driveHostPeer({
      follower, steps, ports: { hostPort, farPort: peer!.port, tcpPort, serverPort }, guestIp: GUEST_IP,
      guestMac: GUEST_MAC, workDir: work, jobStartMs: limitMs, log,
      abort: () => (qemuGone ? `QEMU exited (see ${join(work, 'qemu.out')})` : null),
    });
  }
  const qemuExit = await qemuExited;
  clearTimeout(limit);
  follower.close();
  await server.close();
  const { reason, stats } = await server.ended;
  // The counters come with the end (the server ends when QEMU leaves, so no control is answered then).
  const counters = stats?.engineCounters ?? `no engine counters: the server ended (${reason}) without stats`;
  const peerEchoes = peer?.echoesAnswered() ?? 0;
  peer?.close();
  await relay?.close();
  const serial = existsSync(serialPath) ? readFileSync(serialPath, 'utf8') : '';
  writeFileSync(join(work, 'qemu.out'), qemuOut);
  writeFileSync(join(work, 'hwrm.txt'),
    server.hwrm.map((h) => `${h.name} seq ${h.seqId} -> ${h.errorCode}`).join('\n') + '\n');
  writeFileSync(join(work, 'server.log'), serverLog.join('\n') + '\n');
  const markers = serial.split('\n').filter((l) => l.startsWith('BNXT-GUEST')).map((l) => l.trim());
  return {
    peerEchoes, hwrm: server.hwrm, serial: serial + (qemuOut ? `\n--- qemu ---\n${qemuOut}` : ''), markers, serverLog,
    endReason: reason, qemuExit, timedOut, workDir: work,
    hostSteps: peerStepResults(steps, follower.transcript, host.hostRuns), hostFailure: host.failure, pcapPath,
    tracePath, counters,
  };
}

/** What `--host-peer` runs: ibv_rc_pingpong and ib_send_lat against rig-bnxt, the guest as server and as client. */
export const HOST_PEER_STEPS: readonly GuestStep[] = [
  { kind: 'pingpong-server', id: 'pp-gs', sizeBytes: 64, iters: 5 },
  { kind: 'pingpong-server', id: 'pp4k-gs', sizeBytes: 4096, iters: 5 },
  { kind: 'pingpong-client', id: 'pp-gc', sizeBytes: 64, iters: 5 },
  { kind: 'perftest-server', id: 'lat-gs', test: 'send_lat', sizeBytes: 64, iters: 20 },
  { kind: 'perftest-client', id: 'lat-gc', test: 'send_lat', sizeBytes: 64, iters: 20 },
];

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const waitAt = args.indexOf('--wait');
  const chipAt = args.indexOf('--chip');
  const report = await runGuest({
    chip: chipAt >= 0 ? args[chipAt + 1] : undefined, plainRam: args.includes('--plain-ram'),
    bnxtRe: args.includes('--re'), rcLoopback: args.includes('--rc-loopback'), ping: args.includes('--ping'),
    hostSteps: args.includes('--host-peer') ? HOST_PEER_STEPS : undefined,
    waitS: waitAt >= 0 ? Number(args[waitAt + 1]) : undefined, log: (l) => console.log(l),
  });
  for (const s of report.hostSteps)
    console.log(
      `${s.step.id}: guest ${s.status}, host ${s.host?.exitCode ?? '-'}` +
        `${s.pingpong ? `, ${s.pingpong.iters} iters` : ''}` +
        `${s.perftest ? `, ${s.perftest.iterations} x ${s.perftest.sizeBytes} B` : ''}`,
    );
  if (report.hostFailure !== null) console.log(`host peer: ${report.hostFailure}`);
  console.log(report.serial.split('\n').filter((l) => /bnxt|BNXT|14e4|00:04|Error|error|warn/i.test(l)).join('\n'));
  console.log(
    `end: ${report.endReason}; qemu exit ${report.qemuExit}${report.timedOut ? ' (timed out)' : ''}; run folder ` +
      `${report.workDir}`,
  );
}
