// Issue 3: the endpoint's text form (QPN:PSN:GID:MAC), the one line a program sends a peer.
import t from 'tap';
import { formatEndpoint, parseEndpoint, InvalidArgument, type Endpoint } from '../lib/index.ts';

// Written out by hand: QP 0x12, PSN 0xa1b2c3, GID ::ffff:10.77.0.1, MAC 02:62:6e:00:00:01.
const TEXT = '000012:a1b2c3:00000000000000000000ffff0a4d0001:02:62:6e:00:00:01';
const FIXTURE: Endpoint = {
  qp: 0x12,
  psn: 0xa1b2c3,
  gid: Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 1]),
  mac: Uint8Array.from([0x02, 0x62, 0x6e, 0x00, 0x00, 0x01]),
};

t.test('formatEndpoint writes QPN:PSN:GID:MAC in fixed-width lower-case hex', async (t) => {
  t.equal(formatEndpoint(FIXTURE), TEXT);
  const top: Endpoint = { qp: 0xffffff, psn: 0, gid: new Uint8Array(16).fill(0xab), mac: new Uint8Array(6).fill(0xff) };
  t.equal(formatEndpoint(top), `ffffff:000000:${'ab'.repeat(16)}:ff:ff:ff:ff:ff:ff`, 'the largest QP number and PSN 0');
});

t.test('parseEndpoint reads it back', async (t) => {
  const e = parseEndpoint(TEXT);
  t.equal(e.qp, 0x12);
  t.equal(e.psn, 0xa1b2c3);
  t.ok(e.gid instanceof Uint8Array && e.gid.length === 16, 'gid: 16 bytes');
  t.ok(e.mac instanceof Uint8Array && e.mac.length === 6, 'mac: 6 bytes');
  t.same([...e.gid], [...FIXTURE.gid]);
  t.same([...e.mac], [...FIXTURE.mac]);
  t.same(parseEndpoint(`  ${TEXT.toUpperCase()}\n`), e,
    'upper case and surrounding white space (a line read from a socket)');
});

t.test('format and parse round-trip every field', async (t) => {
  // A fixed xorshift sequence: the same values each run.
  let x = 0x1234567;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), x >>> 0);
  for (let i = 0; i < 200; i++) {
    const e: Endpoint = {
      qp: next() & 0xffffff,
      psn: next() & 0xffffff,
      gid: Uint8Array.from({ length: 16 }, () => next() & 0xff),
      mac: Uint8Array.from({ length: 6 }, () => next() & 0xff),
    };
    const back = parseEndpoint(formatEndpoint(e));
    if (back.qp !== e.qp || back.psn !== e.psn || back.gid.join() !== e.gid.join() ||
      back.mac.join() !== e.mac.join()) {
      t.fail(`round trip of ${formatEndpoint(e)} gave ${formatEndpoint(back)}`);
      return;
    }
  }
  t.pass('200 endpoints round-trip');
});

t.test('formatEndpoint throws InvalidArgument for what is not an endpoint', async (t) => {
  const bad: [string, Endpoint][] = [
    ['qp over 24 bits', { ...FIXTURE, qp: 1 << 24 }],
    ['negative qp', { ...FIXTURE, qp: -1 }],
    ['fractional psn', { ...FIXTURE, psn: 1.5 }],
    ['psn over 24 bits', { ...FIXTURE, psn: 1 << 24 }],
    ['gid of 15 bytes', { ...FIXTURE, gid: new Uint8Array(15) }],
    ['gid as a string', { ...FIXTURE, gid: '::1' as unknown as Uint8Array }],
    ['mac of 7 bytes', { ...FIXTURE, mac: new Uint8Array(7) }],
  ];
  for (const [what, e] of bad) t.throws(() => formatEndpoint(e), InvalidArgument, what);
});

t.test('formatEndpoint throws InvalidArgument, not a TypeError, for what is not an object', async (t) => {
  for (const [what, e] of [
    ['null', null], ['undefined', undefined], ['a number', 42], ['a string', TEXT], ['an empty object', {}],
  ] as const) {
    t.throws(() => formatEndpoint(e as unknown as Endpoint), InvalidArgument, what);
  }
  const throwing = { get qp(): number { throw new Error('getter'); } };
  t.throws(() => formatEndpoint({ ...FIXTURE, qp: undefined as unknown as number }), InvalidArgument, 'qp missing');
  t.throws(() => formatEndpoint(throwing as unknown as Endpoint), /getter/,
    'a getter that throws is the caller\'s own exception');
});

t.test('parseEndpoint throws InvalidArgument for malformed text', async (t) => {
  const bad = [
    '',
    '12:a1b2c3:00000000000000000000ffff0a4d0001:02:62:6e:00:00:01', // QPN not 6 digits
    '000012:a1b2c3:00000000000000000000ffff0a4d00:02:62:6e:00:00:01', // GID of 15 bytes
    '000012:a1b2c3:00000000000000000000ffff0a4d0001:02:62:6e:00:00', // MAC of 5 bytes
    '000012:a1b2c3:00000000000000000000ffff0a4d0001:02:62:6e:00:00:01:07', // MAC of 7 bytes
    '000012:a1b2cg:00000000000000000000ffff0a4d0001:02:62:6e:00:00:01', // not hex
    `${TEXT}\n${TEXT}`, // two lines
  ];
  for (const text of bad) t.throws(() => parseEndpoint(text), InvalidArgument, JSON.stringify(text));
  t.throws(() => parseEndpoint(42 as unknown as string), InvalidArgument, 'not a string');
  t.throws(() => parseEndpoint(undefined as unknown as string), InvalidArgument, 'undefined');
});
