/**
 * Free ports on 127.0.0.1 for tests and guest runs, without the race of "bind port 0, close,
 * hand the number on": between the close and the real bind, the kernel may give that port to
 * any other process as an ephemeral port (an outgoing connection, an unbound UDP send), and a
 * parallel test may draw it too. So ports are drawn from *outside* the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range), which the kernel never hands out by itself, and each
 * one is reserved with a lock file (appearing at once with the owner's process id: lockPort) that
 * every user of this module respects while the owner lives; the port is also bound once to prove
 * it is free now. Reservations end when the process exits, or when another process finds the
 * owner gone (one process at a time judges a lock: breakStale).
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RunPorts {
  /** QEMU's -netdev dgram local end (the guest's data NIC). */
  readonly guestPort: number;
  /** The host command's end of the data NIC. */
  readonly hostPort: number;
  /** 127.0.0.1 TCP port of slirp's hostfwd to the guest's ibv_rc_pingpong port (the host connects here). */
  readonly tcpPort: number;
  /** 127.0.0.1 TCP port where the host's server listens when the guest connects through guestfwd. */
  readonly serverPort: number;
}

const LOCK_DIR = join(tmpdir(), 'rig-bnxt-ports');
/** Never below this: well-known and registered service ports. */
const LOWEST = 20000;
const reserved = new Set<number>();
let exitHook = false;

/** The ports the kernel may hand out by itself, from /proc (Linux's default 32768..60999). */
export function ephemeralRange(text?: string): [number, number] {
  let raw = text;
  if (raw === undefined) {
    try { raw = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8'); } catch { raw = '32768 60999'; }
  }
  const [lo, hi] = raw.trim().split(/\s+/).map(Number);
  return Number.isInteger(lo) && Number.isInteger(hi) && lo! <= hi! ? [lo!, hi!] : [32768, 60999];
}

/** The ports this module draws from: [LOWEST, 65535] less the ephemeral range. */
export function candidatePorts(range: [number, number] = ephemeralRange()): number[] {
  const out: number[] = [];
  for (let p = LOWEST; p <= 65535; p++) if (p < range[0] || p > range[1]) out.push(p);
  return out;
}

function alive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as { code?: string }).code === 'EPERM'; }
}

/** Lock files this process holds (removed at exit). */
const held = new Set<string>();

/**
 * Takes the lock file of `port` in `dir` for this process, or says another process holds it.
 * The lock appears whole, holding its owner's pid: it is written under a name of this process's
 * own and then linked into place, and link fails if the name exists. (Created and then written
 * in place, it could be read empty in between by another process, which would take it for
 * stale and remove it.)
 */
export function lockPort(port: number, dir: string = LOCK_DIR): boolean {
  const file = join(dir, String(port));
  const draft = join(dir, `.draft-${process.pid}-${port}`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(draft, String(process.pid));
  } catch {
    return false;
  }
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(draft, file);
        hold(file);
        return true;
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST') return false;
      }
      if (!breakStale(file)) return false;
    }
    return false;
  } finally {
    rmSync(draft, { force: true });
  }
}

/** Gives back a lock `lockPort` took. */
export function unlockPort(port: number, dir: string = LOCK_DIR): void {
  const file = join(dir, String(port));
  if (held.delete(file)) rmSync(file, { force: true });
}

function hold(file: string): void {
  held.add(file);
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => { for (const f of held) rmSync(f, { force: true }); });
  }
}

/**
 * Removes the lock `file` if its owner is gone, and says whether to try to take it again. One
 * process at a time judges a lock: the one that created `<file>.break`. Two that both read the
 * dead owner's pid would otherwise both remove "the stale lock", the second removing the lock
 * the first had just taken, and both would use the port. A lock without a pid (written in place
 * by an older version of this module, perhaps this very moment) is left alone; so is one whose
 * judge died judging: either keeps one port out of use, nothing worse.
 */
function breakStale(file: string): boolean {
  const breaker = `${file}.break`;
  try {
    closeSync(openSync(breaker, 'wx'));
  } catch {
    return false;
  }
  try {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return true; // gone already: try to take it
    }
    const owner = Number(text);
    if (!(Number.isInteger(owner) && owner > 0) || alive(owner)) return false;
    rmSync(file, { force: true });
    return true;
  } finally {
    rmSync(breaker, { force: true });
  }
}

function bindable(port: number, kind: 'udp' | 'tcp'): Promise<boolean> {
  return new Promise((resolve) => {
    if (kind === 'udp') {
      const socket = createSocket('udp4');
      socket.once('error', () => { socket.close(); resolve(false); });
      socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
    } else {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
    }
  });
}

/** A free port of `kind`, reserved for this process (see the header). */
async function reservePort(kind: 'udp' | 'tcp'): Promise<number> {
  const candidates = candidatePorts();
  for (let tries = 0; tries < 200; tries++) {
    const port = candidates[Math.floor(Math.random() * candidates.length)]!;
    if (reserved.has(port) || !lockPort(port)) continue;
    reserved.add(port);
    // Free for both kinds: a port's users here are QEMU (UDP and TCP) and rig-bnxt (UDP and TCP).
    if (await bindable(port, kind)) return port;
    reserved.delete(port);
    unlockPort(port);
  }
  throw new Error(`no free ${kind.toUpperCase()} port on 127.0.0.1 outside the ephemeral range after 200 tries`);
}

export function freeUdpPort(): Promise<number> {
  return reservePort('udp');
}

export function freeTcpPort(): Promise<number> {
  return reservePort('tcp');
}

/** Distinct reserved ports: two UDP, two TCP. */
export async function pickRunPorts(): Promise<RunPorts> {
  return {
    guestPort: await freeUdpPort(), hostPort: await freeUdpPort(), tcpPort: await freeTcpPort(),
    serverPort: await freeTcpPort(),
  };
}

/** Two distinct reserved UDP ports on 127.0.0.1 (the two ends of a software NIC cable). */
export async function freeUdpPortPair(): Promise<[number, number]> {
  return [await freeUdpPort(), await freeUdpPort()];
}
