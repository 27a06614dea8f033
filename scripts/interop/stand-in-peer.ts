/**
 * A stand-in for the host side of the interop harness, used to test the harness itself before
 * rig-bnxt's pingpong exists: a minimal RC peer in plain TypeScript (no NIC model) that speaks
 * ibv_rc_pingpong's TCP exchange and RoCEv2 SENDs over the guest's UDP data link. It takes the
 * same flags as the rig-bnxt host command template:
 *
 *   stand-in-peer.ts pingpong -d emu:HOST_PORT:GUEST_PORT --ipv4 IP --nic-mac OWN_MAC --mac PEER_MAC
 *                    --eth-mtu 1500 -m 1024 -s SIZE -n ITERS -p TCP_PORT [SERVER]
 *
 * With SERVER it is the client (sends first); without, it listens on 127.0.0.1:TCP_PORT.
 * Message k carries a pattern of k, and the peer's echo is checked byte for byte: ibv_rc_pingpong
 * sends from the buffer it receives into. Duplicates are re-ACKed, a PSN gap is NAKed, an
 * unacknowledged message is sent again after RETRY_MS. Prints ibv_rc_pingpong's report lines and
 * a "stand-in:" counter line; exits 1 on any failure.
 */
import { createSocket } from 'node:dgram';
import { RoceFrame } from '../../drivers/emu/model/wire/roce-frame.ts';
import { buildFrame } from '../../drivers/emu/model/wire/build.ts';
import { parseFrame } from '../../drivers/emu/model/wire/parse.ts';
import { ParseStatus } from '../../drivers/emu/model/wire/parse-status.ts';
import { Opcode } from '../../drivers/emu/model/wire/opcodes.ts';
import {
  AETH_SYNDROME_ACK, AethKind, NakCode, aethKind, aethSyndromeName, nakSyndrome,
} from '../../drivers/emu/model/wire/aeth.ts';
import { parseIpv4, parseMac } from '../../drivers/emu/model/wire/addresses.ts';
import { PSN_MASK } from '../../firmware-hwrm/roce/ib-transport.ts';
import { pingpongClientExchange, pingpongServerExchange, type PingpongDest } from '../cli/exchange.ts';

const PATH_MTU = 1024;
const RETRY_MS = 1_000;
const LOCAL_QPN = 0x000100;

interface Options {
  hostPort: number; guestPort: number; ip: number; mac: Uint8Array; peerMac: Uint8Array; size: number; iters: number;
  tcpPort: number; server: string | null;
}

const USAGE = 'usage: stand-in-peer.ts pingpong -d emu:HOST:GUEST --ipv4 IP --nic-mac MAC --mac PEER_MAC [-m 1024] ' +
  '-s SIZE -n ITERS -p PORT [SERVER]';

function parseOptions(argv: readonly string[]): Options {
  if (argv[0] !== 'pingpong') throw new Error(USAGE);
  const o: Partial<Options> = { server: null };
  const int = (v: string | undefined, name: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${name}: "${v}"`);
    return n;
  };
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    const v = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${a} needs a value`);
      return next;
    };
    if (a === '-d') {
      const m = /^emu:(\d+):(\d+)$/.exec(v());
      if (!m) throw new Error('-d emu:HOST_PORT:GUEST_PORT');
      o.hostPort = int(m[1], 'host port');
      o.guestPort = int(m[2], 'guest port');
    }
    else if (a === '--ipv4') { const ip = parseIpv4(v()); if (ip === null) throw new Error('--ipv4'); o.ip = ip; }
    else if (a === '--nic-mac') { const m = parseMac(v()); if (m === null) throw new Error('--nic-mac'); o.mac = m; }
    else if (a === '--mac') { const m = parseMac(v()); if (m === null) throw new Error('--mac'); o.peerMac = m; }
    else if (a === '--eth-mtu') v();
    else if (a === '-m') { if (v() !== String(PATH_MTU)) throw new Error(`-m: only ${PATH_MTU} is supported`); }
    else if (a === '-s') o.size = int(v(), '-s');
    else if (a === '-n') o.iters = int(v(), '-n');
    else if (a === '-p') o.tcpPort = int(v(), '-p');
    else if (a !== undefined && !a.startsWith('-')) o.server = a;
    else throw new Error(`unknown option ${a}`);
  }
  for (const k of ['hostPort', 'guestPort', 'ip', 'mac', 'peerMac', 'size', 'iters', 'tcpPort'] as const) {
    if (o[k] === undefined) throw new Error(`missing ${k}`);
  }
  return o as Options;
}

/** The content of message k: distinct per message and per byte, so an echo of the wrong one shows. */
function fillPattern(buf: Uint8Array, k: number): void {
  for (let i = 0; i < buf.length; i++) buf[i] = (k * 131 + i * 7 + (i >>> 8)) & 0xff;
}

/** Signed distance a - b on the 24-bit PSN circle. */
function psnDiff(a: number, b: number): number {
  return ((a - b) << 8) >> 8;
}

function mappedGid(ip: number): Uint8Array {
  const gid = new Uint8Array(16);
  gid[10] = 0xff; gid[11] = 0xff;
  gid[12] = ip >>> 24; gid[13] = (ip >>> 16) & 0xff; gid[14] = (ip >>> 8) & 0xff; gid[15] = ip & 0xff;
  return gid;
}

async function main(): Promise<number> {
  const o = parseOptions(process.argv.slice(2));
  const psn = Math.floor(Math.random() * PSN_MASK);
  const local: PingpongDest = { lid: 0, qpn: LOCAL_QPN, psn, gid: mappedGid(o.ip) };
  const hex = (n: number, digits: number) => n.toString(16).padStart(digits, '0');
  const fmt = (d: PingpongDest) => `LID 0x${hex(d.lid, 4)}, QPN 0x${hex(d.qpn, 6)}, PSN 0x${hex(d.psn, 6)}`;
  console.log(`  local address:  ${fmt(local)}`);

  const socket = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(o.hostPort, '127.0.0.1', () => resolve());
  });
  const exchanged = o.server !== null
    ? await pingpongClientExchange(o.server, o.tcpPort, local)
    : await pingpongServerExchange(o.tcpPort, local, { listenHost: '127.0.0.1' });
  if (!exchanged.ok) { console.error(`exchange failed: ${exchanged.error}`); socket.close(); return 1; }
  const peer = exchanged.value;
  console.log(`  remote address: ${fmt(peer)}`);
  const peerIp = ((peer.gid[12]! << 24) | (peer.gid[13]! << 16) | (peer.gid[14]! << 8) | peer.gid[15]!) >>> 0;

  const client = o.server !== null;
  const tx = new RoceFrame();
  tx.dstMac.set(o.peerMac); tx.srcMac.set(o.mac); tx.srcIp = o.ip; tx.dstIp = peerIp; tx.destQp = peer.qpn;
  const rx = new RoceFrame();
  const out = new Uint8Array(2048);
  const sendBuf = new Uint8Array(o.size);
  const recvBuf = new Uint8Array(o.size);
  const packets = Math.max(1, Math.ceil(o.size / PATH_MTU));
  let sqPsn = local.psn; // next PSN we send
  let rqPsn = peer.psn; // next PSN we expect
  let msn = 0;
  let recvAt = 0;
  let sent = 0, acked = 0, received = 0;
  let outstandingFirst = 0, outstandingLast = 0, outstandingSince = 0;
  const stats = { duplicates: 0, outOfSequence: 0, retransmitted: 0, naksReceived: 0, echoErrors: 0 };
  let failure: string | null = null;

  // dgram.send reads the bytes only when the datagram leaves, later: each frame gets its own copy.
  const send = (n: number): void => { socket.send(Buffer.from(out.subarray(0, n)), o.guestPort, '127.0.0.1'); };
  const transmit = (): void => {
    let psn = outstandingFirst;
    for (let p = 0; p < packets; p++, psn = (psn + 1) & PSN_MASK) {
      const only = packets === 1, last = p === packets - 1;
      tx.opcode = only ? Opcode.RC_SEND_ONLY
        : p === 0 ? Opcode.RC_SEND_FIRST : last ? Opcode.RC_SEND_LAST : Opcode.RC_SEND_MIDDLE;
      tx.psn = psn; tx.ackReq = last ? 1 : 0;
      tx.payloadLength = Math.min(PATH_MTU, o.size - p * PATH_MTU);
      const n = buildFrame(out, tx, sendBuf, p * PATH_MTU);
      send(n);
    }
    outstandingSince = Date.now();
  };
  const sendMessage = (k: number): void => {
    fillPattern(sendBuf, k);
    outstandingFirst = sqPsn;
    outstandingLast = (sqPsn + packets - 1) & PSN_MASK;
    sqPsn = (sqPsn + packets) & PSN_MASK;
    sent++;
    transmit();
  };
  const ack = (syndrome: number, psn: number): void => {
    tx.opcode = Opcode.RC_ACKNOWLEDGE; tx.psn = psn; tx.ackReq = 0; tx.payloadLength = 0;
    tx.aethSyndrome = syndrome; tx.aethMsn = msn;
    const n = buildFrame(out, tx, out, 0);
    send(n);
  };
  const checkEcho = (): void => {
    // As the client, the guest's k-th message echoes our k-th; as the server, its (k+1)-th echoes our k-th.
    const echoed = client ? received - 1 : received - 2;
    if (echoed < 0) return;
    const expected = new Uint8Array(o.size);
    fillPattern(expected, echoed);
    for (let i = 0; i < o.size; i++) {
      if (recvBuf[i] === expected[i]) continue;
      stats.echoErrors++;
      const got = recvBuf[i]!.toString(16);
      failure ??= `message ${received}: byte ${i} is 0x${got}, expected 0x${expected[i]!.toString(16)}`;
      return;
    }
  };
  const pump = (): void => {
    // As the client we send first; as the server, each message answers one received.
    const answered = client ? received === sent : received === sent + 1;
    if (acked === sent && answered && sent < o.iters) sendMessage(sent);
  };

  socket.on('message', (msg: Buffer) => {
    const frame = new Uint8Array(msg.buffer, msg.byteOffset, msg.length);
    if (parseFrame(frame, frame.length, rx, o.mac) !== ParseStatus.OK || rx.destQp !== LOCAL_QPN) return;
    if (rx.opcode === Opcode.RC_ACKNOWLEDGE) {
      const kind = aethKind(rx.aethSyndrome);
      if (kind !== AethKind.ACK) {
        stats.naksReceived++;
        failure ??= `peer sent ${aethSyndromeName(rx.aethSyndrome)} for PSN ${rx.psn}`;
        return;
      }
      if (acked < sent && psnDiff(rx.psn, outstandingLast) >= 0) acked++;
      pump();
      return;
    }
    const d = psnDiff(rx.psn, rqPsn);
    if (d < 0) { stats.duplicates++; if (rx.ackReq) ack(AETH_SYNDROME_ACK, (rqPsn - 1) & PSN_MASK); return; }
    if (d > 0) { stats.outOfSequence++; ack(nakSyndrome(NakCode.PSN_SEQUENCE_ERROR), rqPsn); return; }
    const op = rx.opcode;
    if (op === Opcode.RC_SEND_FIRST || op === Opcode.RC_SEND_ONLY) recvAt = 0;
    if (recvAt + rx.payloadLength > o.size) { failure ??= `message longer than ${o.size} bytes`; return; }
    recvBuf.set(frame.subarray(rx.payloadOffset, rx.payloadOffset + rx.payloadLength), recvAt);
    recvAt += rx.payloadLength;
    rqPsn = (rqPsn + 1) & PSN_MASK;
    if (op === Opcode.RC_SEND_LAST || op === Opcode.RC_SEND_ONLY) {
      msn = (msn + 1) & PSN_MASK;
      received++;
      if (recvAt !== o.size) failure ??= `message ${received} is ${recvAt} bytes, expected ${o.size}`;
      checkEcho();
    }
    if (rx.ackReq) ack(AETH_SYNDROME_ACK, rx.psn);
    pump();
  });

  const started = Date.now();
  const deadline = started + 30_000 + o.iters * 100;
  if (client) sendMessage(0);
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (acked < sent && Date.now() - outstandingSince > RETRY_MS) { stats.retransmitted++; transmit(); }
      const done = acked === o.iters && received === o.iters;
      if (done || failure !== null || Date.now() > deadline) { clearInterval(timer); resolve(); }
    }, 10);
  });
  socket.close();
  const seconds = (Date.now() - started) / 1000;
  console.log(`stand-in: duplicates ${stats.duplicates} out_of_sequence ${stats.outOfSequence} ` +
    `retransmitted ${stats.retransmitted} naks_received ${stats.naksReceived} echo_errors ${stats.echoErrors}`);
  if (failure === null && !(acked === o.iters && received === o.iters)) {
    failure = `timed out: sent ${sent}, acked ${acked}, received ${received} of ${o.iters}`;
  }
  if (failure !== null) { console.error(`stand-in failed: ${failure}`); return 1; }
  const mbits = (o.size * o.iters * 16) / (seconds * 1e6);
  console.log(`${o.size * o.iters * 2} bytes in ${seconds.toFixed(2)} seconds = ${mbits.toFixed(2)} Mbit/sec`);
  const usecPerIter = (seconds * 1e6) / o.iters;
  console.log(`${o.iters} iters in ${seconds.toFixed(2)} seconds = ${usecPerIter.toFixed(2)} usec/iter`);
  return 0;
}

main().then((code) => process.exit(code), (error: unknown) => {
  console.error(`stand-in-peer: ${(error as Error).message}`);
  process.exit(2);
});
