/**
 * Child process of test/qp-post-inlining.test.ts, run with --allow-natives-syntax and
 * --trace-turbo-inlining: sends and polls on a stepped software NIC of the chip (argv[2]) and
 * firmware (argv[3]) named, as a program's send loop does, then has TurboFan compile the loop
 * and BnxtQp's postSend (so their inlining decisions are in the trace, whatever the machine's
 * load), and prints `RESULT {...}`: whether V8 reports both compiled by TurboFan.
 */
import { Qp, Region } from '../../lib/index.ts';
import { driverQpOf } from '../../lib/qp.ts';
import { must, openPair } from './qp-data.ts';

// V8's %GetOptimizationStatus bits (src/runtime/runtime.h, OptimizationStatus).
const TURBOFANNED = 1 << 6;
// Natives syntax is not valid TypeScript/ESM source: compile it at run time.
const natives = (body: string) => new Function('f', body) as (f: unknown) => number;
const status = natives('return %GetOptimizationStatus(f);');
const prepare = natives('%PrepareFunctionForOptimization(f);');
const optimize = natives('%OptimizeFunctionOnNextCall(f);');

const BATCH = 256;
const p = openPair({ stepped: true, chip: process.argv[2], firmware: process.argv[3] }, 1 << 16);
const postSend = driverQpOf(p.a).postSend;

/** A program's send loop: Qp.send, whose post is BnxtQp.postSend. */
function sendBatch(a: Qp, r: Region): void {
  for (let i = 0; i < BATCH; i++) a.send(r, 0, 64);
}

function round(): void {
  for (let i = 0; i < BATCH; i++) p.b.receive(p.rb, 0, 64);
  sendBatch(p.a, p.ra);
  for (let i = 0; i < BATCH; i++) must(p.b.wait('receive', 1_000_000) ?? { ok: false, error: 'no receive' }, 'receive');
  for (let i = 0; i < BATCH; i++) must(p.a.wait('send', 1_000_000) ?? { ok: false, error: 'no send' }, 'send');
}

// The parent raises V8's interrupt budget, so nothing is compiled by TurboFan on its own: the
// compiles below are the only ones, each with the feedback of the whole warm-up.
for (const f of [postSend, sendBatch]) prepare(f);
for (let k = 0; k < 20; k++) round();
for (const f of [postSend, sendBatch]) optimize(f);
round();
const turbofanned = (f: unknown): boolean => (status(f) & TURBOFANNED) !== 0;
console.log(`RESULT ${JSON.stringify({ postSend: turbofanned(postSend), sendBatch: turbofanned(sendBatch) })}`);
p.nic.close();
