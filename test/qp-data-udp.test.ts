// Issue 4: two processes, each with a software NIC, cabled over UDP on 127.0.0.1, exchange
// messages: endpoints go over the child's stdin/stdout as text (formatEndpoint /
// parseEndpoint), the child echoes every message, and the parent checks each echo's bytes.
import t from 'tap';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint } from '../lib/index.ts';
import { fillPattern, firstDifference, must } from './helpers/qp-data.ts';
import { freeUdpPortPair } from '../scripts/interop/free-ports.ts';
import { spawnLineChild } from '../scripts/stress/line-child.ts';

const SIZES = [1, 64, 0, 1023, 1024, 4095, 4096, 4097, 9000, 65_536, 100_000, 3];

/** Two UDP ports free on 127.0.0.1 just now (bound, read, released). */
const freePorts = freeUdpPortPair;

t.test('two processes cabled over UDP exchange messages', async (t) => {
  const [portA, portB] = await freePorts();
  const peerProc =
    spawnLineChild('test/helpers/qp-echo-child.ts', [String(portB), String(portA), String(SIZES.length)]);
  const child = peerProc.child;
  const exited = peerProc.exited.then((e) => e.code);
  t.teardown(() => peerProc.kill());
  const nextLine = peerProc.nextLine;

  const nic = must(Nic.open(`emu:${portA}:${portB}`), 'Nic.open');
  t.teardown(() => nic.close());
  const qp = must(Qp.make(nic), 'Qp.make');
  const out = must(Region.alloc(nic, 1 << 20), 'send region');
  const back = must(Region.alloc(nic, 1 << 20), 'receive region');

  const peer = parseEndpoint(await nextLine('endpoint'));
  t.comment(`the child's endpoint: ${formatEndpoint(peer)}`);
  t.notSame([...peer.mac], [...qp.endpoint.mac], 'the child\'s NIC is another NIC (another MAC)');
  child.stdin!.write(`${formatEndpoint(qp.endpoint)}\n`);
  must(qp.connect(peer), 'connect');
  t.equal(await nextLine('ready'), 'ready', 'the child connected and posted its receives');

  for (const [i, n] of SIZES.entries()) {
    fillPattern(out.bytes, 0, n, 1000 + i);
    back.bytes.fill(0, 0, n + 1);
    qp.receive(back, 0, 1 << 20);
    qp.send(out, 0, n);
    t.same(qp.wait('send', 30e6), { ok: true, value: n }, `message ${i} of ${n} bytes sent`);
    t.same(qp.wait('receive', 30e6), { ok: true, value: n }, `its echo came back with ${n} bytes`);
    t.equal(firstDifference(back.bytes, 0, out.bytes, 0, n), -1, 'the same bytes');
  }
  t.equal(await nextLine('done'), 'done', 'the child echoed every message');
  t.equal(await exited, 0, `the child exited cleanly${peerProc.stderr() ? `: ${peerProc.stderr()}` : ''}`);
});
