/**
 * RoCE between the bnxt guest and rig-bnxt on the host: the guest's job steps (scripts/interop/
 * job-script.ts, run by steps.sh on bnxt_re0) and, for each, the host's rig-bnxt pingpong or
 * perf on a second software NIC whose UDP cable reaches the far end of the served NIC's. The
 * host follows the guest's serial console (BNXT- markers) and starts its side when the guest's
 * is ready: a guest server once it listens, a host server as the guest's client begins (the
 * guest reaches it through tcp-relay.ts, which waits for it). The command lines are
 * scripts/interop/host-command.ts's, run from the sources.
 */
import { join } from 'node:path';
import { fillTemplate, hostTemplates, type HostTemplates } from '../interop/host-command.ts';
import { hostSide, type GuestStep } from '../interop/job-script.ts';
import { describeExit, killTree, runHost, type HostRun } from '../interop/run-guest.ts';
import { Limits, stepLimitMs } from '../interop/guest-config.ts';
import {
  parsePerftestRow, parsePingpongOutput, type PerftestRow, type PingpongReport, type SerialTranscript,
} from '../interop/serial-transcript.ts';
import type { SerialFollower } from '../interop/serial-follow.ts';
import type { ChildProcess } from 'node:child_process';

/** The host's second software NIC (on the same segment as the served one, 10.77.0.0/24). */
export const HOST_NIC = { ip: '10.77.0.3', mac: '02:62:6e:00:00:03', mtu: 1500, pathMtu: 1024 } as const;

export interface HostPeerPorts {
  /** The host NIC's UDP port. */
  readonly hostPort: number;
  /** The far end of the served NIC's cable (the host NIC sends there). */
  readonly farPort: number;
  /** 127.0.0.1 port of QEMU's hostfwd to the guest's server port. */
  readonly tcpPort: number;
  /** Where the host's servers listen (the guest reaches them through the relay). */
  readonly serverPort: number;
}

export interface PeerStepResult {
  readonly step: GuestStep;
  /** The guest's exit status for the step (null: it never ended). */
  readonly status: number | null;
  readonly output: readonly string[];
  readonly pingpong: PingpongReport | null;
  readonly perftest: PerftestRow | null;
  readonly host: HostRun | null;
}

/** rig-bnxt's command lines, run from this tree's sources (no build needed, never a stale bundle). */
export function sourceTemplates(): HostTemplates {
  const cli = 'node --import ./scripts/register-ts.mjs scripts/cli.ts';
  const t = hostTemplates({});
  const fix = (s: string | undefined) => s?.replace('node dist/rig-bnxt.mjs', cli);
  return {
    client: fix(t.client)!, server: fix(t.server)!, perfClient: fix(t.perfClient), perfServer: fix(t.perfServer),
  };
}

interface DriveOptions {
  readonly follower: SerialFollower;
  readonly steps: readonly GuestStep[];
  readonly ports: HostPeerPorts;
  readonly guestIp: string;
  readonly guestMac: string;
  readonly workDir: string;
  /** How long the guest may take to reach its job (boot, bring-up, the in-guest tests). */
  readonly jobStartMs: number;
  readonly abort: () => string | null;
  readonly log: (line: string) => void;
  readonly templates?: HostTemplates;
  /**
   * How long a step may take to begin (to be ready, for a guest server) after the one before it
   * ended, and to end beyond its own limit (default Limits.stepWaitMs): a job whose guest commands
   * start Node each time (scripts/vfio-bnxt-guest) needs longer on a loaded machine.
   */
  readonly stepWaitMs?: number;
  /** The least time a host command gets (default stepLimitMs of its iterations). */
  readonly hostLimitMs?: number;
}

type TrafficStep = Extract<GuestStep, { readonly iters: number }>;

/** The host command line for a step's host side, or why there is none. */
function hostArgv(
  o: DriveOptions, templates: HostTemplates, step: TrafficStep, side: 'client' | 'server',
): string[] | string {
  const perftest = 'test' in step;
  const template = perftest
    ? (side === 'client' ? templates.perfClient : templates.perfServer)
    : (side === 'client' ? templates.client : templates.server);
  if (template === undefined) return `step ${step.id}: no host command for it`;
  const { ports } = o;
  return fillTemplate(template, {
    hostPort: ports.hostPort, guestPort: ports.farPort, tcpPort: side === 'client' ? ports.tcpPort : ports.serverPort,
    hostIp: HOST_NIC.ip, hostMac: HOST_NIC.mac, guestIp: o.guestIp, guestMac: o.guestMac,
    mtu: HOST_NIC.mtu, pathMtu: HOST_NIC.pathMtu, size: step.sizeBytes, iters: step.iters,
    test: 'test' in step ? step.test : '',
    // perftest's -q, and the host NIC's own capture of the step (interop's templates take both).
    qps: 'qps' in step ? step.qps ?? 1 : 1, hostPcap: join(o.workDir, `host-${step.id}.pcap`),
  });
}

/** One step: wait until the guest's side is ready, start the host's, wait for both to end. */
async function driveStep(
  o: DriveOptions, templates: HostTemplates, step: GuestStep, hostRuns: Map<string, HostRun>,
  setChild: (c: ChildProcess | null) => void,
): Promise<string | null> {
  const { follower } = o;
  const t = follower.transcript;
  const side = hostSide(step);
  const limitMs = Math.max('iters' in step ? stepLimitMs(step.iters) : Limits.stepBaseMs, o.hostLimitMs ?? 0);
  const begun = (x: SerialTranscript) => {
    const r = x.steps.get(step.id);
    return r !== undefined && (side === null || r.waiting || r.status !== null);
  };
  const readiness = `step ${step.id} to ${side === null ? 'begin' : 'be ready (BNXT-STEP-WAIT)'}`;
  const stepWaitMs = o.stepWaitMs ?? Limits.stepWaitMs;
  let wait = await follower.waitFor(begun, stepWaitMs, readiness, o.abort);
  if (!wait.ok) return wait.reason;
  let hostDone: Promise<HostRun> | null = null;
  if (side !== null && 'iters' in step && t.steps.get(step.id)!.status === null) {
    const argv = hostArgv(o, templates, step, side);
    if (typeof argv === 'string') return argv;
    o.log(`step ${step.id}: host ${argv.join(' ')}`);
    hostDone = runHost(argv, limitMs, join(o.workDir, `host-${step.id}.log`), setChild);
  }
  let hostRun: HostRun | null = null;
  let hostEndedAt = 0;
  const hostAbort = (): string | null => {
    const reason = o.abort();
    if (reason !== null) return reason;
    const failed = hostRun !== null && (hostRun.exitCode !== 0 || hostRun.timedOut);
    if (failed && Date.now() - hostEndedAt > Limits.killGraceMs * 2) {
      return `the host command of step ${step.id} ${describeExit(hostRun!)}: ${hostRun!.output.trim().slice(-400)}`;
    }
    return null;
  };
  void hostDone?.then((run) => {
    hostRun = run; hostEndedAt = Date.now(); hostRuns.set(step.id, run); setChild(null);
  });
  const ended = (x: SerialTranscript) => x.steps.get(step.id)?.status != null;
  wait = await follower.waitFor(ended, limitMs + stepWaitMs, `step ${step.id} to end`, hostAbort);
  if (hostDone !== null) await hostDone;
  const host = hostRun !== null ? `, host ${describeExit(hostRun)}` : '';
  o.log(`step ${step.id}: guest status ${t.steps.get(step.id)?.status ?? 'none'}${host}`);
  return wait.ok ? null : wait.reason;
}

/**
 * Runs the steps' host sides as the guest reaches them. Resolves with the first failure (or
 * null) and every host run; `abort` says why to stop waiting (QEMU gone, a guest failure).
 */
export async function driveHostPeer(
  o: DriveOptions,
): Promise<{ failure: string | null; hostRuns: Map<string, HostRun> }> {
  const { follower } = o;
  const templates = o.templates ?? sourceTemplates();
  const hostRuns = new Map<string, HostRun>();
  let child: ChildProcess | null = null;
  const t = follower.transcript;
  const drive = async (): Promise<string | null> => {
    const jobStart = 'the guest\'s job to start (BNXT-JOB-START)';
    let wait = await follower.waitFor((x) => x.jobStarted, o.jobStartMs, jobStart, o.abort);
    if (!wait.ok) return wait.reason;
    for (const step of o.steps) {
      const failed = await driveStep(o, templates, step, hostRuns, (c) => { child = c; });
      if (failed !== null) return failed;
    }
    wait = await follower.waitFor((x) => x.jobStatus !== null, Limits.jobStartMs, 'BNXT-JOB-DONE', o.abort);
    return wait.ok ? null : wait.reason;
  };
  let failure: string | null;
  try {
    failure = await drive();
  } finally {
    if (child !== null) killTree(child);
  }
  if (failure === null) {
    for (const step of o.steps) {
      const r = t.steps.get(step.id);
      const host = hostRuns.get(step.id);
      if (r?.status !== 0 || (host !== undefined && host.exitCode !== 0)) {
        failure = `step ${step.id}: guest status ${r?.status ?? 'none'}${host ? `, host ${describeExit(host)}` : ''}`;
        break;
      }
    }
  }
  return { failure, hostRuns };
}

/** Each step's guest output, parsed, with its host run. */
export function peerStepResults(
  steps: readonly GuestStep[], t: SerialTranscript, hostRuns: ReadonlyMap<string, HostRun>,
): PeerStepResult[] {
  return steps.map((step) => {
    const output = t.steps.get(step.id)?.output ?? [];
    return {
      step, status: t.steps.get(step.id)?.status ?? null, output,
      pingpong: 'iters' in step && !('test' in step) ? parsePingpongOutput(output) : null,
      perftest: 'test' in step ? parsePerftestRow(output) : null,
      host: hostRuns.get(step.id) ?? null,
    };
  });
}
