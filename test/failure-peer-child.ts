/**
 * The peer process of test/failure-peer-killed.test.ts: a software NIC cabled over UDP on
 * 127.0.0.1 (`emu:LOCAL:REMOTE`) whose queue pair connects to the parent's, posts RECEIVES
 * receives, says `ready`, and then only lives, until the parent kills it with SIGKILL.
 *
 *   node --import ./scripts/register-ts.mjs test/failure-peer-child.ts LOCAL REMOTE RECEIVES
 *
 * stdout: its endpoint (formatEndpoint), then `ready`. stdin: the peer's endpoint, one line.
 * It exits on its own after 60 s, so it never outlives a failed test.
 */
import { createInterface } from 'node:readline';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint } from '../lib/index.ts';

const [local, remote, receivesText] = process.argv.slice(2);

function fail(message: string): never {
  process.stderr.write(`failure-peer-child: ${message}\n`);
  process.exit(1);
}

setTimeout(() => fail('gave up after 60 s'), 60_000).unref();
const alive = setInterval(() => {}, 1000);

const opened = Nic.open(`emu:${local}:${remote}`);
if (!opened.ok) fail(opened.error);
const nic = opened.value;
const made = Qp.make(nic);
const region = Region.alloc(nic, 1 << 16);
if (!made.ok || !region.ok) fail('no queue pair or region');
const qp = made.value;
process.stdout.write(`${formatEndpoint(qp.endpoint)}\n`);

const lines = createInterface({ input: process.stdin });
lines.once('line', (line) => {
  const connected = qp.connect(parseEndpoint(line));
  if (!connected.ok) fail(connected.error);
  for (let i = 0; i < Number(receivesText); i++) qp.receive(region.value, i * 1024, 1024);
  process.stdout.write('ready\n');
});
lines.on('close', () => {
  clearInterval(alive);
});
