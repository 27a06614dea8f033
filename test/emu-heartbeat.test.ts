/**
 * A model whose driver runs in another thread (a worker's) beats the driver's heartbeat (wake.ts)
 * for every frame it sends, inside a run: a driver spins while it sees the heartbeat move and
 * sleeps once it stood still for a few dozen looks (worker-host.ts, deviceRunning), so a run that
 * carries messages must not look like a thread without a core. A model whose driver is in its
 * own thread (inline, stepped) has no heartbeat to beat.
 */
import t from 'tap';
import { ACCESS_MR, RES, TestNic, pattern } from './helpers/emu-engine-harness.ts';
import { WAKE_HEARTBEAT } from '../drivers/emu/host/wake.ts';

const MTU = 1024;

function sendThreeMtus(nic: TestNic): void {
  const [a, b] = nic.pair({ mtu: MTU });
  const src = nic.alloc(3 * MTU);
  src.bytes.set(pattern(src.bytes.length, 7));
  const smr = nic.mr(src, 0);
  const dst = nic.alloc(3 * MTU);
  const dmr = nic.mr(dst, ACCESS_MR.LOCAL_WRITE);
  b.recv([{ va: dst.iova, lkey: dmr.key, size: 3 * MTU }]);
  a.post({ sges: [{ va: src.iova, lkey: smr.key, size: 3 * MTU }] });
  if (!nic.runUntil(() => b.rcq.cq.producer === 1 && a.scq.cq.producer === 1)) throw new Error('no completions');
  const res = b.rcq.pollAll();
  if (res.length !== 1 || res[0]!.status !== RES.OK) throw new Error('the receive failed');
}

t.test('driver in another thread: one beat for each frame sent, within the run', async (t) => {
  const nic = new TestNic({ mode: 'thread' });
  t.teardown(() => nic.close());
  const before = Atomics.load(nic.wake, WAKE_HEARTBEAT);
  const framesBefore = nic.counters()['framesSent']!;
  sendThreeMtus(nic);
  const frames = nic.counters()['framesSent']! - framesBefore;
  t.ok(frames >= 4, `three packets and at least one ACK (${frames} frames)`);
  t.equal(Atomics.load(nic.wake, WAKE_HEARTBEAT) - before, frames, 'the heartbeat moved once a frame');
});

t.test('driver in the model\'s own thread (stepped): the heartbeat stays still', async (t) => {
  const nic = new TestNic();
  t.teardown(() => nic.close());
  sendThreeMtus(nic);
  t.ok(nic.counters()['framesSent']! >= 4);
  t.equal(Atomics.load(nic.wake, WAKE_HEARTBEAT), 0, 'no beat');
});
