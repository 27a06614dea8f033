/**
 * The host side of an interop step: a command line supplied by the caller, written as a template
 * whose {placeholders} the harness fills per step. THE one place where the rig-bnxt command is
 * spelled; change it here (or set RXE_HOST_CLIENT / RXE_HOST_SERVER in the environment).
 *
 * Placeholders: {hostPort} {guestPort} (the data NIC's UDP ports on 127.0.0.1: the host
 * command binds hostPort and sends to guestPort, where QEMU's -netdev dgram listens),
 * {hostIp} {hostMac} {guestIp} {guestMac} {mtu} {pathMtu} {size} {iters} {tcpPort}
 * (127.0.0.1:tcpPort is where the guest's ibv_rc_pingpong server is reached through slirp's
 * hostfwd, or where the host's server must listen for guestfwd), {test} and {qps} for perf, and
 * {hostPcap}: the step's host-side capture, which the software NIC writes itself (--pcap), with
 * each frame stamped when it left or arrived on the clock its timers use. The rig-bnxt templates
 * take it; a template without it leaves the step with no host capture.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './guest-config.ts';

// Flags as `rig-bnxt pingpong --help` gives them: --ipv4 / --nic-mac / --eth-mtu describe the
// software NIC, --mac is the peer's MAC (rxe's IPv4-mapped GID does not carry it), -m the path MTU.

/** The host is the ibv_rc_pingpong client; the guest's server is at 127.0.0.1:{tcpPort}. */
export const HOST_PINGPONG_CLIENT_TEMPLATE =
  'node dist/rig-bnxt.mjs pingpong -d emu:{hostPort}:{guestPort} --ipv4 {hostIp} --nic-mac {hostMac} ' +
  '--mac {guestMac} --eth-mtu {mtu} -m {pathMtu} -s {size} -n {iters} -p {tcpPort} --pcap {hostPcap} 127.0.0.1';

/** The host is the server (the guest connects through guestfwd); it listens on 127.0.0.1:{tcpPort}. */
export const HOST_PINGPONG_SERVER_TEMPLATE =
  'node dist/rig-bnxt.mjs pingpong -d emu:{hostPort}:{guestPort} --ipv4 {hostIp} --nic-mac {hostMac} ' +
  '--mac {guestMac} --eth-mtu {mtu} -m {pathMtu} -s {size} -n {iters} -p {tcpPort} --pcap {hostPcap}';

/** The host is perftest's client ({test}: send_lat, send_bw); the guest's perftest server is at 127.0.0.1:{tcpPort}. */
export const HOST_PERF_CLIENT_TEMPLATE =
  'node dist/rig-bnxt.mjs perf {test} -d emu:{hostPort}:{guestPort} --ipv4 {hostIp} --nic-mac {hostMac} ' +
  '--mac {guestMac} --eth-mtu {mtu} -s {size} -n {iters} -q {qps} -p {tcpPort} --pcap {hostPcap} 127.0.0.1';

/** The host is perftest's server; the guest's perftest client connects through guestfwd to 127.0.0.1:{tcpPort}. */
export const HOST_PERF_SERVER_TEMPLATE =
  'node dist/rig-bnxt.mjs perf {test} -d emu:{hostPort}:{guestPort} --ipv4 {hostIp} --nic-mac {hostMac} ' +
  '--mac {guestMac} --eth-mtu {mtu} -s {size} -n {iters} -q {qps} -p {tcpPort} --pcap {hostPcap}';

export interface HostTemplates {
  /** For steps where the guest is the pingpong server. */
  readonly client: string;
  /** For steps where the guest is the pingpong client (guestfwd). */
  readonly server: string;
  /** For perftest steps (guest server / guest client); absent for a host peer without perf. */
  readonly perfClient?: string;
  readonly perfServer?: string;
}

/** The templates in force: the environment's RXE_HOST_CLIENT / RXE_HOST_SERVER, else the rig-bnxt ones. */
export function hostTemplates(env: NodeJS.ProcessEnv = process.env): HostTemplates {
  return {
    client: env['RXE_HOST_CLIENT'] || HOST_PINGPONG_CLIENT_TEMPLATE,
    server: env['RXE_HOST_SERVER'] || HOST_PINGPONG_SERVER_TEMPLATE,
    perfClient: HOST_PERF_CLIENT_TEMPLATE,
    perfServer: HOST_PERF_SERVER_TEMPLATE,
  };
}

export type TemplateValues = Readonly<Record<string, string | number>>;

/**
 * Splits a template on spaces (no shell, no quoting: every word is one argument) and fills each
 * {name}. An unknown placeholder is an error, so a typo cannot reach the command silently.
 */
export function fillTemplate(template: string, values: TemplateValues): string[] {
  const words = template.trim().split(/\s+/).filter((w) => w.length > 0);
  if (words.length === 0) throw new Error('host command template is empty');
  return words.map((word) =>
    word.replace(/\{([A-Za-z]+)\}/g, (_, name: string) => {
      const value = values[name];
      if (value === undefined) throw new Error(`host command template: unknown placeholder {${name}} in "${template}"`);
      return String(value);
    }),
  );
}

export type Availability = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/**
 * Whether the default host command can run: dist/rig-bnxt.mjs exists and its help mentions a
 * `pingpong` command. Custom templates (RXE_HOST_CLIENT) are taken as available.
 */
export async function rigBnxtPingpongAvailable(env: NodeJS.ProcessEnv = process.env): Promise<Availability> {
  if (env['RXE_HOST_CLIENT']) return { ok: true };
  const cli = join(REPO_ROOT, 'dist', 'rig-bnxt.mjs');
  if (!existsSync(cli))
    return { ok: false, reason: 'dist/rig-bnxt.mjs does not exist (npm run build; the CLI is not wired up yet)' };
  const help = await runForText(process.execPath, [cli, '--help'], 15_000);
  if (!/\bpingpong\b/.test(help))
    return { ok: false, reason: 'node dist/rig-bnxt.mjs --help names no pingpong command yet' };
  return { ok: true };
}

/** Runs a command with a time limit and returns its stdout + stderr ('' on any failure to start). */
function runForText(file: string, args: readonly string[], limitMs: number): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const child = spawn(file, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.stdout.on('data', (d: Buffer) => { text += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { text += d.toString(); });
    child.on('error', () => { clearTimeout(timer); resolve(''); });
    child.on('close', () => { clearTimeout(timer); resolve(text); });
  });
}

/**
 * The same command lines with scripts/interop/stand-in-peer.ts in place of rig-bnxt: a minimal
 * RC peer that tests the harness itself (it takes the same flags).
 */
export function standInTemplates(): HostTemplates {
  const standIn = `node --import ./scripts/register-ts.mjs scripts/interop/stand-in-peer.ts`;
  // The stand-in writes no capture of its own.
  const noPcap = (template: string) => template.replace(' --pcap {hostPcap}', '');
  return {
    client: noPcap(HOST_PINGPONG_CLIENT_TEMPLATE).replace('node dist/rig-bnxt.mjs', standIn),
    server: noPcap(HOST_PINGPONG_SERVER_TEMPLATE).replace('node dist/rig-bnxt.mjs', standIn),
  };
}
