/**
 * rig-bnxt's own driver through a real kernel's VFIO, on the served software NIC: boots the VFIO
 * bnxt guest (build.sh: a q35 guest with an Intel virtual IOMMU, Debian's kernel and Node.js) with
 * NIC A served over vfio-user at 00:04.0, and beside it the bnxt guest (scripts/bnxt-guest) whose
 * bnxt_en and bnxt_re drive NIC B, the two NICs and a third one of rig-bnxt on the host on one
 * Ethernet segment (segment.ts). In guest A, the job (steps.sh) binds NIC A to vfio-pci with
 * scripts/bind-vfio.sh, runs rig-bnxt probe, the README's API example with its driver trace, and
 * rig-bnxt pingpong and perf against rig-bnxt on the host (scripts/bnxt-guest/host-peer.ts drives
 * the host's side); its second job runs rig-bnxt pingpong and perf against guest B's
 * ibv_rc_pingpong and ib_send_lat, each client let go (gates.ts) once the other guest's server
 * listens. Never throws for a failed run: the failure is in the report.
 *
 * node --import ./scripts/register-ts.mjs scripts/vfio-bnxt-guest/run.ts [--chip BCM57508]
 *
 * Needs root (the chroot QEMU runs in, as scripts/bnxt-guest/run.ts) and the images build.sh makes.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { serveVfioUser, type VfioUserServer, type ServerStats } from '../../drivers/emu/host/vfio-user/index.ts';
import type { CableSpec } from '../../drivers/emu/model/cable/port-cable.ts';
import { parseMac } from '../../drivers/emu/model/wire/addresses.ts';
import { qemuArgv, spawnQemu, perftestPayloadFile, GUEST_IP as B_IP, GUEST_MAC as B_MAC } from '../bnxt-guest/run.ts';
import {
  driveHostPeer, peerStepResults, sourceTemplates, HOST_NIC, type PeerStepResult,
} from '../bnxt-guest/host-peer.ts';
import type { HostTemplates } from '../interop/host-command.ts';
import { freeTcpPort, freeUdpPort } from '../interop/free-ports.ts';
import { jobScript, type GuestStep } from '../interop/job-script.ts';
import { SerialFollower } from '../interop/serial-follow.ts';
import { SerialTranscript } from '../interop/serial-transcript.ts';
import { startSegment } from './segment.ts';
import { startGates } from './gates.ts';
import { apiExample, appendProject, stageProject } from './project-archive.ts';
import { GUEST_DEVICE, A_MAC, A_IP, PEER_STEPS, guestSteps, peerJobs, type PeerRole } from './job.ts';

export const DEFAULT_CACHE = process.env.RIG_BNXT_GUEST_CACHE ?? '/var/cache/rig-bnxt/bnxt-guest';
const BUILD_SCRIPT = fileURLToPath(new URL('./build.sh', import.meta.url));
/** The control NIC's MAC (init.sh finds it by this; the bnxt guest's is the same). */
const CONTROL_MAC = '52:54:00:00:00:01';
/** Guest port of the servers of pingpong and perf (steps.sh PP_PORT). */
const GUEST_SERVER_PORT = 18515;

export interface Images {
  /** This guest's image folder and the bnxt guest's (build.sh's last two lines). */
  readonly vfio: string;
  readonly bnxt: string;
}

/** Builds (or finds up to date) both images of this work tree's scripts. */
export function buildImages(cacheDir: string = DEFAULT_CACHE): Result<Images> {
  const build = spawnSync(BUILD_SCRIPT, [cacheDir], { encoding: 'utf8', timeout: 1_500_000 });
  const vfio = /^image: (.+)$/m.exec(build.stdout ?? '')?.[1];
  const bnxt = /^bnxt-image: (.+)$/m.exec(build.stdout ?? '')?.[1];
  if (build.status !== 0 || vfio === undefined || bnxt === undefined)
    return err(`scripts/vfio-bnxt-guest/build.sh failed (${build.error?.message ?? `exit ${build.status}`}):\n` +
      `${build.stdout ?? ''}\n${build.stderr ?? ''}`);
  return ok({ vfio, bnxt });
}

export interface VfioGuestOptions {
  readonly images: Images;
  readonly cacheDir?: string;
  /** The chip both served NICs are (default the software NIC's default, BCM57608). */
  readonly chip?: string;
  /** Whole-run limit in ms (default 900 s). */
  readonly limitMs?: number;
  readonly log?: (line: string) => void;
}

/** One guest's boot as the host saw it. */
export interface GuestBoot {
  readonly serial: string;
  readonly qemuExit: number | null;
  readonly timedOut: boolean;
  readonly qemuOutput: string;
}

/** One served NIC. */
export interface ServedNic {
  readonly endReason: string;
  readonly stats: ServerStats | undefined;
  readonly hwrm: VfioUserServer['hwrm'];
  readonly pcapPath: string;
  readonly tracePath: string;
  readonly log: readonly string[];
}

export interface VfioGuestReport {
  readonly workDir: string;
  readonly a: GuestBoot & { readonly job: SerialTranscript; readonly peerJob: SerialTranscript };
  readonly b: GuestBoot & { readonly job: SerialTranscript };
  readonly nicA: ServedNic;
  readonly nicB: ServedNic;
  /** Guest A's job steps against rig-bnxt on the host, each with its host run. */
  readonly hostSteps: readonly PeerStepResult[];
  readonly hostFailure: string | null;
  /** The first failure of the two guests' second jobs (null: none). */
  readonly peerFailure: string | null;
  readonly gatesOpened: readonly string[];
  /** Wall time of the run, from the first QEMU start to the last exit. */
  readonly durationMs: number;
}

/** A run folder for one guest: its kernel and initrd linked in (a copy across file systems). */
function guestFolder(parent: string, name: string, image: string, files: readonly string[]): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  for (const f of files) {
    try { linkSync(join(image, f), join(dir, f)); } catch { copyFileSync(join(image, f), join(dir, f)); }
  }
  return dir;
}

/** Guest A's QEMU: q35 with the Intel vIOMMU (interrupt remapping, caching mode: docs/vfio-user.md). */
function qemuArgvA(tcpPort: number): string[] {
  return [
    'qemu-system-x86_64', '-accel', 'tcg', '-cpu', 'max', '-m', '1024', '-smp', '1', '-nodefaults', '-no-user-config',
    '-display', 'none', '-no-reboot',
    '-object', 'memory-backend-memfd,id=mem,size=1024M,share=on',
    '-machine', 'q35,kernel-irqchip=split,memory-backend=mem', '-device', 'intel-iommu,intremap=on,caching-mode=on',
    '-kernel', '/share/vmlinuz', '-initrd', '/share/initrd.cpio',
    // loglevel=3: kernel messages stay off the console (they could split a marker line); the job
    // reads them with dmesg. no_timer_check: see scripts/vfio-guest/boot.sh.
    '-append', 'console=ttyS0 panic=-1 loglevel=3 no_timer_check intel_iommu=on',
    '-netdev', `user,id=ctl,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:${tcpPort}-:${GUEST_SERVER_PORT}`,
    '-device', `virtio-net-pci,netdev=ctl,mac=${CONTROL_MAC},romfile=,addr=03.0`,
    '-device', JSON.stringify({
      driver: 'vfio-user-pci', socket: { type: 'unix', path: '/share/vfu.sock' }, addr: GUEST_DEVICE.slice(8),
    }),
    '-serial', 'file:/share/serial.log', '-monitor', 'none',
  ];
}

/**
 * The host's command lines (from this tree's sources), the pingpong client with -c: it sends a
 * fresh pattern each time and checks that what comes back is that message, so the guest's echo
 * (rig-bnxt pingpong's, as rc_pingpong's) is checked by the host too, not only in the capture.
 */
function hostTemplatesChecked(): HostTemplates {
  const t = sourceTemplates();
  if (!t.client.endsWith(' 127.0.0.1')) throw new Error(`unexpected pingpong client template: ${t.client}`);
  return { ...t, client: `${t.client.slice(0, -' 127.0.0.1'.length)} -c 127.0.0.1` };
}

interface Served {
  readonly server: VfioUserServer;
  readonly log: string[];
  readonly pcapPath: string;
  readonly tracePath: string;
}

async function serveNic(
  dir: string, socket: string, mac: string, ipv4: string, cable: CableSpec, chip: string | undefined,
  log: (line: string) => void, name: string,
): Promise<Served> {
  const lines: string[] = [];
  const pcapPath = join(dir, 'port.pcap');
  const tracePath = join(dir, 'trace.jsonl');
  const started = await serveVfioUser({
    socketPath: join(dir, socket), tracePath,
    config: {
      mac: parseMac(mac)!, ipv4: Uint8Array.from(ipv4.split('.').map(Number)), mtu: 1500, cable, pcapPath, seed: 1,
      mode: 'thread', ...(chip !== undefined ? { chip } : {}),
    },
    verbose: true,
    onEvent: (e) => {
      if (e.kind === 'log') { lines.push(e.line); log(`${name}: ${e.line}`); }
      if (e.kind === 'model-failed') lines.push(`MODEL FAILED in ${e.part}: ${e.detail}`);
    },
  });
  if (!started.ok) throw new Error(`${name}: ${started.error}`);
  return { server: started.value, log: lines, pcapPath, tracePath };
}

interface Qemu {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  gone: boolean;
  timedOut: boolean;
  output: string;
}

function startQemu(chroot: string, dir: string, argv: readonly string[], limitMs: number): Qemu {
  const child = spawnQemu(chroot, dir, argv);
  const q: Qemu = { child, gone: false, timedOut: false, output: '', exited: undefined as never };
  child.stdout.on('data', (d) => { q.output += d; });
  child.stderr.on('data', (d) => { q.output += d; });
  const limit = setTimeout(() => { q.timedOut = true; child.kill('SIGKILL'); }, limitMs);
  (q as { exited: Promise<number | null> }).exited = new Promise((r) => child.on('exit', (code) => {
    clearTimeout(limit);
    q.gone = true;
    r(code);
  }));
  return q;
}

/**
 * The second jobs: each guest's client waits at its gate, opened once the other guest's server
 * listens; resolves with the first failure (or null) once both jobs are done.
 */
async function drivePeerPhase(
  a: SerialFollower, b: SerialFollower, roles: readonly PeerRole[], open: (gate: string) => void,
  abort: { a: () => string | null; b: () => string | null }, limitMs: number,
): Promise<string | null> {
  const either = () => abort.a() ?? abort.b();
  for (const r of roles) {
    const server = r.serverIn === 'a' ? a : b;
    const ready = await server.waitFor((x) => x.steps.get(r.serverStep)?.waiting === true ||
      x.steps.get(r.serverStep)?.status != null, limitMs, `${r.serverStep} to listen`, either);
    if (!ready.ok) return ready.reason;
    open(r.gate);
  }
  // Each guest ends on its own: one that powered off after its job is no failure of the other's.
  for (const [f, name, gone] of [[a, 'guest A', abort.a], [b, 'guest B', abort.b]] as const) {
    const done = await f.waitFor((x) => x.jobStatus !== null, limitMs, `${name}'s second job to end`, gone);
    if (!done.ok) return done.reason;
  }
  return null;
}

/** Guest A's initrd (the image and the project, with both jobs) and guest B's job; returns A's job steps. */
function stageGuests(
  images: Images, dirA: string, dirB: string, ports: { gate: number; tcpA: number; tcpB: number },
): GuestStep[] {
  const steps = guestSteps();
  const payloadFile = perftestPayloadFile();
  const jobs = peerJobs({ gatePort: ports.gate, tcpA: ports.tcpA, tcpB: ports.tcpB, payloadFile });
  const job = `NIC_IP=${A_IP}\nGATE_PORT=${ports.gate}\n` +
    jobScript(steps, { peerIp: HOST_NIC.ip, peerMac: HOST_NIC.mac, events: false });
  const staged = stageProject(dirA, { job, peerJob: jobs.a, apiExample: apiExample(GUEST_DEVICE) });
  if (!staged.ok) throw new Error(staged.error);
  const appended = appendProject(join(images.vfio, 'initrd.cpio.gz'), staged.value, join(dirA, 'initrd.cpio'));
  if (!appended.ok) throw new Error(appended.error);
  writeFileSync(join(dirB, 'job.sh'), jobs.b);
  return steps;
}

/** Closes a served NIC (its guest is gone) and reports how it ended. */
async function endServed(n: Served): Promise<ServedNic> {
  await n.server.close();
  const { reason, stats } = await n.server.ended;
  return { endReason: reason, stats, hwrm: n.server.hwrm, pcapPath: n.pcapPath, tracePath: n.tracePath, log: n.log };
}

function bootReport(dir: string, q: Qemu, exit: number | null): GuestBoot {
  writeFileSync(join(dir, 'qemu.out'), q.output);
  const serialPath = join(dir, 'serial.log');
  const serial = existsSync(serialPath) ? readFileSync(serialPath, 'latin1') : '';
  return { serial, qemuExit: exit, timedOut: q.timedOut, qemuOutput: q.output };
}

export async function runVfioGuests(o: VfioGuestOptions): Promise<VfioGuestReport> {
  const log = o.log ?? (() => {});
  const cache = o.cacheDir ?? DEFAULT_CACHE;
  mkdirSync(join(cache, 'runs'), { recursive: true });
  const work = mkdtempSync(join(cache, 'runs', 'vfio-run-'));
  const dirA = guestFolder(work, 'a', o.images.vfio, ['vmlinuz']);
  const dirB = guestFolder(work, 'b', o.images.bnxt, ['vmlinuz', 'initrd.cpio.gz']);
  const limitMs = o.limitMs ?? 900_000;
  // The segment: NIC A, NIC B, and the host's NIC (each step's rig-bnxt on the host).
  const stations = [await freeUdpPort(), await freeUdpPort(), await freeUdpPort()];
  const segment = await startSegment(stations);
  const [toSwitchA, toSwitchB, toSwitchHost] = segment.switchPorts as [number, number, number];
  const gates = await startGates();
  const tcpA = await freeTcpPort();
  const tcpB = await freeTcpPort();
  const steps = stageGuests(o.images, dirA, dirB, { gate: gates.port, tcpA, tcpB });
  const nicA = await serveNic(dirA, 'vfu.sock', A_MAC, A_IP,
    { kind: 'udp', localPort: stations[0]!, remotePort: toSwitchA }, o.chip, log, 'nic A');
  const nicB = await serveNic(dirB, 'bnxt.sock', B_MAC, B_IP,
    { kind: 'udp', localPort: stations[1]!, remotePort: toSwitchB }, o.chip, log, 'nic B');

  const started = Date.now();
  const chroot = join(cache, 'chroot');
  const qa = startQemu(chroot, dirA, qemuArgvA(tcpA), limitMs);
  const qb = startQemu(chroot, dirB, qemuArgv({ bnxtRe: true, waitS: 60 }, true, tcpB), limitMs);
  const followA = new SerialFollower(join(dirA, 'serial.log'), new SerialTranscript('BNXT-'));
  const followAPeer = new SerialFollower(join(dirA, 'serial.log'), new SerialTranscript('PEER-'));
  const followB = new SerialFollower(join(dirB, 'serial.log'), new SerialTranscript('BNXT-'));
  const abortA = () => (qa.gone ? `guest A's QEMU exited (see ${join(dirA, 'qemu.out')})` : null);
  const abortB = () => (qb.gone ? `guest B's QEMU exited (see ${join(dirB, 'qemu.out')})` : null);
  const [host, peerFailure] = await Promise.all([
    driveHostPeer({
      follower: followA, steps, ports: { hostPort: stations[2]!, farPort: toSwitchHost, tcpPort: tcpA, serverPort: 0 },
      guestIp: A_IP, guestMac: A_MAC, workDir: dirA, jobStartMs: limitMs, log, abort: abortA,
      // Each of A's steps starts Node in the guest: generous bounds, for a loaded machine.
      stepWaitMs: 240_000, hostLimitMs: 300_000, templates: hostTemplatesChecked(),
    }),
    drivePeerPhase(followAPeer, followB, PEER_STEPS, (g) => { log(`gate ${g} opens`); gates.open(g); },
      { a: abortA, b: abortB }, limitMs),
  ]);
  const [exitA, exitB] = await Promise.all([qa.exited, qb.exited]);
  const durationMs = Date.now() - started;
  for (const f of [followA, followAPeer, followB]) f.close();
  await gates.close();
  segment.close();
  return {
    workDir: work,
    a: { ...bootReport(dirA, qa, exitA), job: followA.transcript, peerJob: followAPeer.transcript },
    b: { ...bootReport(dirB, qb, exitB), job: followB.transcript },
    nicA: await endServed(nicA), nicB: await endServed(nicB),
    hostSteps: peerStepResults(steps.filter((s) => 'iters' in s), followA.transcript, host.hostRuns),
    hostFailure: host.failure, peerFailure, gatesOpened: gates.opened(), durationMs,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const chipAt = process.argv.indexOf('--chip');
  const images = buildImages();
  if (!images.ok) {
    console.error(images.error);
    process.exit(1);
  }
  const r = await runVfioGuests({
    images: images.value, chip: chipAt >= 0 ? process.argv[chipAt + 1] : undefined, log: (l) => console.log(l),
  });
  for (const id of r.a.job.stepOrder) console.log(`A ${id}: status ${r.a.job.steps.get(id)?.status}`);
  for (const id of r.a.peerJob.stepOrder) console.log(`A (peer) ${id}: status ${r.a.peerJob.steps.get(id)?.status}`);
  for (const id of r.b.job.stepOrder) console.log(`B ${id}: status ${r.b.job.steps.get(id)?.status}`);
  console.log(`host: ${r.hostFailure ?? 'ok'}; peers: ${r.peerFailure ?? 'ok'}; gates ${r.gatesOpened.join(' ')}`);
  console.log(`nic A: ${r.nicA.endReason}, ${r.nicA.stats?.iommuFaults} IOMMU faults; nic B: ${r.nicB.endReason}`);
  console.log(`qemu A ${r.a.qemuExit}${r.a.timedOut ? ' (timed out)' : ''}, B ${r.b.qemuExit}; ` +
    `${(r.durationMs / 1000).toFixed(1)} s; run folder ${r.workDir}`);
}
