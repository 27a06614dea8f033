/**
 * The peer's MAC where the system knows it. ibv_rc_pingpong's and perftest's exchanges carry the
 * peer's GID only; the kernel's verbs resolve the MAC from the GID's IP address through the
 * neighbour table (ARP). A userspace driver that owns the NIC has no netdev of its own, so this
 * looks in the same places, in order:
 *  1. the GID itself, when it is a link-local GID made from the MAC (fe80::/64, modified EUI-64);
 *  2. the kernel's IPv4 neighbour table, /proc/net/arp (complete entries only: flag ATF_COM 0x2),
 *     for an IPv4-mapped GID (::ffff:a.b.c.d);
 *  3. the addresses that rig-bnxt processes on this machine publish for their own NICs while they
 *     run (one file per IPv4 address in a folder under the temporary directory, with the owner's
 *     process id: entries of processes that are gone are ignored). Two rig-bnxt processes on
 *     software NICs, whose addresses no kernel interface has, find each other there.
 * Nothing found is an error naming each place, and --mac.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { macFromGid } from './exchange.ts';
import { gidToIpv6Text } from './tables.ts';
import { ok, err, type Result } from './result.ts';

export const ARP_TABLE = '/proc/net/arp';
/** The kernel's "complete" flag of an ARP entry (include/uapi/linux/if_arp.h ATF_COM). */
const ATF_COM = 0x2;

export interface NeighbourPlaces {
  readonly arpTable?: string;
  /** The folder where rig-bnxt processes publish their NICs' addresses. */
  readonly published?: string;
}

export function defaultPublishedFolder(): string {
  let user = 'user';
  try { user = String(userInfo().uid); } catch { /* no passwd entry: one folder for all */ }
  return join(tmpdir(), `rig-bnxt-neighbours-${user}`);
}

/** The IPv4 address inside an IPv4-mapped GID (::ffff:a.b.c.d), or undefined. */
export function ipv4FromGid(gid: Uint8Array): string | undefined {
  if (gid.length !== 16 || !gid.subarray(0, 10).every((b) => b === 0) || gid[10] !== 0xff || gid[11] !== 0xff)
    return undefined;
  return `${gid[12]}.${gid[13]}.${gid[14]}.${gid[15]}`;
}

/** A complete entry of /proc/net/arp's text for `ipv4`, or undefined. */
export function macFromArpTable(text: string, ipv4: string): Uint8Array | undefined {
  for (const line of text.split('\n').slice(1)) {
    const [ip, , flags, hw] = line.trim().split(/\s+/);
    if (ip !== ipv4 || hw === undefined || flags === undefined) continue;
    if ((parseInt(flags, 16) & ATF_COM) === 0) continue; // incomplete: no answer yet
    const mac = parseMacText(hw);
    if (mac !== undefined && mac.some((b) => b !== 0)) return mac;
  }
  return undefined;
}

/** Looks the peer's MAC up where the system knows it (see the header). */
export function resolvePeerMac(gid: Uint8Array, places: NeighbourPlaces = {}): Result<Uint8Array> {
  const fromGid = macFromGid(gid);
  if (fromGid !== undefined) return ok(fromGid);
  const ipv4 = ipv4FromGid(gid);
  if (ipv4 === undefined)
    return err(
      `the peer's GID ${gidToIpv6Text(gid)} carries no MAC and no IPv4 address to look it up by: give it with --mac ` +
        `aa:bb:cc:dd:ee:ff`,
    );
  const arpTable = places.arpTable ?? ARP_TABLE;
  let arp = '';
  try { arp = readFileSync(arpTable, 'utf8'); } catch { /* not Linux, or no permission: the next place */ }
  const fromArp = macFromArpTable(arp, ipv4);
  if (fromArp !== undefined) return ok(fromArp);
  const folder = places.published ?? defaultPublishedFolder();
  const fromPeer = publishedMac(folder, ipv4);
  if (fromPeer !== undefined) return ok(fromPeer);
  return err(
    `the peer's MAC is not known: its GID ${gidToIpv6Text(gid)} carries none, ${arpTable} has no complete entry for ` +
      `${ipv4}, and no rig-bnxt process here published it: give it with --mac aa:bb:cc:dd:ee:ff`,
  );
}

/**
 * Publishes this process's NIC address for other rig-bnxt processes on this machine; returns
 * the function that withdraws it (also done at exit). Failing to publish only costs the peer a
 * --mac, so it is silent.
 */
export function publishOwnAddress(ipv4: string, mac: Uint8Array, folder: string = defaultPublishedFolder()): () =>
  void {
  const file = join(folder, ipv4);
  let withdrawn = false;
  const withdraw = () => {
    if (withdrawn) return;
    withdrawn = true;
    process.off('exit', withdraw);
    try {
      const [, pid] = readFileSync(file, 'utf8').trim().split(' ');
      if (Number(pid) === process.pid) rmSync(file, { force: true });
    } catch { /* already gone */ }
  };
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${formatMacText(mac)} ${process.pid}\n`);
    renameSync(tmp, file);
    process.on('exit', withdraw);
  } catch {
    withdrawn = true;
  }
  return withdraw;
}

function publishedMac(folder: string, ipv4: string): Uint8Array | undefined {
  let text: string;
  try { text = readFileSync(join(folder, ipv4), 'utf8'); } catch { return undefined; }
  const [macText, pidText] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return undefined;
  return macText === undefined ? undefined : parseMacText(macText);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM'; // exists, owned by someone else
  }
}

function parseMacText(text: string): Uint8Array | undefined {
  const m = /^([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})$/
    .exec(text);
  return m ? Uint8Array.from(m.slice(1), (h) => parseInt(h, 16)) : undefined;
}

function formatMacText(mac: Uint8Array): string {
  return [...mac].map((b) => b.toString(16).padStart(2, '0')).join(':');
}
