// Issue 5, failure rule 4: the peer's machine fails. The peer is another process with its own
// software NIC, cabled over UDP on 127.0.0.1; it is killed with SIGKILL while a send is
// outstanding. The send fails with "retry exceeded" after its retries (8 ACK timeouts of
// 67 ms: 7 retransmissions), and every other entry completes with that error.
import t from 'tap';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import type { EmuDevice } from '../drivers/emu/host/device.ts';
import { must, okBytes, error } from './failure-setup.ts';
import { freeUdpPortPair } from '../scripts/interop/free-ports.ts';
import { spawnLineChild } from '../scripts/stress/line-child.ts';

const RETRY_EXCEEDED = 'retry exceeded: the peer did not acknowledge (TRANSPORT_RETRY_CNT_ERR)';

const freePorts = freeUdpPortPair;

t.test('rule 4: a peer process killed with SIGKILL while a send is outstanding: retry exceeded after 8 timeouts of ' +
  '67 ms, the rest with that error', async (t) => {
  const [portA, portB] = await freePorts();
  const peerProc = spawnLineChild('test/failure-peer-child.ts', [String(portB), String(portA), '1']);
  const child = peerProc.child;
  const exited = peerProc.exited.then((e) => e.signal);
  t.teardown(() => peerProc.kill());
  const nextLine = peerProc.nextLine;

  const nic = must(Nic.open(`emu:${portA}:${portB}`), 'Nic.open');
  t.teardown(() => nic.close());
  const device = nicInternals(nic).device as EmuDevice;
  const counters = () => device.emu.engine.counters();
  const qp = must(Qp.make(nic), 'Qp.make');
  const r = must(Region.alloc(nic, 1 << 16), 'Region.alloc');
  const peer = parseEndpoint(await nextLine('endpoint'));
  child.stdin!.write(`${formatEndpoint(qp.endpoint)}\n`);
  must(qp.connect(peer), 'connect');
  t.equal(await nextLine('ready'), 'ready', 'the peer connected and posted one receive');

  qp.receive(r, 32768, 100);
  qp.send(r, 0, 100);
  t.same(qp.wait('send', 30e6), okBytes(100), 'the first send lands in the peer\'s receive');
  qp.send(r, 100, 200); // the peer has no receive left: retried (RNR) while it lives
  qp.send(r, 300, 300);
  const rnrStart = counters()['rnrNaksReceived']!;
  const rnrDeadline = Date.now() + 30_000;
  while (counters()['rnrNaksReceived']! < rnrStart + 3 && Date.now() < rnrDeadline)
    await new Promise((res) => setTimeout(res, 5));
  t.ok(counters()['rnrNaksReceived']! >= rnrStart + 3,
    'the second send is outstanding: the live peer answers it "not ready"');
  t.equal(qp.poll('send'), undefined, 'it has no completion while the peer lives');
  const before = counters();

  child.kill('SIGKILL');
  t.equal(await exited, 'SIGKILL', 'the peer process was killed');
  const killedAt = performance.now();
  const failed = qp.wait('send', 10e6);
  const elapsedMs = performance.now() - killedAt;
  t.same(failed, error(RETRY_EXCEEDED), 'the outstanding send fails with retry exceeded');
  t.comment(`it failed ${elapsedMs.toFixed(0)} ms after the kill (8 timeouts of 67.1 ms: 537 ms)`);
  const after = counters();
  t.equal(after['ackTimeouts']! - before['ackTimeouts']!, 8, 'after 8 ACK timeouts');
  t.equal(after['retransmitEvents']! - before['retransmitEvents']!, 7, '7 of them retried: the 7 retries of connect');
  t.same(qp.wait('send', 1e6), error(RETRY_EXCEEDED), 'the next send completes with that error');
  t.same(qp.wait('receive', 1e6), error(RETRY_EXCEEDED), 'and so does the receive');
  qp.send(r, 0, 1);
  t.same(qp.wait('send', 1e6), error(RETRY_EXCEEDED), 'and a send posted later');
  t.equal(qp.failure, RETRY_EXCEEDED);
  t.equal(peerProc.stderr(), '', 'the peer wrote no error before it was killed');
});
