/**
 * The other process of test/qp-data-udp.test.ts: a software NIC cabled over UDP on 127.0.0.1
 * (`emu:LOCAL:REMOTE`) whose queue pair sends every message it receives back, unchanged.
 *
 *   node --import ./scripts/register-ts.mjs test/helpers/qp-echo-child.ts LOCAL REMOTE COUNT
 *
 * stdout: its endpoint (formatEndpoint), then `ready` once connected with receives posted,
 * then `done` after COUNT echoes. stdin: the peer's endpoint, one line. It exits on its own
 * after 120 s, or when stdin closes before the endpoint came, so it never outlives a failed test.
 */
import { createInterface } from 'node:readline';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint } from '../../lib/index.ts';

const [local, remote, countText] = process.argv.slice(2);
const count = Number(countText);
const SLOT = 1 << 17;
const LIMIT_US = 30e6;

function fail(message: string): never {
  process.stderr.write(`qp-echo-child: ${message}\n`);
  process.exit(1);
}

setTimeout(() => fail('gave up after 120 s'), 120_000).unref();

const opened = Nic.open(`emu:${local}:${remote}`);
if (!opened.ok) fail(opened.error);
const nic = opened.value;
const made = Qp.make(nic);
const region = Region.alloc(nic, 16 * SLOT);
if (!made.ok || !region.ok) fail('no queue pair or region');
const qp = made.value;
const r = region.value;
process.stdout.write(`${formatEndpoint(qp.endpoint)}\n`);

const lines = createInterface({ input: process.stdin });
let started = false;
lines.on('line', (line) => {
  if (started) return;
  started = true;
  const connected = qp.connect(parseEndpoint(line));
  if (!connected.ok) fail(connected.error);
  echo();
});
lines.on('close', () => { if (!started) fail('stdin closed before the peer\'s endpoint came'); });

function echo(): void {
  const slots = 16;
  for (let i = 0; i < Math.min(count, slots); i++) qp.receive(r, i * SLOT, SLOT);
  process.stdout.write('ready\n');
  for (let i = 0; i < count; i++) {
    const got = qp.wait('receive', LIMIT_US);
    if (got === undefined || !got.ok) fail(`receive ${i}: ${got === undefined ? 'none within 30 s' : got.error}`);
    // Send the message back from where it landed; reuse the slot once that send completed.
    qp.send(r, (i % slots) * SLOT, got.value);
    const sent = qp.wait('send', LIMIT_US);
    if (sent === undefined || !sent.ok)
      fail(`echo ${i}: ${sent === undefined ? 'no completion within 30 s' : sent.error}`);
    if (i + slots < count) qp.receive(r, (i % slots) * SLOT, SLOT);
  }
  process.stdout.write('done\n');
  nic.close();
  process.exit(0);
}
