// The capture check's known-payload rule (scripts/interop/capture-check.ts, PingpongPair.payloads),
// used for perftest steps whose two ends send bytes known beforehand and do not echo: every whole
// message each way is compared with what its sender posted, so one byte changed on the way fails.
import t from 'tap';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { buildFrame } from '../drivers/emu/model/wire/build.ts';
import { Opcode } from '../drivers/emu/model/wire/opcodes.ts';
import { AETH_SYNDROME_ACK } from '../drivers/emu/model/wire/aeth.ts';
import { checkPingpongCapture, readPcap } from '../scripts/interop/capture-check.ts';

const GUEST_MAC = [0x52, 0x54, 0x00, 0x77, 0x00, 0x01];
const HOST_MAC = [0x02, 0x62, 0x6e, 0x00, 0x00, 0x02];
const GUEST_QPN = 0x11, HOST_QPN = 0x100;

/** A classic pcap (microsecond stamps, Ethernet) of the records. */
function pcapFile(records: readonly Uint8Array[]): Uint8Array {
  const parts: Buffer[] = [Buffer.from([
    0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
  ])];
  records.forEach((frame, i) => {
    const header = Buffer.alloc(16);
    header.writeUInt32LE(1, 0);
    header.writeUInt32LE(i * 1000, 4);
    header.writeUInt32LE(frame.length, 8);
    header.writeUInt32LE(frame.length, 12);
    parts.push(header, Buffer.from(frame));
  });
  return Buffer.concat(parts);
}

/** A RoCEv2 RC frame between the guest (10.77.0.1, GUEST_QPN) and the host (10.77.0.2, HOST_QPN). */
function rcFrame(fromGuest: boolean, opcode: number, psn: number, payload: Uint8Array): Uint8Array {
  const f = new RoceFrame();
  f.srcMac.set(fromGuest ? GUEST_MAC : HOST_MAC);
  f.dstMac.set(fromGuest ? HOST_MAC : GUEST_MAC);
  f.srcIp = fromGuest ? 0x0a4d0001 : 0x0a4d0002;
  f.dstIp = fromGuest ? 0x0a4d0002 : 0x0a4d0001;
  f.destQp = fromGuest ? HOST_QPN : GUEST_QPN;
  f.opcode = opcode; f.psn = psn; f.ackReq = opcode === Opcode.RC_ACKNOWLEDGE ? 0 : 1;
  f.aethSyndrome = AETH_SYNDROME_ACK; f.aethMsn = 1;
  f.payloadLength = payload.length;
  const out = new Uint8Array(2048);
  return out.slice(0, buildFrame(out, f, payload, 0));
}

const toGuest = new Uint8Array(64).fill(0xa5);
const fromGuest = Uint8Array.from({ length: 64 }, (_, i) => (i * 29 + 0x47) & 0xff);
const none = new Uint8Array(0);
const pair = {
  guestQpn: GUEST_QPN, guestPsn: 500, hostQpn: HOST_QPN, hostPsn: 100, sizeBytes: 64, iters: 2, role: 'server',
  payloads: { toGuest, fromGuest },
} as const;

/** Two round trips, the guest as server: host SEND, guest ACK, guest SEND, host ACK, twice. */
function exchange(guestSecond: Uint8Array, hostSecond: Uint8Array): Uint8Array[] {
  return [
    rcFrame(false, Opcode.RC_SEND_ONLY, 100, toGuest), rcFrame(true, Opcode.RC_ACKNOWLEDGE, 100, none),
    rcFrame(true, Opcode.RC_SEND_ONLY, 500, fromGuest), rcFrame(false, Opcode.RC_ACKNOWLEDGE, 500, none),
    rcFrame(false, Opcode.RC_SEND_ONLY, 101, hostSecond), rcFrame(true, Opcode.RC_ACKNOWLEDGE, 101, none),
    rcFrame(true, Opcode.RC_SEND_ONLY, 501, guestSecond), rcFrame(false, Opcode.RC_ACKNOWLEDGE, 501, none),
  ];
}

t.test('messages that carry what each side posted compare clean, both ways', async (t) => {
  const c = checkPingpongCapture(readPcap(pcapFile(exchange(fromGuest, toGuest))), pair, '52:54:00:77:00:01');
  t.same([c.messagesToGuest, c.messagesFromGuest], [2, 2]);
  t.equal(c.payloadsCompared, 4, 'every message each way');
  t.same(c.payloadMismatches, []);
  t.equal(c.echoesCompared, 0, 'not compared as echoes: perftest does not echo');
});

t.test('one byte changed on the way, either way, is a mismatch naming the byte', async (t) => {
  const guestChanged = Uint8Array.from(fromGuest); guestChanged[37]! ^= 0x01;
  const hostChanged = Uint8Array.from(toGuest); hostChanged[0] = 0xa4;
  const c = checkPingpongCapture(readPcap(pcapFile(exchange(guestChanged, hostChanged))), pair, '52:54:00:77:00:01');
  t.equal(c.payloadsCompared, 4);
  t.same(c.payloadMismatches, [
    `host message 2 (frame 4): byte 0 is 0xa4, expected 0xa5`,
    `guest message 2 (frame 6): byte 37 is 0x${guestChanged[37]!.toString(16)}, expected ` +
      `0x${fromGuest[37]!.toString(16)}`,
  ]);
});
