/**
 * The fault injector's deterministic drop (engine.dropFrames: the next N frames with a BTH opcode)
 * takes RoCEv2 frames only. A frame that is not RoCEv2 has no BTH, whatever byte sits where a
 * BTH would: the bnxt guest's ping once lost its first echo request this way, its timestamp's
 * low byte being RC_SEND_MIDDLE's opcode 0x01, while the SEND_MIDDLE the test meant to drop went
 * through and was never resent.
 */
import t from 'tap';
import { FaultCable } from '../drivers/emu/model/cable/faults.ts';
import type { Cable, FrameReceiver } from '../drivers/emu/model/cable/cable.ts';
import { Random } from '../drivers/emu/model/random.ts';
import { SEND_ONLY, DST_MAC, SRC_MAC } from './helpers/wire-fixtures.ts';

/** Records what reaches the wire, and brings frames in from it. */
class WireRecorder implements Cable {
  readonly sent: Uint8Array[] = [];
  private receiver: FrameReceiver = () => {};
  send(frame: Uint8Array, length: number): void {
    this.sent.push(frame.slice(0, length));
  }
  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }
  close(): void {}
  arrive(frame: Uint8Array): void {
    this.receiver(frame, frame.length);
  }
}

/**
 * An ICMP echo request as ping sends it (RFC 792; Ethernet II, IPv4 protocol 1): 8 bytes of ICMP
 * header, then the data, whose first byte (the timestamp's lowest) is `firstDataByte`; that byte is
 * at offset 42, where a RoCEv2 frame has its BTH opcode.
 */
function icmpEcho(firstDataByte: number): Uint8Array {
  const data = new Uint8Array(56);
  data[0] = firstDataByte;
  return Uint8Array.from([
    ...DST_MAC, ...SRC_MAC, 0x08, 0x00,
    0x45, 0x00, 0x00, 84, 0x12, 0x34, 0x40, 0x00, 64, 1, 0x00, 0x00, 10, 77, 0, 2, 10, 77, 0, 9,
    8, 0, 0x00, 0x00, 0x00, 0xb3, 0x00, 0x01,
    ...data,
  ]);
}

/** SEND_ONLY's bytes with another BTH opcode. */
function roceWithOpcode(opcode: number): Uint8Array {
  const b = SEND_ONLY.bytes.slice();
  b[42] = opcode;
  return b;
}

/** The same RoCEv2 frame with its UDP destination port changed (not RoCEv2 any more). */
function otherUdpPort(opcode: number): Uint8Array {
  const b = roceWithOpcode(opcode);
  b[36] = 0x12;
  b[37] = 0x34;
  return b;
}

const RC_SEND_MIDDLE = 0x01;

t.test('a drop by opcode takes the next RoCEv2 frame with that opcode and nothing else', async (t) => {
  const wire = new WireRecorder();
  const cable = new FaultCable(wire, new Random(1), () => 0, 2048);
  cable.dropMatching('tx', RC_SEND_MIDDLE, -1, 1);
  const ping = icmpEcho(RC_SEND_MIDDLE);
  t.equal(ping[42], RC_SEND_MIDDLE, 'the echo request has 0x01 where a BTH opcode would be');
  cable.send(ping, ping.length);
  const udp = otherUdpPort(RC_SEND_MIDDLE);
  cable.send(udp, udp.length);
  const first = roceWithOpcode(0x00); // RC SEND_FIRST
  cable.send(first, first.length);
  const middle = roceWithOpcode(RC_SEND_MIDDLE);
  cable.send(middle, middle.length);
  const again = roceWithOpcode(RC_SEND_MIDDLE);
  again[51] ^= 1; // another PSN: the count was one
  cable.send(again, again.length);
  t.same(wire.sent, [ping, udp, first, again],
    'the ping, the UDP datagram to another port and SEND_FIRST went out; the first SEND_MIDDLE did not');
  t.equal(cable.tx.dropped, 1, 'one frame dropped');
  t.equal(cable.tx.matchCount, 0, 'the drop is spent');
});

t.test('a drop by opcode and PSN waits for that PSN', async (t) => {
  const wire = new WireRecorder();
  const cable = new FaultCable(wire, new Random(1), () => 0, 2048);
  const psn = 0xabcdef; // SEND_ONLY's
  cable.dropMatching('rx', 0x04, psn + 1, 1);
  const delivered: Uint8Array[] = [];
  cable.setReceiver((f, n) => delivered.push(f.slice(0, n)));
  const same = SEND_ONLY.bytes.slice();
  wire.arrive(same);
  const next = SEND_ONLY.bytes.slice();
  next[53] = 0xf0; // PSN 0xABCDF0
  wire.arrive(next);
  t.same(delivered, [same], 'the frame of another PSN came in; the one named was dropped');
  t.equal(cable.rx.dropped, 1);
});
