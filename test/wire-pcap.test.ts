import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PcapWriter } from '../drivers/emu/host/cable/pcap-writer.ts';

const dir = mkdtempSync(join(tmpdir(), 'wire-pcap-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

// Classic libpcap layout, little-endian host order.
const GLOBAL_HEADER = [
  0xd4, 0xc3, 0xb2, 0xa1, // magic 0xA1B2C3D4: microsecond timestamps
  0x02, 0x00, 0x04, 0x00, // version 2.4
  0x00, 0x00, 0x00, 0x00, // thiszone
  0x00, 0x00, 0x00, 0x00, // sigfigs
];
const le32 = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];

t.test('global header, then a record header and the bytes of each frame', async (t) => {
  const path = join(dir, 'a.pcap');
  const w = PcapWriter.open(path, { snapBytes: 8 });
  if (!w.ok) throw new Error(w.error);
  w.value.write(Uint8Array.from([1, 2, 3, 4, 5]), 3, 1_700_000_000_250_001);
  w.value.write(Uint8Array.from([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]), 10, 1_700_000_001_000_000);
  w.value.close();
  w.value.close();
  const want = [
    ...GLOBAL_HEADER,
    ...le32(8), //          snaplen
    0x01, 0x00, 0x00, 0x00, // LINKTYPE_ETHERNET
    ...le32(1_700_000_000), ...le32(250_001), ...le32(3), ...le32(3), 1, 2, 3,
    // longer than snaplen: 8 bytes kept, original length 10
    ...le32(1_700_000_001), ...le32(0), ...le32(8), ...le32(10), 9, 8, 7, 6, 5, 4, 3, 2,
  ];
  t.same([...readFileSync(path)], want);
  t.equal(w.value.framesWritten, 2);
});

t.test('a small buffer flushes as it fills and frames larger than the buffer go straight out', async (t) => {
  const path = join(dir, 'b.pcap');
  const w = PcapWriter.open(path, { bufferBytes: 64 });
  if (!w.ok) throw new Error(w.error);
  const big = new Uint8Array(200).map((_, i) => i);
  for (let i = 0; i < 5; i++) w.value.write(big, 10 + i * 40, i);
  w.value.close();
  const file = readFileSync(path);
  let at = 24;
  for (let i = 0; i < 5; i++) {
    const len = 10 + i * 40;
    t.equal(file.readUInt32LE(at + 4), i, `record ${i} microseconds`);
    t.equal(file.readUInt32LE(at + 8), len);
    t.same([...file.subarray(at + 16, at + 16 + len)], [...big.subarray(0, len)]);
    at += 16 + len;
  }
  t.equal(file.length, at);
});

t.test('a file that cannot be created is an error value', async (t) => {
  const r = PcapWriter.open(join(dir, 'no-such-dir', 'x.pcap'));
  t.equal(r.ok, false);
  if (!r.ok) t.match(r.error, /cannot create/);
  t.equal(PcapWriter.open(join(dir, 'c.pcap'), { snapBytes: 0 }).ok, false);
});

// Issue 15 item 4: a frame never waits in the buffer longer than the flush interval, even
// when no frame follows it (a timer flushes), so a process that dies loses at most that.
t.test('buffered frames reach the file within the flush interval with no later write and no close', async (t) => {
  const path = join(dir, 'interval.pcap');
  const w = PcapWriter.open(path, { flushIntervalMs: 20 });
  if (!w.ok) throw new Error(w.error);
  t.teardown(() => w.value.close());
  w.value.write(Uint8Array.from([1, 2, 3]), 3, 0);
  t.equal(readFileSync(path).length, 0, 'right after the write the record is still buffered');
  const deadline = Date.now() + 10_000;
  while (readFileSync(path).length < 24 + 16 + 3 && Date.now() < deadline)
    await new Promise((res) => setTimeout(res, 5));
  t.equal(readFileSync(path).length, 24 + 16 + 3, 'then the header and the record are in the file, without a close');
});

t.test('a write error stops the capture with a warning that says so, and nothing throws',
  { skip: process.platform === 'linux' ? false : '/dev/full is Linux' }, async (t) => {
  const w = PcapWriter.open('/dev/full', { bufferBytes: 64 });
  if (!w.ok) throw new Error(w.error);
  const warnings: Error[] = [];
  const onWarning = (e: Error) => warnings.push(e);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  for (let i = 0; i < 10; i++) w.value.write(new Uint8Array(40), 40, i);
  w.value.close();
  await new Promise((res) => setImmediate(res));
  t.match(w.value.error, /pcap \/dev\/full: write: .*ENOSPC/, 'the error names the file and the cause');
  t.equal(w.value.isOpen, false, 'the writer stopped');
  t.equal(warnings.length, 1, 'one warning');
  t.match(warnings[0]?.message, /\/dev\/full.*the capture stops after \d+ frames/,
    'the warning says the capture is incomplete');
});
