/**
 * Wireshark's RoCEv2 ("RRoCE") dissector reads a pcap of one frame of every kind the engine
 * sends and finds the opcode, QP, PSN, AckReq, pad count, RETH and AETH fields the builder was
 * given, and a good IPv4 header checksum. (Wireshark 4.0 does not verify the ICRC; it shows the
 * wire bytes read big-endian, which must be our ICRC byte-swapped.)
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AethKind, NakCode, AETH_SYNDROME_ACK, nakSyndrome, rnrNakSyndrome } from '../drivers/emu/model/wire/aeth.ts';
import { buildFrame } from '../drivers/emu/model/wire/build.ts';
import { Opcode } from '../drivers/emu/model/wire/opcodes.ts';
import { PcapWriter } from '../drivers/emu/host/cable/pcap-writer.ts';
import { RoceFrame } from '../drivers/emu/model/wire/roce-frame.ts';
import { DST_IP, DST_MAC, SRC_IP, SRC_MAC } from './helpers/wire-fixtures.ts';

interface Row {
  op: number; qp: number; psn: number; len: number; ackReq?: number;
  syndrome?: number; msn?: number; reth?: [number, number, number, number];
  /** What tshark should show: AETH kind, RNR timer, NAK code. */
  aethKind?: number; timer?: number; nak?: number;
}

const O = Opcode;
const ROWS: Row[] = [
  { op: O.RC_SEND_FIRST, qp: 0x000101, psn: 100, len: 1024 },
  { op: O.RC_SEND_MIDDLE, qp: 0x000101, psn: 101, len: 1024 },
  { op: O.RC_SEND_LAST, qp: 0x000101, psn: 102, len: 5, ackReq: 1 },
  { op: O.RC_SEND_ONLY, qp: 0x000101, psn: 103, len: 64, ackReq: 1 },
  { op: O.RC_RDMA_READ_REQUEST, qp: 0x000101, psn: 200, len: 0, ackReq: 1, reth: [
    0x00007f00, 0x00001000, 0x00001234, 3000,
  ] },
  { op: O.RC_RDMA_READ_RESPONSE_FIRST, qp: 0x000202, psn: 200, len: 1024, syndrome: AETH_SYNDROME_ACK, msn: 1,
    aethKind: AethKind.ACK },
  { op: O.RC_RDMA_READ_RESPONSE_MIDDLE, qp: 0x000202, psn: 201, len: 1024 },
  { op: O.RC_RDMA_READ_RESPONSE_LAST, qp: 0x000202, psn: 202, len: 950, syndrome: AETH_SYNDROME_ACK, msn: 1,
    aethKind: AethKind.ACK },
  { op: O.RC_RDMA_READ_RESPONSE_ONLY, qp: 0x000202, psn: 300, len: 7, syndrome: AETH_SYNDROME_ACK, msn: 2,
    aethKind: AethKind.ACK },
  { op: O.RC_ACKNOWLEDGE, qp: 0x000202, psn: 103, len: 0, syndrome: AETH_SYNDROME_ACK, msn: 4, aethKind: AethKind.ACK },
  { op: O.RC_ACKNOWLEDGE, qp: 0x000202, psn: 104, len: 0, syndrome: rnrNakSyndrome(14), msn: 4,
    aethKind: AethKind.RNR_NAK, timer: 14 },
  { op: O.RC_ACKNOWLEDGE, qp: 0xabcdef, psn: 0xfffffe, len: 0, syndrome: nakSyndrome(NakCode.PSN_SEQUENCE_ERROR),
    msn: 4, aethKind: AethKind.NAK, nak: 0 },
];

const FIELDS = [
  'infiniband.bth.opcode', 'infiniband.bth.destqp', 'infiniband.bth.psn', 'infiniband.bth.a', 'infiniband.bth.padcnt',
  'infiniband.bth.p_key', 'infiniband.reth.va', 'infiniband.reth.r_key', 'infiniband.reth.dmalen',
  'infiniband.aeth.msn', 'infiniband.aeth.syndrome.opcode', 'infiniband.aeth.syndrome.timer',
  'infiniband.aeth.syndrome.error_code', 'infiniband.invariant.crc', 'ip.checksum.status', 'frame.time_epoch',
];

const hex = (v: number, digits: number) => `0x${v.toString(16).padStart(digits, '0')}`;
const bswap = (v: number) => (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;

const haveTshark = spawnSync('tshark', ['-v'], { encoding: 'utf8' }).status === 0;

t.test('tshark decodes a frame of every kind with the values it was built from', {
  skip: haveTshark ? false
    : 'tshark is not installed: Wireshark decode check skipped (CI installs tshark; apt-get install -y tshark)',
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'wire-tshark-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'kinds.pcap');
  const w = PcapWriter.open(path);
  if (!w.ok) throw new Error(w.error);
  const f = new RoceFrame();
  f.dstMac.set(DST_MAC);
  f.srcMac.set(SRC_MAC);
  f.srcIp = SRC_IP;
  f.dstIp = DST_IP;
  const buf = new Uint8Array(2048);
  const payload = new Uint8Array(1024).fill(0x5a);
  const want: string[] = [];
  ROWS.forEach((r, i) => {
    f.opcode = r.op;
    f.destQp = r.qp;
    f.psn = r.psn;
    f.payloadLength = r.len;
    f.ackReq = r.ackReq ?? 0;
    f.aethSyndrome = r.syndrome ?? 0;
    f.aethMsn = r.msn ?? 0;
    [f.rethVaHi, f.rethVaLo, f.rethRkey, f.rethDmaLength] = r.reth ?? [0, 0, 0, 0];
    const n = buildFrame(buf, f, payload, 0);
    const timeUs = 1700000000_000000 + i * 1000 + 7;
    w.value.write(buf, n, timeUs);
    const seconds = Math.floor(timeUs / 1e6);
    want.push([
      String(r.op), hex(r.qp, 6), String(r.psn), r.ackReq ? '1' : '0', String(-r.len & 3), '65535',
      r.reth ? hex(r.reth[0], 8) + hex(r.reth[1], 8).slice(2) : '', r.reth ? hex(r.reth[2], 8) : '',
      r.reth ? String(r.reth[3]) : '', r.msn !== undefined ? String(r.msn) : '',
      r.aethKind !== undefined ? String(r.aethKind) : '', r.timer !== undefined ? String(r.timer) : '',
      r.nak !== undefined ? String(r.nak) : '', hex(bswap(f.icrc), 8), '1',
      `${seconds}.${String(timeUs - seconds * 1e6).padStart(6, '0')}000`,
    ].join('|'));
  });
  w.value.close();
  t.equal(w.value.error, undefined);

  const args = [
    '-r', path, '-o', 'ip.check_checksum:TRUE', '--disable-protocol', 'rpcordma', '-T', 'fields', '-E', 'separator=|',
  ];
  for (const field of FIELDS) args.push('-e', field);
  const r = spawnSync('tshark', args, { encoding: 'utf8', timeout: 120000 });
  t.equal(r.status, 0, r.stderr);
  const got = r.stdout.trim().split('\n');
  t.equal(got.length, ROWS.length, 'one decoded row per frame');
  for (let i = 0; i < ROWS.length; i++) t.equal(got[i], want[i], `frame ${i + 1}: opcode ${ROWS[i]!.op}`);

  const summary = spawnSync('tshark', ['-r', path, '--disable-protocol', 'rpcordma'], { encoding: 'utf8' }).stdout;
  t.match(summary, /RRoCE .*RC Send First QP=0x000101/);
  t.match(summary, /RC Acknowledge QP=0xabcdef \[PSN Sequence Error\]/);
});
