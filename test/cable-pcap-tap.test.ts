import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoopCable } from '../drivers/emu/model/cable/loop-cable.ts';
import { PcapTap } from '../drivers/emu/host/cable/pcap-tap.ts';
import { numberedFrame } from './helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'cable-pcap-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

/** Reads a classic little-endian pcap: [timestamp in µs, captured bytes] per record. */
function records(path: string): [number, number[]][] {
  const file = readFileSync(path);
  const out: [number, number[]][] = [];
  for (let at = 24; at < file.length;) {
    const len = file.readUInt32LE(at + 8);
    out.push([file.readUInt32LE(at) * 1e6 + file.readUInt32LE(at + 4), [...file.subarray(at + 16, at + 16 + len)]]);
    at += 16 + len;
  }
  return out;
}

for (const record of ['both', 'sent', 'received'] as const) {
  t.test(`records ${record} frames with the clock it is given, and passes every frame through`, async (t) => {
    const path = join(dir, `${record}.pcap`);
    let clock = 1_000_000;
    const loop = new LoopCable({ slots: 8, slotBytes: 128, delivery: 'manual' });
    const tap = PcapTap.open(loop, path, { record, clockUs: () => (clock += 10) });
    if (!tap.ok) throw new Error(tap.error);
    const delivered: number[][] = [];
    tap.value.setReceiver((f, len) => delivered.push([...f.subarray(0, len)]));
    const frames = [numberedFrame(1, 60), numberedFrame(2, 70)];
    for (const f of frames) tap.value.send(f, f.length);
    loop.deliverPending();
    tap.value.close();
    t.same(delivered, frames.map((f) => [...f]), 'the receiver saw every frame');
    const want: [number, number[]][] = [];
    if (record === 'both')
      want.push([1_000_010, [...frames[0]!]], [1_000_020, [...frames[1]!]], [1_000_030, [...frames[0]!]], [
        1_000_040, [...frames[1]!],
      ]);
    else want.push([1_000_010, [...frames[0]!]], [1_000_020, [...frames[1]!]]);
    t.same(records(path), want);
  });
}

t.test('closing the tap closes the cable inside', async (t) => {
  const loop = new LoopCable({ slots: 2, slotBytes: 64, delivery: 'manual' });
  const tap = PcapTap.open(loop, join(dir, 'c.pcap'));
  if (!tap.ok) throw new Error(tap.error);
  tap.value.close();
  loop.send(new Uint8Array(10), 10);
  t.equal(loop.stats.sendDropped, 1);
  t.equal(PcapTap.open(loop, join(dir, 'missing', 'x.pcap')).ok, false);
});
