// Issue 7 part 1: frames of every kind the software NIC sends, captured from the NIC at
// work (not built by hand), decoded by Wireshark's dissector and ICRC-checked by scapy.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Nic, Qp, Region } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/host/device.ts';
import { readPcap } from '../scripts/interop/capture-check.ts';
import { findPython, runPython } from './helpers/python.ts';

const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-conformance-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const pcap = join(dir, 'nic.pcap');
const MTU = 1024; // Ethernet MTU 1500
const BIG = 3 * MTU + 5; // FIRST, MIDDLE, MIDDLE, LAST

/** Runs every scenario on one software NIC recording to `pcap`; returns the QP numbers. */
function capture(): { a: number; b: number } {
  const nic = Nic.open('emu', { stepped: true, mtu: 1500, pcap, seed: 7 });
  if (!nic.ok) throw new Error(nic.error);
  const emu = (nicInternals(nic.value).device as EmuDevice).emu;
  const a = Qp.make(nic.value);
  const b = Qp.make(nic.value);
  const r = Region.alloc(nic.value, 1 << 20);
  if (!a.ok || !b.ok || !r.ok) throw new Error('setup failed');
  const A = a.value, B = b.value, R = r.value;
  for (const [x, y] of [[A, B], [B, A]] as const) {
    const c = x.connect(y.endpoint);
    if (!c.ok) throw new Error(c.error);
  }
  const ok = (what: string, v: ReturnType<Qp['wait']>) => {
    if (!v?.ok) throw new Error(`${what}: ${v ? v.error : 'no completion'}`);
  };
  // SEND ONLY and SEND FIRST/MIDDLE/LAST, each acknowledged.
  B.receive(R, 65536, 100); A.send(R, 0, 100); ok('send only', A.wait('send', 5e6)); ok('recv', B.wait('receive', 5e6));
  B.receive(R, 65536, BIG); A.send(R, 0, BIG); ok('send first..last', A.wait('send', 5e6)); ok('recv',
    B.wait('receive', 5e6));
  // RDMA READ request, responses ONLY and FIRST/MIDDLE/LAST.
  A.read(R, 0, R, 131072, 10); ok('read only', A.wait('send', 5e6));
  A.read(R, 0, R, 131072, BIG); ok('read first..last', A.wait('send', 5e6));
  // RNR NAK: a send with no receive posted; the receive comes later and the retried send lands.
  A.send(R, 0, 64);
  t.equal(A.wait('send', 2000), undefined, 'no receive posted: the send is still being retried');
  B.receive(R, 65536, 64); ok('send after RNR', A.wait('send', 5e6)); ok('recv after RNR', B.wait('receive', 5e6));
  // NAK (PSN sequence error): the first MIDDLE of a long send is lost once; go-back-N recovers.
  emu.engine.dropFrames('tx', 0x01, -1, 1);
  B.receive(R, 65536, BIG); A.send(R, 0, BIG); ok('send after a lost frame', A.wait('send', 5e6)); ok('recv',
    B.wait('receive', 5e6));
  // NAK (invalid request): a send longer than its receive fails both QPs.
  B.receive(R, 65536, 10); A.send(R, 0, 100);
  const failed = A.wait('send', 5e6);
  if (!failed || failed.ok) throw new Error('the oversized send should fail');
  const qps = { a: A.endpoint.qp, b: B.endpoint.qp };
  nic.value.close();
  return qps;
}

const qps = capture();
const frames = readPcap(new Uint8Array(readFileSync(pcap)));
const hex = frames.map((f) => Buffer.from(f.bytes).toString('hex'));

t.test('the capture holds every kind of frame the NIC sends', async (t) => {
  t.ok(frames.length > 20, `${frames.length} frames captured`);
});

const tshark = spawnSync('tshark', ['--version'], { encoding: 'utf8' }).status === 0;
t.test('tshark decodes them as RoCEv2 with the expected opcodes, QPs, PSNs and AETH syndromes', {
  skip: tshark ? false : 'tshark is not installed (CI installs it)',
}, async (t) => {
  const r =
    spawnSync('tshark',
    ['-r', pcap, '-d', 'udp.port==4791,infiniband', '--disable-protocol', 'rpcordma', '-T', 'fields', '-E',
    'separator=,',
    '-e', 'infiniband.bth.opcode', '-e', 'infiniband.bth.destqp', '-e', 'infiniband.bth.psn', '-e',
    'infiniband.aeth.syndrome'], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  const rows = r.stdout.trim().split('\n').map((l) => l.split(','));
  t.equal(rows.length, frames.length, 'one decoded row per captured frame');
  const opcodes = new Set(rows.map((x) => Number(x[0])));
  const want: [number, string][] =
    [[0x00, 'SEND FIRST'], [0x01, 'SEND MIDDLE'], [0x02, 'SEND LAST'], [0x04, 'SEND ONLY'], [0x0c, 'READ REQUEST'],
    [0x0d, 'READ RESPONSE FIRST'], [0x0e, 'READ RESPONSE MIDDLE'], [0x0f, 'READ RESPONSE LAST'],
    [0x10, 'READ RESPONSE ONLY'], [0x11, 'ACKNOWLEDGE']];
  for (const [op, name] of want) t.ok(opcodes.has(op), `${name} (opcode ${op}) decoded`);
  const qpSet = new Set(rows.map((x) => Number(x[1])));
  t.same([...qpSet].sort(), [qps.a, qps.b].sort(), 'every frame is for one of the two QPs');
  t.ok(rows.every((x) => Number(x[2]) >= 0 && Number(x[2]) < 1 << 24), 'PSNs are 24-bit');
  const syndromes =
    rows.filter((x) => Number(x[0]) === 0x11 || Number(x[0]) === 0x10 || Number(x[0]) === 0x0d || Number(x[0]) === 0x0f)
    .map((x) => Number(x[3]));
  t.ok(syndromes.some((s) => (s >> 5) === 0), 'ACK syndromes');
  t.ok(syndromes.some((s) => (s >> 5) === 1), 'an RNR NAK');
  t.ok(syndromes.some((s) => s === 0x60), 'a NAK: PSN sequence error');
  t.ok(syndromes.some((s) => s === 0x61), 'a NAK: invalid request');
});

const SCAPY = String.raw`
import json, struct, sys
from scapy.layers.l2 import Ether
from scapy.contrib.roce import BTH
out = []
for h in json.load(sys.stdin):
    fr = bytes.fromhex(h)
    total = struct.unpack('!H', fr[16:18])[0]
    b = Ether(fr[:14 + total])[BTH]
    # scapy reads the ICRC field big-endian; the wire carries it little-endian.
    wire = struct.unpack('<I', struct.pack('>I', b.icrc))[0]
    out.append([struct.unpack('<I', b.compute_icrc(None))[0], wire])
print(json.dumps(out))
`;
const scapy = findPython('from scapy.contrib.roce import BTH');
t.test('every ICRC checks with scapy\'s RoCE layer',
  { skip: scapy ? false : 'python3-scapy is not installed (CI installs it)' }, async (t) => {
  const got = runPython<[number, number][]>(scapy!, SCAPY, hex);
  const bad =
    got.map(([c, w], i) => (c === w ? undefined : `frame ${i}: scapy ${c.toString(16)}, wire ${w.toString(16)}`))
    .filter(Boolean);
  t.same(bad, [], `${got.length} ICRCs agree`);
});
