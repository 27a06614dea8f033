// Issue 4: what queue pairs put on the wire, read back from a capture by tools that share no
// code with ours: tshark decodes every frame as RoCEv2 with the opcodes, destination QPs and
// PSNs the sends and reads must use, and Python recomputes every frame's ICRC (zlib.crc32 with
// the masking rules written out again, and scapy's RoCE layer when installed).
import t from 'tap';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Endpoint } from '../lib/index.ts';
import { fillPattern, firstDifference, openPair } from './helpers/qp-data.ts';
import { findPython, runPython } from './helpers/python.ts';

const OP = {
  SEND_FIRST: 0, SEND_MIDDLE: 1, SEND_LAST: 2, SEND_ONLY: 4, READ_REQUEST: 12, READ_FIRST: 13, READ_MIDDLE: 14,
  READ_LAST: 15, READ_ONLY: 16, ACK: 17,
};
const MTU = 4096;
const SEND_SIZES = [0, 1, MTU - 1, MTU, MTU + 1, 3 * MTU + 5, 100_000];
const READ_SIZES = [10_000, 1];
const PSN_MASK = 0xffffff;

/** Each packet of a message of n bytes: [opcode, PSN offset from the message's first]. */
function packets(n: number, only: number, first: number, middle: number, last: number): number[] {
  const count = n === 0 ? 1 : Math.ceil(n / MTU);
  if (count === 1) return [only];
  return Array.from({ length: count }, (_, i) => (i === 0 ? first : i === count - 1 ? last : middle));
}

// Python: every frame of a pcap, its wire ICRC, zlib.crc32 over the masked packet (IBA annex A17, as rxe_icrc.c masks
// it), and scapy's BTH.compute_icrc with the BTH fields scapy read (when scapy imports).
const SCRIPT = String.raw`
import json, struct, sys, zlib
path = json.load(sys.stdin)
try:
    from scapy.layers.l2 import Ether
    from scapy.contrib.roce import BTH
    have_scapy = True
except ImportError:
    have_scapy = False
data = open(path, 'rb').read()
magic = struct.unpack('<I', data[:4])[0]
endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
pos = 24
out = []
while pos + 16 <= len(data):
    _, _, incl, _ = struct.unpack(endian + 'IIII', data[pos:pos + 16])
    fr = data[pos + 16:pos + 16 + incl]
    pos += 16 + incl
    ip = fr[14:]
    ihl = (ip[0] & 15) * 4
    total = struct.unpack('!H', ip[2:4])[0]
    pkt = bytearray(ip[:total])
    pkt[1] = 0xff; pkt[8] = 0xff; pkt[10:12] = b'\xff\xff'
    pkt[ihl + 6:ihl + 8] = b'\xff\xff'
    pkt[ihl + 8 + 4] = 0xff
    mine = zlib.crc32(b'\xff' * 8 + bytes(pkt[:-4])) & 0xffffffff
    wire = struct.unpack('<I', bytes(pkt[-4:]))[0]
    row = [wire, mine, None, None, None, None]
    if have_scapy:
        b = Ether(fr[:14 + total])[BTH]
        row[2:] = [struct.unpack('<I', b.compute_icrc(None))[0], b.opcode, b.dqpn, b.psn]
    out.append(row)
print(json.dumps(out))
`;

const haveTshark = spawnSync('tshark', ['-v'], { encoding: 'utf8' }).status === 0;
const python = findPython('from scapy.contrib.roce import BTH') ?? findPython();
const haveScapy = findPython('from scapy.contrib.roce import BTH') !== undefined;

/**
 * What a's requests to b must be (each message's packets, PSNs consecutive from a's first) and
 * b's read responses to a, as `opcode destQp psn` lines.
 */
function expectedFrames(a: Endpoint, b: Endpoint): { requests: string[]; responses: string[] } {
  const requests: string[] = [];
  const responses: string[] = [];
  let psn = a.psn;
  for (const n of SEND_SIZES) {
    for (const op of packets(n, OP.SEND_ONLY, OP.SEND_FIRST, OP.SEND_MIDDLE, OP.SEND_LAST))
      requests.push(`${op} ${b.qp} ${psn}`), psn = (psn + 1) & PSN_MASK;
  }
  for (const n of READ_SIZES) {
    requests.push(`${OP.READ_REQUEST} ${b.qp} ${psn}`);
    // The responses carry the request's PSN onward; the read takes that many PSNs.
    for (const op of packets(n, OP.READ_ONLY, OP.READ_FIRST, OP.READ_MIDDLE, OP.READ_LAST))
      responses.push(`${op} ${a.qp} ${psn}`), psn = (psn + 1) & PSN_MASK;
  }
  return { requests, responses };
}

/** tshark's decode of the capture: BTH opcode, destination QP and PSN, UDP port, IPv4 checksum status. */
function tsharkFields(file: string): SpawnSyncReturns<string> {
  return spawnSync('tshark', ['-r', file, '--disable-protocol', 'rpcordma', '-T', 'fields', '-E', 'separator=|',
    '-e', 'infiniband.bth.opcode', '-e', 'infiniband.bth.destqp', '-e', 'infiniband.bth.psn', '-e', 'udp.dstport', '-e',
    'ip.checksum.status',
    '-o', 'ip.check_checksum:TRUE'], { encoding: 'utf8', timeout: 120_000 });
}

t.test('a capture of sends and reads decodes in tshark as RoCEv2, and every ICRC checks in Python', {
  skip: !haveTshark ? 'tshark is not installed: capture decode skipped (CI installs tshark; apt-get install -y tshark)'
    : !python ? 'python3 is not installed: independent ICRC check skipped' : false,
}, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qp-data-capture-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'qp.pcap');
  const p = openPair({ stepped: true, pcap: file }, 1 << 20);
  const a = p.a.endpoint;
  const b = p.b.endpoint;
  try {
    for (const n of SEND_SIZES) {
      fillPattern(p.ra.bytes, 0, n, n);
      p.b.receive(p.rb, 0, n);
      p.a.send(p.ra, 0, n);
      t.same(p.a.wait('send', 10e6), { ok: true, value: n }, `send of ${n}`);
      t.same(p.b.wait('receive', 10e6), { ok: true, value: n });
      t.equal(firstDifference(p.rb.bytes, 0, p.ra.bytes, 0, n), -1);
    }
    for (const n of READ_SIZES) {
      fillPattern(p.rb.bytes, 64, n, n + 1);
      p.a.read(p.rb, 64, p.ra, 0, n);
      t.same(p.a.wait('send', 10e6), { ok: true, value: n }, `read of ${n}`);
      t.equal(firstDifference(p.ra.bytes, 0, p.rb.bytes, 64, n), -1);
    }
  } finally {
    p.nic.close(); // flushes and closes the capture
  }

  const { requests, responses } = expectedFrames(a, b);
  const decoded = tsharkFields(file);
  t.equal(decoded.status, 0, decoded.status === 0 ? 'tshark ran' : `tshark failed: ${decoded.stderr}`);
  const rows = decoded.stdout.trim().split('\n').map((line) => line.split('|'));
  t.ok(rows.length >= requests.length + responses.length, `${rows.length} frames decoded`);
  t.same(rows.filter((r) => r[3] !== '4791' || r[0] === '' || r[4] !== '1'), [],
    'every frame is RoCEv2 on UDP 4791 with a good IPv4 checksum');
  const fields = rows.map(([op, qp, n]) => `${Number(op)} ${Number(qp)} ${Number(n)}`);
  t.same(fields.filter((f) => f.split(' ')[1] === String(b.qp)), requests,
    'a\'s requests to b, in order: opcodes and PSNs');
  const toA = fields.filter((f) => f.split(' ')[1] === String(a.qp));
  t.same(toA.filter((f) => f.split(' ')[0] !== String(OP.ACK)), responses,
    'b\'s read responses to a, with the read request\'s PSNs');
  t.ok(toA.some((f) => f.split(' ')[0] === String(OP.ACK)), 'b acknowledges a\'s sends');
  t.equal(rows.length, requests.length + toA.length, 'no frame for any other QP');

  const icrcs = runPython<[number, number, number | null, number | null, number | null, number | null][]>(
    python!, SCRIPT, file,
  );
  t.equal(icrcs.length, rows.length, 'Python read the same frames');
  t.same(icrcs.filter(([wire, mine]) => wire !== mine).slice(0, 5), [],
    'zlib.crc32 over the masked packet equals every frame\'s ICRC');
  if (haveScapy) {
    t.same(icrcs.filter(([wire, , scapy]) => wire !== scapy).slice(0, 5), [],
      'scapy\'s RoCE layer computes every frame\'s ICRC');
    t.same(icrcs.map(([, , , op, qp, n]) => `${op} ${qp} ${n}`), fields, 'scapy reads the BTH fields tshark reads');
  } else {
    t.comment(
      'python3-scapy is not installed (scapy.contrib.roce not importable): scapy cross-check skipped; CI installs ' +
        'python3-scapy',
    );
  }
});

t.test('RIG_BNXT_PCAP captures when no pcap option is given', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'qp-data-capture-env-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'env.pcap');
  const saved = process.env['RIG_BNXT_PCAP'];
  process.env['RIG_BNXT_PCAP'] = file;
  let p: ReturnType<typeof openPair>;
  try {
    p = openPair({ stepped: true }, 4096);
  } finally {
    if (saved === undefined) delete process.env['RIG_BNXT_PCAP'];
    else process.env['RIG_BNXT_PCAP'] = saved;
  }
  p.b.receive(p.rb, 0, 100);
  p.a.send(p.ra, 0, 100);
  t.same(p.a.wait('send', 10e6), { ok: true, value: 100 });
  p.nic.close();
  // pcap header (24) + the send (16 + 14 + 20 + 8 + 12 + 100 + 4) + an ACK at least.
  t.ok(statSync(file).size >= 24 + 174 + 16 + 62,
    `the file named by RIG_BNXT_PCAP holds the frames (${statSync(file).size} bytes)`);
});
