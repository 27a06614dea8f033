// A real NIC acknowledges its peer's sends whatever its host program does. The software NIC on a
// UDP cable (the peer is another process) must too by default: this process takes a message
// echoed back by test/helpers/qp-echo-child.ts while it computes for 1.5 s without calling the
// driver or yielding, longer than the 7 x 67 ms the spec gives an unacknowledged send. The echo
// must still complete at the child (it exits 0 only if every echo's send completed Ok) and arrive
// here intact. With the model inline in this thread nothing would acknowledge the echo meanwhile,
// and the child's send would fail with "retry exceeded".
import t, { type Test } from 'tap';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint } from '../lib/index.ts';
import { fillPattern, firstDifference, must } from './helpers/qp-data.ts';
import { freeUdpPortPair } from '../scripts/interop/free-ports.ts';
import { spawnLineChild } from '../scripts/stress/line-child.ts';

const COMPUTE_MS = 1500;
const SIZE = 8192;

/** Busy work that neither calls the driver nor lets the event loop turn. */
function computeFor(ms: number): number {
  const end = Date.now() + ms;
  let x = 1;
  while (Date.now() < end) for (let i = 0; i < 1000; i++) x = (x * 1103515245 + 12345) >>> 0;
  return x;
}

/** This process's NIC opened with `options`, its queue pair connected to an echo child's that echoes `count`. */
async function connectToEchoChild(t: Test, count: number, options: { thread?: boolean }) {
  const [portA, portB] = await freeUdpPortPair();
  const peerProc = spawnLineChild('test/helpers/qp-echo-child.ts', [String(portB), String(portA), String(count)]);
  t.teardown(() => peerProc.kill());
  const exited = peerProc.exited.then((e) => e.code);
  const nic = must(Nic.open(`emu:${portA}:${portB}`, options), 'Nic.open');
  t.teardown(() => nic.close());
  const qp = must(Qp.make(nic), 'Qp.make');
  const out = must(Region.alloc(nic, 1 << 16), 'send region');
  const back = must(Region.alloc(nic, 1 << 16), 'receive region');
  const peer = parseEndpoint(await peerProc.nextLine('endpoint'));
  peerProc.child.stdin!.write(`${formatEndpoint(qp.endpoint)}\n`);
  must(qp.connect(peer), 'connect');
  t.equal(await peerProc.nextLine('ready'), 'ready', 'the child connected and posted its receives');
  return { peerProc, exited, qp, out, back };
}

t.test('a UDP-cabled NIC answers its peer while its program computes', async (t) => {
  const { peerProc, exited, qp, out, back } = await connectToEchoChild(t, 1, {});

  fillPattern(out.bytes, 0, SIZE, 77);
  qp.receive(back, 0, 1 << 16);
  qp.send(out, 0, SIZE);
  t.same(qp.wait('send', 30e6), { ok: true, value: SIZE }, 'the message reached the child');
  // The child echoes now; this program neither polls nor yields until well after 7 x 67 ms.
  computeFor(COMPUTE_MS);
  t.same(qp.wait('receive', 30e6), { ok: true, value: SIZE }, 'the echo arrived while this program computed');
  t.equal(firstDifference(back.bytes, 0, out.bytes, 0, SIZE), -1, 'the same bytes');
  t.equal(await peerProc.nextLine('done'), 'done', 'the child saw its echo acknowledged');
  t.equal(await exited, 0, `the child's echo send completed Ok${peerProc.stderr() ? `: ${peerProc.stderr()}` : ''}`);
});

t.test('thread: false runs a UDP-cabled NIC inline, serving a program that keeps calling its driver', async (t) => {
  const { peerProc, exited, qp, out, back } = await connectToEchoChild(t, 3, { thread: false });
  for (const [i, n] of [64, SIZE, 0].entries()) {
    fillPattern(out.bytes, 0, n, 90 + i);
    qp.receive(back, 0, 1 << 16);
    qp.send(out, 0, n);
    t.same(qp.wait('send', 30e6), { ok: true, value: n }, `message ${i} of ${n} bytes sent`);
    t.same(qp.wait('receive', 30e6), { ok: true, value: n }, 'its echo came back');
    t.equal(firstDifference(back.bytes, 0, out.bytes, 0, n), -1, 'the same bytes');
  }
  t.equal(await peerProc.nextLine('done'), 'done', 'the child echoed every message');
  t.equal(await exited, 0, `the child exited cleanly${peerProc.stderr() ? `: ${peerProc.stderr()}` : ''}`);
});
