/**
 * A program that uses the whole public API of rig-bnxt, as a TypeScript consumer writes it
 * against the installed package (test/package.test.ts compiles it with the consumer's own strict
 * tsc and runs what it emits). It prints one JSON line of what it observed. Kept as text: it is
 * compiled in a scratch project, never by this repository's tsconfig.
 */
import { emuChip } from '../../drivers/emu/model/config.ts';
export const CONSUMER_MAIN_TS = `import {
  Nic, Qp, Region, InvalidArgument, formatEndpoint, parseEndpoint, pathMtuFor, ok, err,
  type NicInfo, type NicOptions, type QpSide, type ConnectOptions, type Endpoint, type Result,
} from 'rig-bnxt';

function must<A>(r: Result<A>, what: string): A {
  if (!r.ok) throw new Error(what + ': ' + r.error);
  return r.value;
}

async function main(): Promise<void> {
  const out = new Map<string, unknown>();
  const options: NicOptions = { mtu: 1500 };
  const opened: Result<Nic> = Nic.open('emu', options);
  const nic = must(opened, 'Nic.open');
  const info: NicInfo = nic.info;
  out.set('chip', info.chip);
  out.set('pathMtu', pathMtuFor(info.mtu));
  const a: Qp = must(Qp.make(nic), 'Qp.make a');
  const b: Qp = must(Qp.make(nic), 'Qp.make b');
  const text: string = formatEndpoint(b.endpoint);
  const e: Endpoint = parseEndpoint(text);
  const connectOptions: ConnectOptions = { pathMtu: 1024 };
  must(a.connect(e, connectOptions), 'connect a');
  must(b.connect(a.endpoint), 'connect b');
  out.set('connected', a.connected && b.connected);
  out.set('numbers', a.number !== b.number);
  const r: Region = must(Region.alloc(nic, 1 << 16), 'Region.alloc');
  out.set('region', { length: r.length, keyIsNumber: typeof r.key === 'number' });
  r.bytes.set([104, 101, 108, 108, 111], 0);
  const side: QpSide = 'receive';
  b.receive(r, 4096, 100);
  out.set('room', b.room(side));
  a.send(r, 0, 5);
  out.set('send', a.wait('send', 10e6));
  out.set('receive', await b.waitAsync(side, 10e6));
  out.set('received', String.fromCharCode(...r.bytes.subarray(4096, 4101)));
  a.read(r, 4096, r, 8192, 5);
  const n: number = a.waitBytes('send', 10e6);
  out.set('read', n === -2 ? a.lastError : n);
  out.set('poll', a.poll('send') ?? null);
  out.set('pollBytes', a.pollBytes('send'));
  try {
    a.send(r, (1 << 16) - 2, 5);
    out.set('misuse', 'not thrown');
  } catch (x) {
    out.set('misuse', x instanceof InvalidArgument ? x.code : String(x));
  }
  out.set('failure', a.failure ?? null);
  const made: Result<number> = ok(1);
  const refused: Result<number> = err('no');
  out.set('results', [made.ok, refused.ok]);
  must(a.destroy(), 'destroy a');
  must(b.destroy(), 'destroy b');
  must(r.deregister(), 'deregister');
  nic.close();
  out.set('closed', nic.closed);
  console.log(JSON.stringify(Object.fromEntries(out)));
}

main().catch((x: unknown) => {
  console.log(JSON.stringify({ error: String(x) }));
  process.exitCode = 1;
});
`;

/** What the program above prints when everything works (the fields that do not vary). */
export const CONSUMER_EXPECTED = {
  // The chip a software NIC opened without one is: RIG_BNXT_CHIP's (the child inherits it), else the default.
  chip: emuChip(undefined).name,
  pathMtu: 1024,
  connected: true,
  numbers: true,
  region: { length: 65536, keyIsNumber: true },
  room: 4094,
  send: { ok: true, value: 5 },
  receive: { ok: true, value: 5 },
  received: 'hello',
  read: 5,
  poll: null,
  pollBytes: -1,
  misuse: 'ERR_RIG_BNXT_INVALID_ARGUMENT',
  failure: null,
  results: [true, false],
  closed: true,
};
