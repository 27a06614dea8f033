/**
 * Boots the soft-RoCE guest once, runs a list of steps in it and, for pingpong steps, the host
 * command against it; returns what happened (never throws for a failed run: the failure is in
 * the result). QEMU is always killed at the end.
 *
 *   node --import ./scripts/register-ts.mjs scripts/interop/run-guest.ts [options]
 *     --sizes 64,4096    guest-server pingpongs with the host command as client (default 64,4096)
 *     --iters N          iterations per size (default 5)
 *     --long N           then one pingpong of N iterations (size --long-size, default 4096),
 *                        counters after
 *     --client           also one guest-client pingpong through guestfwd (the host command as server)
 *     --loopback         no host command: rc_pingpong inside the guest (checks the guest and harness)
 *     --stand-in         host command: scripts/interop/stand-in-peer.ts instead of rig-bnxt
 *     --cache DIR        image folder (default build/interop; built by build-guest.sh if missing)
 *
 * The host command template is in host-command.ts (or RXE_HOST_CLIENT / RXE_HOST_SERVER).
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BUILD_SCRIPT, DATA_MTU, DEFAULT_CACHE_DIR, GUEST_DATA_IP, GUEST_DATA_MAC, HOST_DATA_IP, HOST_DATA_MAC,
  INITRD_FILE, KERNEL_FILE, Limits, PATH_MTU, REPO_ROOT, stepLimitMs,
} from './guest-config.ts';
import { pickRunPorts, type RunPorts } from './free-ports.ts';
import {
  fillTemplate, hostTemplates, standInTemplates, type HostTemplates, type TemplateValues,
} from './host-command.ts';
import { hostSide, jobScript, type GuestStep, type JobOptions } from './job-script.ts';
import { qemuArgs } from './qemu-args.ts';
import { openDataSocket } from './data-socket.ts';
import { checkPingpongCapture, readPcap, type PingpongPair } from './capture-check.ts';
import { SerialFollower } from './serial-follow.ts';
import {
  parsePerftestRow, parsePingpongOutput, type PerftestRow, type PingpongReport, type SerialTranscript,
} from './serial-transcript.ts';

export interface RunGuestOptions {
  readonly steps: readonly GuestStep[];
  /** Where vmlinuz and rxe-initrd.cpio.gz are (default build/interop). */
  readonly cacheDir?: string;
  /** This run's folder (job, serial log, pcap, QEMU and host logs); default cacheDir/runs/<unique>. */
  readonly workDir?: string;
  readonly templates?: HostTemplates;
  /** Capture the data NIC to workDir/data.pcap (default true). */
  readonly capture?: boolean;
  /** Guest-side job options (ibv_rc_pingpong -e / -c, the peer's address). */
  readonly job?: JobOptions;
  /** Extra QEMU arguments appended to the doc's command line (also RXE_QEMU_ARGS, space-separated). */
  readonly qemuExtraArgs?: readonly string[];
  /** Progress lines (default: none). */
  readonly log?: (line: string) => void;
}

export interface HostRun {
  readonly argv: readonly string[];
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly output: string;
  readonly durationMs: number;
}

export interface StepResult {
  readonly step: GuestStep;
  /** The guest's exit status for the step (null: it never ended). */
  readonly status: number | null;
  readonly output: readonly string[];
  /** The in-guest client's output of a loopback step. */
  readonly clientOutput: readonly string[];
  /** The guest's ibv_rc_pingpong report (its own QPN is localQpn). */
  readonly pingpong: PingpongReport | null;
  /** The guest's perftest result row, for perftest steps. */
  readonly perftest: PerftestRow | null;
  readonly host: HostRun | null;
  /** The host command's own capture of the step (its --pcap), when its template writes one. */
  readonly hostPcap: string | null;
}

export interface GuestRunResult {
  /** No failure, the job ended with status 0, every step and host command exited 0. */
  readonly ok: boolean;
  /** The first thing that went wrong, or null. */
  readonly failure: string | null;
  readonly steps: readonly StepResult[];
  /** Counter snapshots by step id. */
  readonly counters: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly gidIndex: number;
  readonly ports: RunPorts;
  readonly timings: { readonly readyMs: number | null; readonly totalMs: number; readonly guestReadyUptimeS: number };
  readonly files: {
    readonly workDir: string; readonly serialLog: string; readonly pcap: string | null; readonly job: string;
    readonly qemuLog: string;
  };
  readonly qemuArgs: readonly string[];
  readonly transcript: SerialTranscript;
}

/** Builds the guest image if needed (build-guest.sh skips an up-to-date one). Returns null or the failure. */
export function ensureGuestImage(
  cacheDir: string = DEFAULT_CACHE_DIR, log: (line: string) => void = () => {},
): string | null {
  const result = spawnSync('bash', [BUILD_SCRIPT, cacheDir], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: 15 * 60_000, maxBuffer: 16 << 20,
  });
  for (const line of `${result.stdout ?? ''}`.split('\n')) if (line.trim()) log(line);
  if (result.status === 0) return null;
  const stderrTail = (result.stderr ?? '').trim().split('\n').slice(-5).join(' | ');
  return `build-guest.sh failed (${result.error?.message ?? `exit ${result.status}`}): ${stderrTail}`;
}

export function qemuAvailable(): boolean {
  return spawnSync('qemu-system-x86_64', ['--version'], { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

export async function runGuest(options: RunGuestOptions): Promise<GuestRunResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const cacheDir = options.cacheDir ?? DEFAULT_CACHE_DIR;
  const templates = options.templates ?? hostTemplates();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const unique = `${stamp}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const workDir = options.workDir ?? join(cacheDir, 'runs', unique);
  mkdirSync(workDir, { recursive: true });
  const files = {
    workDir,
    serialLog: join(workDir, 'guest.log'),
    pcap: options.capture === false ? null : join(workDir, 'data.pcap'),
    job: join(workDir, 'job.sh'),
    qemuLog: join(workDir, 'qemu.log'),
  };
  writeFileSync(files.job, jobScript(options.steps, options.job));
  const ports = await pickRunPorts();
  const guestfwd = options.steps.some((s) => s.kind === 'pingpong-client' || s.kind === 'perftest-client');
  const extra = options.qemuExtraArgs ?? (process.env['RXE_QEMU_ARGS'] ?? '').split(/\s+/).filter((a) => a !== '');
  // The data NIC's socket with a receive buffer that holds the host's window (data-socket.ts),
  // passed to QEMU as its descriptor 3; else QEMU makes its own.
  const data = await openDataSocket(ports.guestPort, ports.hostPort);
  if ('error' in data) log(`data socket: ${data.error}; QEMU makes its own (default receive buffer)`);
  else log(`data socket: receive buffer ${data.socket.receiveBufferBytes} bytes, passed to QEMU as fd 3`);
  const dataSocket = 'socket' in data ? data.socket : null;
  const qemuFiles = {
    cacheDir, jobFile: files.job, serialLog: files.serialLog, pcap: files.pcap, ...(dataSocket ? { dataFd: 3 } : {}),
  };
  const args = [...qemuArgs(qemuFiles, ports, guestfwd), ...extra];
  const hostRuns = new Map<string, HostRun>();
  const hostPcaps = new Map<string, string>();
  const follower = new SerialFollower(files.serialLog);
  let failure: string | null = null;
  let readyMs: number | null = null;
  let qemu: ChildProcess | null = null;
  let qemuExit: string | null = null;
  let hostChild: ChildProcess | null = null;

  for (const file of [KERNEL_FILE, INITRD_FILE]) {
    const path = join(cacheDir, file);
    if (!existsSync(path)) failure = `${path} is missing: run scripts/interop/build-guest.sh`;
  }
  try {
    if (failure === null) {
      log(`qemu: guest data port ${ports.guestPort}, host data port ${ports.hostPort}, hostfwd ${ports.tcpPort}, ` +
        `guestfwd target ${ports.serverPort}; logs in ${workDir}`);
      const qemuLogFd = openSync(files.qemuLog, 'w');
      const stdio: StdioOptions = dataSocket
        ? ['ignore', qemuLogFd, qemuLogFd, dataSocket.fd]
        : ['ignore', qemuLogFd, qemuLogFd];
      qemu = spawn('qemu-system-x86_64', args, { cwd: REPO_ROOT, stdio });
      closeSync(qemuLogFd);
      dataSocket?.close();
      qemu.on('exit', (code, signal) => {
        qemuExit = `QEMU exited (${signal ?? `code ${code}`}; see ${files.qemuLog})`;
      });
      qemu.on('error', (error) => { qemuExit = `QEMU did not start: ${error.message}`; });
      failure = await drive();
    }
  } finally {
    dataSocket?.close();
    if (hostChild !== null) killTree(hostChild);
    if (qemu !== null && qemuExit === null) {
      if (failure === null && follower.transcript.jobStatus !== null) {
        // The guest powers itself off after the job; give it the chance before killing.
        await follower.waitFor(() => false, Limits.powerOffMs, 'power-off', () => qemuExit);
      }
      if (qemuExit === null) await kill(qemu, () => qemuExit !== null);
    }
    follower.close();
  }

  async function drive(): Promise<string | null> {
    const t = follower.transcript;
    const abort = (): string | null =>
      qemuExit ?? (t.failures.length > 0 ? `guest: ${t.failures.join('; ')}` : null);
    let wait = await follower.waitFor((x) => x.ready, Limits.readyMs, 'RXE-READY', abort);
    if (!wait.ok) return wait.reason;
    readyMs = Date.now() - started;
    log(`guest ready after ${(readyMs / 1000).toFixed(1)} s ` +
      `(guest uptime ${t.readyUptimeS} s, GID index ${t.gidIndex})`);
    wait = await follower.waitFor((x) => x.jobStarted, Limits.jobStartMs, 'RXE-JOB-START', abort);
    if (!wait.ok) return wait.reason;
    for (const step of options.steps) {
      const side = hostSide(step);
      const limitMs = 'iters' in step ? stepLimitMs(step.iters) : Limits.stepBaseMs;
      // The step begins right after the previous one ended; a host-side step must reach RXE-STEP-WAIT.
      const begun = (x: SerialTranscript) => {
        const r = x.steps.get(step.id);
        return r !== undefined && (side === null || r.waiting || r.status !== null);
      };
      const awaited = `step ${step.id} to ${side === null ? 'begin' : 'listen (RXE-STEP-WAIT)'}`;
      wait = await follower.waitFor(begun, Limits.stepWaitMs, awaited, abort);
      if (!wait.ok) return wait.reason;
      let hostDone: Promise<HostRun> | null = null;
      if (side !== null && 'iters' in step && t.steps.get(step.id)!.status === null) {
        const template = hostTemplate(step, side, templates);
        if (template === undefined) return `step ${step.id}: the host peer has no perf command`;
        const hostPcap = join(workDir, `host-${step.id}.pcap`);
        const argv = fillTemplate(template, templateValues(step, side, ports, hostPcap));
        if (template.includes('{hostPcap}')) hostPcaps.set(step.id, hostPcap);
        log(`step ${step.id}: host ${argv.join(' ')}`);
        hostDone = runHost(argv, limitMs, join(workDir, `host-${step.id}.log`), (child) => { hostChild = child; });
      }
      let hostRun: HostRun | null = null;
      let hostEndedAt = 0;
      const hostAbort = (): string | null => {
        const reason = abort();
        if (reason !== null) return reason;
        const hostFailed = hostRun !== null && (hostRun.exitCode !== 0 || hostRun.timedOut);
        if (hostRun !== null && hostFailed && Date.now() - hostEndedAt > Limits.killGraceMs * 2) {
          return `host command for step ${step.id} ${describeExit(hostRun)}: ${tail(hostRun.output, 400)}`;
        }
        return null;
      };
      hostDone?.then((run) => {
        hostRun = run;
        hostEndedAt = Date.now();
        hostRuns.set(step.id, run);
        hostChild = null;
      });
      const ended = (x: SerialTranscript) => x.steps.get(step.id)?.status != null;
      wait = await follower.waitFor(ended, limitMs + Limits.stepWaitMs, `step ${step.id} to end`, hostAbort);
      if (hostDone !== null) await hostDone;
      const record = t.steps.get(step.id);
      const hostPart = hostRun !== null ? `, host ${describeExit(hostRun)}` : '';
      log(`step ${step.id}: guest status ${record?.status ?? 'none'}${hostPart}`);
      if (!wait.ok) return wait.reason;
    }
    wait = await follower.waitFor((x) => x.jobStatus !== null, Limits.jobStartMs, 'RXE-JOB-DONE', abort);
    if (!wait.ok) return wait.reason;
    return null;
  }

  const t = follower.transcript;
  const steps: StepResult[] = options.steps.map((step) => {
    const record = t.steps.get(step.id);
    const output = record?.output ?? [];
    return {
      step,
      status: record?.status ?? null,
      output,
      clientOutput: t.steps.get(`${step.id}.client`)?.output ?? [],
      pingpong: 'iters' in step && !('test' in step) ? parsePingpongOutput(output) : null,
      perftest: 'test' in step ? parsePerftestRow(output) : null,
      host: hostRuns.get(step.id) ?? null,
      hostPcap: hostPcaps.get(step.id) ?? null,
    };
  });
  if (failure === null && t.jobStatus !== 0) failure = `guest job ended with status ${t.jobStatus}`;
  if (failure === null) {
    const bad = steps.find((s) => s.status !== 0 || (s.host !== null && s.host.exitCode !== 0));
    const hostPart = bad?.host ? `, host ${describeExit(bad.host)}` : '';
    if (bad !== undefined) failure = `step ${bad.step.id}: guest status ${bad.status}${hostPart}`;
  }
  const totalMs = Date.now() - started;
  log(`run ${failure === null ? 'ok' : `failed: ${failure}`} in ${(totalMs / 1000).toFixed(1)} s`);
  return {
    ok: failure === null, failure, steps, counters: t.counters, gidIndex: t.gidIndex, ports,
    timings: { readyMs, totalMs, guestReadyUptimeS: t.readyUptimeS }, files, qemuArgs: args, transcript: t,
  };
}

type HostStep = Extract<GuestStep, { readonly iters: number }>;

/** The host command's template for a step the host takes part in (undefined: the host peer has no perf). */
function hostTemplate(step: HostStep, side: 'client' | 'server', templates: HostTemplates): string | undefined {
  const perftest = step.kind === 'perftest-server' || step.kind === 'perftest-client';
  return perftest
    ? (side === 'client' ? templates.perfClient : templates.perfServer)
    : (side === 'client' ? templates.client : templates.server);
}

/** What fills a host command's template for a step: the run's ports and addresses, the step's sizes. */
function templateValues(step: HostStep, side: 'client' | 'server', ports: RunPorts, hostPcap: string): TemplateValues {
  return {
    hostPort: ports.hostPort, guestPort: ports.guestPort,
    tcpPort: side === 'client' ? ports.tcpPort : ports.serverPort,
    hostIp: HOST_DATA_IP, hostMac: HOST_DATA_MAC, guestIp: GUEST_DATA_IP, guestMac: GUEST_DATA_MAC,
    mtu: DATA_MTU, pathMtu: PATH_MTU, size: step.sizeBytes, iters: step.iters,
    test: 'test' in step ? step.test : '',
    qps: 'qps' in step ? step.qps ?? 1 : 1, hostPcap,
  };
}

/** The step's two QPs as the capture check takes them, or null for a step without a pingpong report. */
export function pingpongPair(step: StepResult): PingpongPair | null {
  const pp = step.pingpong;
  if (pp === null || !('sizeBytes' in step.step)) return null;
  return {
    guestQpn: pp.localQpn, guestPsn: pp.localPsn, hostQpn: pp.remoteQpn, hostPsn: pp.remotePsn,
    sizeBytes: step.step.sizeBytes, iters: step.step.iters,
    role: step.step.kind === 'pingpong-client' ? 'client' : 'server',
  };
}

/** Runs one host command (no shell) with a time limit; its output goes to `logFile` and, the tail, to the result. */
export function runHost(
  argv: readonly string[], limitMs: number, logFile: string, onSpawn: (child: ChildProcess) => void,
): Promise<HostRun> {
  const started = Date.now();
  const [file, ...rest] = argv as [string, ...string[]];
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const child = spawn(file === 'node' ? process.execPath : file, rest, {
      cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true,
    });
    onSpawn(child);
    const keep = (d: Buffer) => { output = (output + d.toString()).slice(-Limits.hostOutputBytes); };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const timer = setTimeout(() => { timedOut = true; killTree(child); }, limitMs);
    const finish = (exitCode: number | null, signal: string | null) => {
      clearTimeout(timer);
      writeFileSync(logFile, `$ ${argv.join(' ')}\n${output}`);
      resolve({ argv, exitCode, signal, timedOut, output, durationMs: Date.now() - started });
    };
    child.on('error', (error) => { output += `\n(spawn failed: ${error.message})`; finish(null, null); });
    child.on('close', (code, signal) => finish(code, signal));
  });
}

/** Ends a host command and whatever it started (its own process group). */
export function killTree(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try { process.kill(-child.pid, 'SIGKILL'); } catch { child.kill('SIGKILL'); }
}

/** SIGTERM, then SIGKILL after the grace period; resolves once `gone()` or after the kill. */
async function kill(child: ChildProcess, gone: () => boolean): Promise<void> {
  child.kill('SIGTERM');
  const start = Date.now();
  while (!gone() && Date.now() - start < Limits.killGraceMs) await new Promise((r) => setTimeout(r, 20));
  if (!gone()) {
    child.kill('SIGKILL');
    const killedAt = Date.now();
    while (!gone() && Date.now() - killedAt < Limits.killGraceMs) await new Promise((r) => setTimeout(r, 20));
  }
}

export function describeExit(run: HostRun): string {
  if (run.timedOut) return `timed out after ${run.durationMs} ms`;
  return run.signal !== null ? `killed by ${run.signal}` : `exit ${run.exitCode}`;
}

function tail(text: string, chars: number): string {
  const trimmed = text.trim();
  return trimmed.length <= chars ? trimmed : `...${trimmed.slice(-chars)}`;
}

// ---- command line -----------------------------------------------------------------------------

function parseCli(argv: readonly string[]): { steps: GuestStep[]; cacheDir: string; templates: HostTemplates } {
  let sizes = [64, 4096];
  let iters = 5;
  let long = 0;
  let longSize = 4096;
  let client = false;
  let loopback = false;
  let templates = hostTemplates();
  let cacheDir = DEFAULT_CACHE_DIR;
  const number = (value: string | undefined, name: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} needs a positive whole number, got "${value}"`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    switch (arg) {
      case '--sizes': sizes = (argv[++i] ?? '').split(',').map((s) => number(s, '--sizes')); break;
      case '--iters': iters = number(argv[++i], '--iters'); break;
      case '--long': long = number(argv[++i], '--long'); break;
      case '--long-size': longSize = number(argv[++i], '--long-size'); break;
      case '--client': client = true; break;
      case '--loopback': loopback = true; break;
      case '--stand-in': templates = standInTemplates(); break;
      case '--cache': cacheDir = argv[++i] ?? cacheDir; break;
      default: throw new Error(`unknown option ${arg} (see the header of scripts/interop/run-guest.ts)`);
    }
  }
  const kind = loopback ? 'pingpong-loopback' : 'pingpong-server';
  const steps: GuestStep[] = [{ kind: 'command', id: 'devinfo', argv: ['ibv_devinfo', '-d', 'rxe0'] }];
  for (const size of sizes) steps.push({ kind, id: `pp${size}`, sizeBytes: size, iters });
  if (client && !loopback) steps.push({ kind: 'pingpong-client', id: 'client64', sizeBytes: 64, iters });
  if (long > 0) {
    steps.push({ kind: 'counters', id: 'before-long' }, { kind, id: 'long', sizeBytes: longSize, iters: long },
      { kind: 'counters', id: 'after-long' });
  }
  steps.push({ kind: 'counters', id: 'final' }, { kind: 'kernel-log', id: 'kernel' });
  return { steps, cacheDir, templates };
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (error) {
    console.error(`run-guest: ${(error as Error).message}`);
    process.exit(2);
  }
  const log = (line: string) => console.log(`[run-guest] ${line}`);
  const built = ensureGuestImage(parsed.cacheDir, log);
  if (built !== null) { console.error(`run-guest: ${built}`); process.exit(1); }
  const result = await runGuest({ steps: parsed.steps, cacheDir: parsed.cacheDir, templates: parsed.templates, log });
  for (const step of result.steps) {
    const pp = step.pingpong;
    const ppPart = pp ? `, ${pp.iters} iters, ${pp.usecPerIter} usec/iter` : '';
    const hostTail = step.host?.output.trim().split('\n').slice(-3).join(' | ');
    const hostPart = step.host ? `; host ${step.host.exitCode}: ${hostTail}` : '';
    log(`${step.step.id}: status ${step.status}${ppPart}${hostPart}`);
  }
  const pcap = result.files.pcap;
  const frames = pcap !== null && existsSync(pcap) ? readPcap(readFileSync(pcap)) : [];
  for (const step of result.steps) {
    if (step.pingpong === null || step.host === null) continue;
    const c = checkPingpongCapture(frames, pingpongPair(step)!);
    log(`${step.step.id} capture: frames to/from guest ${c.framesToGuest}/${c.framesFromGuest}, ` +
      `messages ${c.messagesToGuest}/${c.messagesFromGuest}, bad ${c.badFrames.length}, ` +
      `repeated PSNs to/from guest ${c.repeatedPsnsToGuest}/${c.repeatedPsnsFromGuest}, NAKs ${c.naks.length}, ` +
      `echoes ${c.echoesCompared} (${c.echoMismatches.length} wrong), ` +
      `host ACK max ${(c.hostAckLatencyMaxUs / 1000).toFixed(1)} ms, late ${c.hostAcksLate}`);
  }
  for (const [label, snapshot] of result.counters) {
    log(`counters ${label}: ${[...snapshot].map(([k, v]) => `${k}=${v}`).join(' ')}`);
  }
  process.exit(result.ok ? 0 : 1);
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
