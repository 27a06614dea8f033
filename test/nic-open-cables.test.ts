// Issue 15 item 5: cables that clash are refused instead of opening silently. A second NIC on a
// UDP port another socket holds is an error naming the port; the address a port gives is
// distinct for every port (before, ports 256k and 256k + 1 got one address, so two NICs cabled
// to each other dropped every frame as forged); the two ends of a cable never share an address.
import t, { type Test } from 'tap';
import { createSocket } from 'node:dgram';
import { Nic, Qp, Region, InvalidArgument } from '../lib/index.ts';
import { ipv4FromNumber } from '../drivers/emu/model/config.ts';
import { fillPattern, firstDifference, must } from './helpers/qp-data.ts';
import { freeUdpPort, freeUdpPortPair } from '../scripts/interop/free-ports.ts';

/** Two queue pairs on two NICs exchange one message each way, each checked intact. */
function exchange(t: Test, nicA: Nic, nicB: Nic): void {
  const a = must(Qp.make(nicA), 'Qp.make a');
  const b = must(Qp.make(nicB), 'Qp.make b');
  must(a.connect(b.endpoint), 'connect a');
  must(b.connect(a.endpoint), 'connect b');
  const ra = must(Region.alloc(nicA, 8192), 'Region.alloc a');
  const rb = must(Region.alloc(nicB, 8192), 'Region.alloc b');
  for (const [from, to, rf, rt, seed] of [[a, b, ra, rb, 1], [b, a, rb, ra, 2]] as const) {
    fillPattern(rf.bytes, 0, 5000, seed);
    to.receive(rt, 0, 8192);
    from.send(rf, 0, 5000);
    t.same(from.wait('send', 30e6), { ok: true, value: 5000 },
      `${from === a ? 'A to B' : 'B to A'}: the send completes`);
    t.same(to.wait('receive', 30e6), { ok: true, value: 5000 }, 'the receive takes it');
    t.equal(firstDifference(rt.bytes, 0, rf.bytes, 0, 5000), -1, 'its bytes intact');
  }
}

t.test('a NIC on a UDP port another socket holds is an error naming the port; the NIC that holds it goes on ' +
  'working', async (t) => {
  const [portA, portB] = await freeUdpPortPair();
  const nicA = must(Nic.open(`emu:${portA}:${portB}`), 'Nic.open A');
  t.teardown(() => nicA.close());
  const clash = Nic.open(`emu:${portA}:${portB}`);
  t.equal(clash.ok, false, 'the second open on the same port is an error');
  if (!clash.ok)
    t.match(clash.error, new RegExp(`port ${portA} on 127\\.0\\.0\\.1 is already bound`),
      `it names the port: ${clash.ok ? '' : clash.error}`);
  // The same for a port some other program holds.
  const other = createSocket('udp4');
  const otherPort =
    await new Promise<number>((resolve) => other.bind(0, '127.0.0.1', () => resolve(other.address().port)));
  t.teardown(() => other.close());
  const held = Nic.open(`emu:${otherPort}:${portA}`);
  t.equal(held.ok, false, 'a port another program holds is an error too');
  if (!held.ok) t.match(held.error, new RegExp(`port ${otherPort} `), 'naming that port');
  const nicB = must(Nic.open(`emu:${portB}:${portA}`), 'Nic.open B');
  t.teardown(() => nicB.close());
  exchange(t, nicA, nicB);
});

t.test('every port gives its own address (10.77.HI.LO), and 65535 one outside the subnet\'s broadcast', async (t) => {
  // Expected by hand from the rule: the port's high byte, then its low byte.
  t.same([...ipv4FromNumber(256)], [10, 77, 1, 0], 'port 256');
  t.same([...ipv4FromNumber(257)], [10, 77, 1, 1], 'port 257: not the same as 256');
  t.same([...ipv4FromNumber(18800)], [10, 77, 73, 112], 'port 18800');
  t.same([...ipv4FromNumber(65535)], [10, 78, 0, 1], 'port 65535: 10.77.255.255 is 10.77.0.0/16\'s broadcast');
  const seen = new Set<string>();
  for (let n = 1; n <= 65535; n++) seen.add(ipv4FromNumber(n).join('.'));
  t.equal(seen.size, 65535, 'all 65535 ports: 65535 addresses');
  t.notOk(seen.has('10.77.255.255') || seen.has('10.77.0.0'), 'none is the subnet\'s network or broadcast address');
  t.throws(() => ipv4FromNumber(0), RangeError);
});

t.test('two NICs on ports 256k and 256k + 1, cabled to each other, have two addresses and talk', async (t) => {
  // A multiple of 256 that is free, with the port after it.
  let base = 0;
  for (let tries = 0; tries < 50 && base === 0; tries++) {
    const p = await freeUdpPort();
    const candidate = (p & ~0xff) === 0 ? 0x8000 : p & ~0xff;
    const a = Nic.open(`emu:${candidate}:${candidate + 1}`);
    if (!a.ok) continue;
    a.value.close();
    base = candidate;
  }
  if (base === 0) {
    t.fail('no free pair of ports 256k, 256k + 1 found');
    return;
  }
  const nicA = Nic.open(`emu:${base}:${base + 1}`);
  const nicB = Nic.open(`emu:${base + 1}:${base}`);
  t.teardown(() => { if (nicA.ok) nicA.value.close(); if (nicB.ok) nicB.value.close(); });
  if (!nicA.ok || !nicB.ok)
    return t.fail(
      `ports ${base}, ${base + 1} were taken meanwhile: ${nicA.ok ? '' : nicA.error} ${nicB.ok ? '' : nicB.error}`,
    );
  t.not(nicA.value.info.ipv4, nicB.value.info.ipv4,
    `two addresses: ${nicA.value.info.ipv4} and ${nicB.value.info.ipv4}`);
  exchange(t, nicA.value, nicB.value);
});

t.test('a cable whose two ends would share a port, an address or a MAC is refused', async (t) => {
  const [p, q] = await freeUdpPortPair();
  t.throws(() => Nic.open(`emu:${p}:${p}`), InvalidArgument, 'a UDP cable from a port to itself');
  t.throws(() => Nic.open(`emu:${p}:${q}`, { ipv4: ipv4FromNumber(q).join('.') }), InvalidArgument,
    'this end given the address the other end\'s port gives');
  t.throws(
    () => Nic.open(`emu:${p}:${q}`, {
      mac: `02:62:6e:00:${(q >> 8).toString(16).padStart(2, '0')}:${(q & 0xff).toString(16).padStart(2, '0')}`,
    }),
    InvalidArgument, 'this end given the MAC the other end\'s port gives',
  );
  t.throws(() => Nic.open(`emu:${p}:${q}`, { stepped: true }), InvalidArgument,
    'a stepped NIC on a UDP cable (a virtual clock against real frames)');
  const pair = `cables-${process.pid}`;
  const a = must(Nic.open('emu', { stepped: true, pair, ipv4: '10.9.9.9' }), 'Nic.open pair A');
  t.teardown(() => a.close());
  const b = Nic.open('emu', { stepped: true, pair, ipv4: '10.9.9.9' });
  t.equal(b.ok, false, 'a pair cable\'s second NIC with the first one\'s address');
  if (!b.ok) t.match(b.error, /already has the address 10\.9\.9\.9/, b.ok ? '' : b.error);
  const c = must(Nic.open('emu', { stepped: true, pair, ipv4: '10.9.9.10' }), 'Nic.open pair B with its own address');
  t.teardown(() => c.close());
  exchange(t, a, c);
});
