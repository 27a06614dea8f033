// Issue 3, Qp.endpoint: one test per spec sentence (Rig_bnxt.Qp, "type endpoint").
import t from 'tap';
import { Qp, Region, formatEndpoint, parseEndpoint } from '../lib/index.ts';
import { openNic, qpAttributes, requests, unwrap } from './helpers/qp-control.ts';

/** The RoCEv2 GID of an IPv4 address, ::ffff:a.b.c.d (RFC 4291 2.5.5.2; what bnxt_re's ADD_GID carries). */
function ipv4MappedGid(dotted: string): number[] {
  return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...dotted.split('.').map(Number)];
}

t.test('qp: the queue pair\'s number', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  t.equal(a.endpoint.qp, a.number);
  t.not(a.endpoint.qp, b.endpoint.qp, 'each queue pair its own');
  t.ok(qpAttributes(nic, a.endpoint.qp), 'the number the firmware knows the QP by');
  t.ok(a.endpoint.qp >= 2, 'not QP0 or QP1 (reserved)');
  // A peer connected to it names it as its destination.
  unwrap(b.connect(a.endpoint));
  t.equal(qpAttributes(nic, b.number)?.destQpn, a.number, 'the peer sends to that number');
  unwrap(a.destroy());
  unwrap(b.destroy());
  nic.close();
});

t.test('psn: the packet sequence number its sends start at', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  const e = a.endpoint;
  t.ok(Number.isInteger(e.psn) && e.psn >= 0 && e.psn < 2 ** 24, '24 bits');
  t.equal(a.endpoint.psn, e.psn, 'the same each time it is read');
  unwrap(a.connect(b.endpoint));
  unwrap(b.connect(a.endpoint));
  t.equal(qpAttributes(nic, a.number)?.sqPsn, e.psn, 'a sends from it (sq_psn)');
  t.equal(qpAttributes(nic, b.number)?.rqPsn, e.psn, 'its peer expects it (rq_psn)');
  // And a message moves: the peer accepts PSNs from exactly there.
  const r = unwrap(Region.alloc(nic, 4096));
  r.bytes.set([7, 8, 9], 0);
  b.receive(r, 1024, 16);
  a.send(r, 0, 3);
  t.same(a.wait('send', 1_000_000), { ok: true, value: 3 });
  t.same(b.wait('receive', 1_000_000), { ok: true, value: 3 });
  t.same([...r.bytes.subarray(1024, 1027)], [7, 8, 9]);
  t.equal(a.endpoint.psn, e.psn, 'still where its sends started, after sending');
  unwrap(a.destroy());
  unwrap(b.destroy());
  unwrap(r.deregister());
  nic.close();
});

t.test('gid and mac: its NIC\'s GID (16 bytes) and 6-byte MAC address', async (t) => {
  const nic = openNic({ ipv4: '10.9.8.7', mac: '02:00:5e:10:20:30' });
  const qp = unwrap(Qp.make(nic));
  const e = qp.endpoint;
  t.ok(e.gid instanceof Uint8Array && e.gid.length === 16, 'gid: a Uint8Array of 16 bytes');
  t.ok(e.mac instanceof Uint8Array && e.mac.length === 6, 'mac: a Uint8Array of 6 bytes');
  t.same([...e.gid], ipv4MappedGid('10.9.8.7'), 'the IPv4-mapped GID of the NIC\'s address');
  t.same([...e.mac], [0x02, 0x00, 0x5e, 0x10, 0x20, 0x30], 'the NIC\'s MAC');
  t.equal(nic.info.mac, '02:00:5e:10:20:30');
  const other = unwrap(Qp.make(nic));
  t.same([...other.endpoint.gid], [...e.gid], 'every queue pair of a NIC has its GID');
  unwrap(qp.destroy());
  unwrap(other.destroy());
  nic.close();
});

t.test('plain data, which a program sends to the peer by any means', async (t) => {
  const nic = openNic();
  const a = unwrap(Qp.make(nic));
  const b = unwrap(Qp.make(nic));
  const asked = requests(nic);
  const e = a.endpoint;
  t.same(requests(nic), asked, 'reading it sends the firmware nothing');
  t.same(Object.keys(e).sort(), ['gid', 'mac', 'psn', 'qp'], 'four fields');
  t.same(structuredClone(e), e, 'it survives structured cloning (postMessage)');
  e.gid.fill(0);
  e.mac.fill(0);
  t.notSame([...a.endpoint.gid], [...e.gid], 'a copy: changing it changes nothing of the queue pair');
  // Sent as text and read back by the peer, it connects.
  const text = formatEndpoint(a.endpoint);
  unwrap(b.connect(parseEndpoint(text)));
  unwrap(a.connect(parseEndpoint(formatEndpoint(b.endpoint))));
  t.equal(qpAttributes(nic, b.number)?.destQpn, a.number);
  t.same([...parseEndpoint(text).gid], [...a.endpoint.gid]);
  const r = unwrap(Region.alloc(nic, 4096));
  a.receive(r, 0, 64);
  b.send(r, 2048, 64);
  t.same(b.wait('send', 1_000_000), { ok: true, value: 64 }, 'a send over a connection made from text');
  t.same(a.wait('receive', 1_000_000), { ok: true, value: 64 });
  unwrap(a.destroy());
  unwrap(b.destroy());
  unwrap(r.deregister());
  nic.close();
});
