// Issue 15 item 3: failure rule 5 over the UDP cable, two software NICs (each its own worker
// thread) cabled through sockets on 127.0.0.1. A 4 MiB send waits for a receive posted more
// than a second late: it must wait without end and then complete with its bytes. Before the
// fix it failed "retry exceeded" in most runs: every RNR NAK brought back a whole window of
// 4 KiB packets, the peer's socket buffer overflowed, the resends the wait depends on were
// lost, and each loss spent one of the 7 retries for good.
import t from 'tap';
import { Nic, Qp, Region } from '../lib/index.ts';
import { fillPattern, firstDifference, must } from './helpers/qp-data.ts';
import { freeUdpPortPair } from '../scripts/interop/free-ports.ts';
import { emuOf } from './failure-setup.ts';

const BYTES = 4 << 20;
const LATE_US = 1_500_000;
const ROUNDS = 2;

t.test('a 4 MiB send over UDP to a peer NIC whose receive comes 1.5 s late waits, then completes intact', async (t) => {
  const [portA, portB] = await freeUdpPortPair();
  const nicA = must(Nic.open(`emu:${portA}:${portB}`), 'Nic.open A');
  t.teardown(() => nicA.close());
  const nicB = must(Nic.open(`emu:${portB}:${portA}`), 'Nic.open B');
  t.teardown(() => nicB.close());
  const a = must(Qp.make(nicA), 'Qp.make a');
  const b = must(Qp.make(nicB), 'Qp.make b');
  must(a.connect(b.endpoint), 'connect a');
  must(b.connect(a.endpoint), 'connect b');
  const ra = must(Region.alloc(nicA, BYTES), 'Region.alloc a');
  const rb = must(Region.alloc(nicB, BYTES), 'Region.alloc b');
  for (let round = 1; round <= ROUNDS; round++) {
    fillPattern(ra.bytes, 0, BYTES, round);
    rb.bytes.fill(0);
    a.send(ra, 0, BYTES);
    t.equal(a.wait('send', LATE_US), undefined, `round ${round}: no completion while the peer has no receive`);
    t.equal(a.failure, undefined, `round ${round}: the queue pair has not failed`);
    b.receive(rb, 0, BYTES);
    const sent = a.wait('send', 30e6);
    t.same(sent, { ok: true, value: BYTES }, `round ${round}: the send completes once the receive is posted`);
    if (!sent?.ok) break;
    t.same(b.wait('receive', 30e6), { ok: true, value: BYTES }, `round ${round}: the receive took the whole message`);
    t.equal(firstDifference(rb.bytes, 0, ra.bytes, 0, BYTES), -1, `round ${round}: its bytes intact`);
  }
  const c = emuOf(nicA).emu.engine.counters();
  t.ok(c.rnrNaksReceived > 0,
    `the peer answered "not ready" (${c.rnrNaksReceived} RNR NAKs; ${c.ackTimeouts} ACK timeouts, each given back)`);
});
