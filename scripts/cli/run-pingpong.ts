/**
 * `rig-bnxt pingpong`: ibv_rc_pingpong's exchange and loop, so it pairs with a real
 * ibv_rc_pingpong (rdma-core libibverbs/examples/rc_pingpong.c): the LID:QPN:PSN:GID
 * message each way over TCP, then messages bounce between the two sides, the client first.
 * rc_pingpong's exchange carries no MAC, so the peer's MAC is an option.
 */
import { Qp, Region } from '../../lib/index.ts';
import type { PingpongCommand } from './commands.ts';
import { openNic } from './nic-open.ts';
import { pingpongServerExchange, pingpongClientExchange, type PingpongDest } from './exchange.ts';
import { publishOwnAddress, resolvePeerMac } from './neighbours.ts';
import { pingpongAddressLine, pingpongSummaryLines } from './tables.ts';
import { createProgress } from './progress.ts';
import { ok, err, type Result } from '../../lib/result.ts';

const WAIT_US = 10_000_000;
/** What rc_pingpong's buffer holds before the first message (its pp_init_ctx fills it so). */
const INITIAL_BYTE = 0x7b;

/** The byte pattern of message `i` (both sides check what they receive). */
function fill(bytes: Uint8Array, size: number, i: number): void {
  for (let k = 0; k < size; k++) bytes[k] = (i + k) & 0xff;
}

function check(bytes: Uint8Array, at: number, size: number, i: number): boolean {
  for (let k = 0; k < size; k++) if (bytes[at + k] !== ((i + k) & 0xff)) return false;
  return true;
}

export async function runPingpong(
  cmd: PingpongCommand, log: (l: string) => void = (l) => console.log(l),
): Promise<number> {
  const nic = openNic(cmd.device, cmd, cmd.pcapFile);
  if (!nic.ok) {
    console.error(`rig-bnxt pingpong: cannot open ${cmd.device}: ${nic.error}`);
    return 1;
  }
  let withdraw = (): void => {};
  try {
    const qp = Qp.make(nic.value);
    if (!qp.ok) throw new Error(qp.error);
    const region = Region.alloc(nic.value, Math.max(2 * cmd.sizeBytes, 64));
    if (!region.ok) throw new Error(region.error);
    const q = qp.value;
    const r = region.value;
    r.bytes.fill(INITIAL_BYTE, 0, 2 * cmd.sizeBytes);
    const e = q.endpoint;
    // Other rig-bnxt processes here find our MAC by our IPv4 (the exchange carries only the GID).
    withdraw = publishOwnAddress(nic.value.info.ipv4, e.mac);
    const local: PingpongDest = { lid: 0, qpn: e.qp, psn: e.psn, gid: e.gid };
    log(pingpongAddressLine('local', local));
    const connect = (peer: PingpongDest): Result<void> => {
      const known = cmd.peerMac !== undefined ? ok(cmd.peerMac) : resolvePeerMac(peer.gid);
      if (!known.ok) return err(known.error);
      const mac = known.value;
      const c = q.connect({ qp: peer.qpn, psn: peer.psn, gid: peer.gid, mac }, { pathMtu: cmd.mtuBytes });
      if (!c.ok) return err(c.error);
      // The receive goes up as soon as the QP is connected: on the server that is before it
      // sends its own address, so a client that sends right after reading it (a real
      // ibv_rc_pingpong may, before or just after "done") meets a posted receive, not an RNR NAK.
      // rc_pingpong posts its receives before the exchange; here posting needs a connected QP.
      q.receive(r, cmd.sizeBytes, cmd.sizeBytes);
      return ok();
    };
    let peer: PingpongDest;
    if (cmd.server === undefined) {
      const p = await pingpongServerExchange(cmd.port, local, { connect });
      if (!p.ok) throw new Error(p.error);
      peer = p.value;
    } else {
      const p = await pingpongClientExchange(cmd.server, cmd.port, local);
      if (!p.ok) throw new Error(p.error);
      peer = p.value;
      const c = connect(peer);
      if (!c.ok) throw new Error(c.error);
    }
    log(pingpongAddressLine('remote', peer));
    const { bad, elapsedUs } = bounce(cmd, q, r);
    for (const l of pingpongSummaryLines(cmd.sizeBytes, cmd.iterations, elapsedUs)) log(l);
    if (bad > 0) {
      console.error(`rig-bnxt pingpong: ${bad} of ${cmd.iterations} messages arrived with wrong bytes`);
      return 1;
    }
    return 0;
  } catch (e) {
    console.error(`rig-bnxt pingpong: ${(e as Error).message}`);
    return 1;
  } finally {
    withdraw();
    nic.value.close();
  }
}

/**
 * The messages bounce: the client sends and waits for the echo; the server waits, then sends
 * back what it received (rc_pingpong's loop, which sends and receives in one buffer: each side's
 * next message is the one it last received, so a capture can check every echo byte for byte).
 * Here each receive lands in the region's second half and is copied to the first, which the next
 * send takes: the receive for the next message is posted before this send completes. With -c the
 * client sends a fresh pattern each time instead, and both sides check what they receive. Returns
 * the messages that came with wrong bytes (checked with -c) and the loop's time.
 */
function bounce(cmd: PingpongCommand, q: Qp, r: Region): { bad: number; elapsedUs: number } {
  const size = cmd.sizeBytes;
  const client = cmd.server !== undefined;
  const progress = createProgress('pingpong', cmd.iterations, cmd.iterations * 0.05);
  let bad = 0;
  const t0 = performance.now();
  for (let i = 0; i < cmd.iterations; i++) {
    if (client) {
      if (cmd.check) fill(r.bytes, size, i);
      q.send(r, 0, size);
      expect(q.waitBytes('send', WAIT_US), q, 'send');
      expect(q.waitBytes('receive', WAIT_US), q, 'receive');
    } else {
      expect(q.waitBytes('receive', WAIT_US), q, 'receive');
      if (cmd.check && !check(r.bytes, size, size, i)) bad++;
      r.bytes.copyWithin(0, size, 2 * size); // before the next receive can land there
      if (i + 1 < cmd.iterations) q.receive(r, size, size);
      q.send(r, 0, size);
      expect(q.waitBytes('send', WAIT_US), q, 'send');
      progress.update(i + 1);
      continue;
    }
    if (cmd.check && !check(r.bytes, size, size, i)) bad++;
    r.bytes.copyWithin(0, size, 2 * size); // the next message echoes this one
    if (i + 1 < cmd.iterations) q.receive(r, size, size);
    progress.update(i + 1);
  }
  const elapsedUs = (performance.now() - t0) * 1000;
  progress.finish();
  return { bad, elapsedUs };
}

function expect(n: number, q: Qp, side: string): void {
  if (n === -1) throw new Error(`no ${side} completion within ${WAIT_US / 1e6} s`);
  if (n === -2) throw new Error(`${side} failed: ${q.lastError}`);
}
