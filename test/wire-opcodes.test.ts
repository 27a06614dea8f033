import t from 'tap';
import { formatIpv4, formatMac, parseIpv4, parseMac } from '../drivers/emu/model/wire/addresses.ts';
import {
  AethKind, NakCode, RNR_TIMER_US, aethKind, aethSyndromeName, aethValue, ackSyndrome, nakSyndrome, rnrNakSyndrome,
} from '../drivers/emu/model/wire/aeth.ts';
import { payloadOffsetFor } from '../drivers/emu/model/wire/build.ts';
import { OPCODE_FLAGS, OpFlag, isKnownOpcode, opcodeName } from '../drivers/emu/model/wire/opcodes.ts';
import { describeFrame } from '../drivers/emu/model/wire/trace.ts';
import { parseFrame } from '../drivers/emu/model/wire/parse.ts';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { READ_REQUEST } from './helpers/wire-fixtures.ts';

// IBA Table 38 (RC): opcode -> [extension header bytes after the BTH, carries payload]
const RC: [number, string, number, boolean][] = [
  [0x00, 'RC_SEND_FIRST', 0, true],
  [0x01, 'RC_SEND_MIDDLE', 0, true],
  [0x02, 'RC_SEND_LAST', 0, true],
  [0x03, 'RC_SEND_LAST_WITH_IMMEDIATE', 4, true],
  [0x04, 'RC_SEND_ONLY', 0, true],
  [0x05, 'RC_SEND_ONLY_WITH_IMMEDIATE', 4, true],
  [0x06, 'RC_RDMA_WRITE_FIRST', 16, true],
  [0x07, 'RC_RDMA_WRITE_MIDDLE', 0, true],
  [0x08, 'RC_RDMA_WRITE_LAST', 0, true],
  [0x09, 'RC_RDMA_WRITE_LAST_WITH_IMMEDIATE', 4, true],
  [0x0a, 'RC_RDMA_WRITE_ONLY', 16, true],
  [0x0b, 'RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE', 20, true],
  [0x0c, 'RC_RDMA_READ_REQUEST', 16, false],
  [0x0d, 'RC_RDMA_READ_RESPONSE_FIRST', 4, true],
  [0x0e, 'RC_RDMA_READ_RESPONSE_MIDDLE', 0, true],
  [0x0f, 'RC_RDMA_READ_RESPONSE_LAST', 4, true],
  [0x10, 'RC_RDMA_READ_RESPONSE_ONLY', 4, true],
  [0x11, 'RC_ACKNOWLEDGE', 4, false],
  [0x12, 'RC_ATOMIC_ACKNOWLEDGE', 12, false],
  [0x13, 'RC_COMPARE_SWAP', 28, false],
  [0x14, 'RC_FETCH_ADD', 28, false],
  [0x16, 'RC_SEND_LAST_WITH_INVALIDATE', 4, true],
  [0x17, 'RC_SEND_ONLY_WITH_INVALIDATE', 4, true],
];

t.test('each RC opcode carries the headers and payload IBA Table 38 gives it', async (t) => {
  for (const [op, name, ext, payload] of RC) {
    t.equal(opcodeName(op), name);
    t.equal(payloadOffsetFor(op), 14 + 20 + 8 + 12 + ext, `${name}: payload offset`);
    t.equal((OPCODE_FLAGS[op]! & OpFlag.PAYLOAD) !== 0, payload, `${name}: payload`);
  }
  let known = 0;
  for (let op = 0; op < 256; op++) if (isKnownOpcode(op)) known++;
  t.equal(known, RC.length, 'nothing else is known (UC, RD, UD, CNP are not taken)');
  t.equal(isKnownOpcode(-1), false);
  t.equal(isKnownOpcode(256 + 4), false);
  t.equal(opcodeName(0x64), 'UNKNOWN_0x64');
});

t.test('AETH syndromes as IBA Tables 43-45 define them', async (t) => {
  t.equal(ackSyndrome(31), 0x1f);
  t.equal(rnrNakSyndrome(14), 0x2e);
  t.equal(nakSyndrome(NakCode.PSN_SEQUENCE_ERROR), 0x60);
  t.equal(nakSyndrome(NakCode.INVALID_REQUEST), 0x61);
  t.equal(nakSyndrome(NakCode.REMOTE_ACCESS_ERROR), 0x62);
  t.equal(nakSyndrome(NakCode.REMOTE_OPERATIONAL_ERROR), 0x63);
  t.equal(nakSyndrome(NakCode.INVALID_RD_REQUEST), 0x64);
  t.equal(aethKind(0x1f), AethKind.ACK);
  t.equal(aethKind(0x2e), AethKind.RNR_NAK);
  t.equal(aethKind(0x41), AethKind.RESERVED);
  t.equal(aethKind(0x62), AethKind.NAK);
  t.equal(aethValue(0x2e), 14);
  t.same([RNR_TIMER_US[0], RNR_TIMER_US[1], RNR_TIMER_US[14], RNR_TIMER_US[25], RNR_TIMER_US[31]], [
    655360, 10, 1280, 61440, 491520,
  ]);
  t.equal(aethSyndromeName(0x62), 'NAK(REMOTE_ACCESS_ERROR)');
  t.equal(aethSyndromeName(0x2e), 'RNR_NAK(timer=14)');
});

t.test('addresses and trace lines', async (t) => {
  t.equal(parseIpv4('10.77.0.1'), 0x0a4d0001);
  t.equal(parseIpv4('255.255.255.255'), 0xffffffff);
  t.equal(parseIpv4('1.2.3'), null);
  t.equal(parseIpv4('1.2.3.256'), null);
  t.equal(formatIpv4(0x7f000001), '127.0.0.1');
  t.same([...parseMac('52:54:00:77:00:0A')!], [0x52, 0x54, 0, 0x77, 0, 10]);
  t.equal(parseMac('52:54:00:77:00'), null);
  t.equal(formatMac(Uint8Array.from([2, 0x62, 0x6e, 0, 0, 1])), '02:62:6e:00:00:01');
  const f = new RoceFrame();
  parseFrame(READ_REQUEST.bytes, READ_REQUEST.bytes.length, f, null);
  t.equal(describeFrame(f),
    '10.77.0.2:49153 > 10.77.0.1 RC_RDMA_READ_REQUEST qp=0x000011 psn=0x000006 A va=0x00007f1234567000 ' +
    'rkey=0x00c0ffee len=4096');
});
