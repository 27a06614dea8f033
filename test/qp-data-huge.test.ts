// Issue 4: the largest message, 2^31 bytes, sent and read whole between two regions of 2^31
// bytes (4 GiB of DMA memory). In a thread-mode NIC, faster here than the stepped model; it
// takes about a minute (most of it the first touch of the memory and the engine's copy).
import t from 'tap';
import { fillPattern, firstDifference, openPair } from './helpers/qp-data.ts';

const MAX = 2 ** 31;

t.test('a message of 2^31 bytes: send and read, every byte checked', async (t) => {
  const p = openPair({ stepped: false }, MAX);
  t.teardown(() => p.nic.close());
  fillPattern(p.ra.bytes, 0, MAX, 31);
  p.b.receive(p.rb, 0, MAX);
  p.a.send(p.ra, 0, MAX);
  t.same(p.a.wait('send', 240e6), { ok: true, value: MAX }, 'the send completes with 2^31 bytes');
  t.same(p.b.wait('receive', 240e6), { ok: true, value: MAX }, 'the receive took a message of 2^31 bytes');
  t.equal(firstDifference(p.rb.bytes, 0, p.ra.bytes, 0, MAX), -1, 'every byte arrived');
  fillPattern(p.rb.bytes, 0, MAX, 32);
  p.a.read(p.rb, 0, p.ra, 0, MAX);
  t.same(p.a.wait('send', 240e6), { ok: true, value: MAX }, 'the read completes with 2^31 bytes');
  t.equal(firstDifference(p.ra.bytes, 0, p.rb.bytes, 0, MAX), -1, 'every byte was read');
  t.throws(() => p.a.send(p.ra, 0, MAX + 1), { name: 'InvalidArgument' }, 'one byte more throws');
});
