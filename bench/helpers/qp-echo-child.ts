/**
 * The echo side of bench/qp-udp-pingpong.ts: a software NIC cabled over UDP on 127.0.0.1
 * (`emu:LOCAL:REMOTE`) whose queue pair sends every message back as it came, until a message
 * of 0 bytes (echoed too), or 30 s without one. A message of 1 byte (echoed too) restarts the count
 * of CPU time and messages: the warm-up before it is not counted.
 *
 *   node --import ./scripts/register-ts.mjs bench/helpers/qp-echo-child.ts LOCAL REMOTE [thread]
 *
 * `thread`: the NIC's model runs in a worker thread (Nic.open's thread), else inline (`thread: false`).
 *
 * stdout: its endpoint (formatEndpoint), then `ready` once connected with receives posted, and at
 * the end `cpu MICROSECONDS MESSAGES`: its CPU time (every thread) over the messages it echoed.
 * stdin: the peer's endpoint, one line.
 */
import { createInterface } from 'node:readline';
import { Nic, Qp, Region, formatEndpoint, parseEndpoint } from '../../lib/index.ts';

const [local, remote, mode] = process.argv.slice(2);
const SLOTS = 16;
const SLOT = 4096;
const SILENCE_US = 30e6;

function fail(message: string): never {
  process.stderr.write(`qp-echo-child: ${message}\n`);
  process.exit(1);
}

const opened = Nic.open(`emu:${local}:${remote}`, { thread: mode === 'thread' });
if (!opened.ok) fail(opened.error);
const nic = opened.value;
const made = Qp.make(nic);
const region = Region.alloc(nic, SLOTS * SLOT);
if (!made.ok || !region.ok) fail('no queue pair or region');
const qp = made.value;
const r = region.value;
process.stdout.write(`${formatEndpoint(qp.endpoint)}\n`);

const lines = createInterface({ input: process.stdin });
let started = false;
lines.on('close', () => { if (!started) fail('stdin closed before the peer\'s endpoint came'); });
lines.once('line', (line) => {
  started = true;
  lines.close();
  const connected = qp.connect(parseEndpoint(line));
  if (!connected.ok) fail(connected.error);
  // Leave the event loop a turn to flush stdout before the blocking loop.
  process.stdout.write('ready\n', () => echo());
});

function echo(): void {
  let cpuStart = process.cpuUsage();
  let messages = 0;
  for (let i = 0; i < SLOTS; i++) qp.receive(r, i * SLOT, SLOT);
  for (let i = 0; ; i++) {
    const n = qp.waitBytes('receive', SILENCE_US);
    if (n < 0) fail(n === -1 ? 'no message for 30 s' : `receive: ${qp.lastError}`);
    const slot = (i % SLOTS) * SLOT;
    qp.send(r, slot, n);
    if (qp.waitBytes('send', SILENCE_US) < 0) fail(`echo: ${qp.lastError || 'no completion for 30 s'}`);
    if (n === 0) break;
    messages++;
    if (n === 1) {
      cpuStart = process.cpuUsage();
      messages = 0;
    }
    qp.receive(r, slot, SLOT);
  }
  nic.close();
  const cpu = process.cpuUsage(cpuStart);
  process.stdout.write(`cpu ${cpu.user + cpu.system} ${messages}\n`, () => process.exit(0));
}
