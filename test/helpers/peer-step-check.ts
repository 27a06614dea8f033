/**
 * Checks one guest step against rig-bnxt on the host (scripts/bnxt-guest/host-peer.ts's
 * PeerStepResult) in the capture of the guest NIC's port: both ends exited 0, both counted the
 * same messages, every RoCEv2 frame parses, no NAK but the one a dropped frame explains, and
 * every payload intact (perf's and perftest's against what each side sends, ibv_rc_pingpong's
 * and rig-bnxt pingpong's echoes). For the bnxt guest (bnxt_re's tools) and the VFIO bnxt guest
 * (rig-bnxt's own driver in the guest).
 */
import type { Test } from 'tap';
import type { PeerStepResult } from '../../scripts/bnxt-guest/host-peer.ts';
import { checkPingpongCapture, type CapturedFrame } from '../../scripts/interop/capture-check.ts';
import { PERF_SEND_FILL } from '../../scripts/cli/run-perf.ts';

/** The QP numbers and PSNs of a perftest step (" local address: LID 0000 QPN 0x000a PSN 0x117b7e"). */
export function perftestAddresses(
  lines: readonly string[],
): { local: [number, number]; remote: [number, number] } | null {
  const text = lines.join('\n');
  const get = (side: string): [number, number] | null => {
    const m = new RegExp(`${side} address: LID \\S+ QPN 0x([0-9a-f]+) PSN 0x([0-9a-f]+)`, 'i').exec(text);
    return m ? [parseInt(m[1]!, 16), parseInt(m[2]!, 16)] : null;
  };
  const local = get('local');
  const remote = get('remote');
  return local && remote ? { local, remote } : null;
}

export interface PeerStepCheckOptions {
  /** The guest NIC's MAC, as its frames carry it. */
  readonly guestMac: string;
  /** What the guest runs, for the messages: its pingpong and its perf tool. */
  readonly guestTools: { readonly pingpong: string; readonly perf: string };
  /** The bytes of one message of `size` the guest's perf side sends. */
  readonly fromGuest: (size: number) => Uint8Array;
}

/** Checks one host-peer step; returns the guest packets its capture shows past a gap (a lost frame). */
export function checkPeerStep(
  t: Test, s: PeerStepResult, frames: readonly CapturedFrame[], o: PeerStepCheckOptions,
): number {
  const id = s.step.id;
  const iters = 'iters' in s.step ? s.step.iters : 0;
  const size = 'sizeBytes' in s.step ? s.step.sizeBytes : 0;
  const role = s.step.kind.endsWith('client') ? 'client' : 'server';
  t.equal(s.status, 0, `${id}: the guest's ${s.perftest !== null || 'test' in s.step ? o.guestTools.perf
    : o.guestTools.pingpong} exits 0`);
  t.equal(s.host?.exitCode, 0, `${id}: rig-bnxt on the host exits 0`);
  let pair;
  if ('test' in s.step) {
    const hostRow = (s.host?.output ?? '').split('\n').find((l) => new RegExp(`^\\s*${size}\\s+${iters}\\s`).test(l));
    t.same([s.perftest?.sizeBytes, s.perftest?.iterations], [size, iters],
      `${id}: the guest counted ${iters} messages of ${size} B`);
    t.ok(hostRow !== undefined, `${id}: rig-bnxt perf counted the same`);
    const a = perftestAddresses(s.output);
    if (a === null) {
      t.fail(`${id}: no QP addresses in the guest's output`);
      return 0;
    }
    // Both ends send known bytes (rig-bnxt perf its fill, the guest's side what fromGuest says):
    // every message each way is compared with them, byte for byte.
    pair = {
      guestQpn: a.local[0], guestPsn: a.local[1], hostQpn: a.remote[0], hostPsn: a.remote[1], sizeBytes: size, iters,
      role, payloads: { toGuest: new Uint8Array(size).fill(PERF_SEND_FILL), fromGuest: o.fromGuest(size) },
    } as const;
  } else {
    t.equal(s.pingpong?.iters, iters, `${id}: the guest's ${o.guestTools.pingpong} did ${iters} iterations`);
    const pp = s.pingpong;
    if (pp === null) return 0;
    pair = {
      guestQpn: pp.localQpn, guestPsn: pp.localPsn, hostQpn: pp.remoteQpn, hostPsn: pp.remotePsn, sizeBytes: size,
      iters, role,
    } as const;
  }
  const c = checkPingpongCapture(frames, pair, o.guestMac);
  // A bandwidth test's messages go one way, the client's to the server (perftest send_bw.c).
  const oneWay = 'test' in s.step && s.step.test.endsWith('_bw');
  const toGuest = oneWay && role === 'client' ? 0 : iters;
  const fromGuest = oneWay && role === 'server' ? 0 : iters;
  t.equal(c.messagesToGuest, toGuest, `${id}: ${toGuest} messages host -> guest on the cable`);
  t.equal(c.messagesFromGuest, fromGuest, `${id}: ${fromGuest} messages guest -> host on the cable`);
  t.same(c.badFrames, [], `${id}: every RoCEv2 frame parses (checksums, ICRC)`);
  // The NAKs the run may show: a receiver's, asking for a frame the cable lost again. The
  // host's, for a guest frame lost before the capture (the guest's packets after the gap are out
  // of sequence for it); the guest's, for a host frame lost after a capture on the host's side
  // (host-peer.ts's per-step one: then the host resends what the capture already saw).
  const lossNak = /^(host|guest) sent NAK\(PSN_SEQUENCE_ERROR\)/;
  const explained = (n: string) => lossNak.test(n) &&
    (n.startsWith('host') ? c.outOfSequenceFromGuest > 0 : c.repeatedPsnsToGuest > 0);
  t.same(c.naks.filter((n) => !explained(n)), [], `${id}: no other NAK`);
  // The capture is the model's, whose reading of the host's UDP socket a loaded machine delays,
  // so the time between a packet and its resend seen there is not the sender's: reported only.
  if (c.repeatedPsnsToGuest + c.repeatedPsnsFromGuest > 0)
    t.comment(`${id}: ${c.repeatedPsnsToGuest} packets resent to the guest, ${c.repeatedPsnsFromGuest} from it`);
  if ('test' in s.step) {
    t.equal(c.payloadsCompared, toGuest + fromGuest, `${id}: every message compared with what its sender posted`);
    t.same(c.payloadMismatches, [], `${id}: every payload went through both NICs intact`);
  } else {
    // ibv_rc_pingpong sends from the buffer it receives into (rig-bnxt pingpong does the same):
    // each message the guest sends back is the one it received, byte for byte.
    t.equal(c.echoesCompared, role === 'client' ? iters - 1 : iters, `${id}: every echo compared`);
    t.same(c.echoMismatches, [], `${id}: every payload went through both NICs intact`);
  }
  return c.outOfSequenceFromGuest;
}
