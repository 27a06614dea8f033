/**
 * Child process of test/vfio-mmio.test.ts. Runs BarMmio.doorbell64 at one V8 tier (chosen
 * by argv[2] together with the V8 flags the parent passes) over a real shared mapping, and
 * prints one JSON line: the tier V8 reported for doorbell64 while each pattern was checked,
 * and the patterns whose bits did not survive. Needs --allow-natives-syntax.
 */
import { BarMmio } from '../../drivers/vfio/mmio.ts';
import { LINUX, systemLibc } from '../../drivers/native/libc.ts';
import { DOORBELL_PATTERNS, doorbellFailures } from './doorbell-patterns.ts';

type Tier = 'interpreter' | 'baseline' | 'maglev' | 'turbofan';
const tier = process.argv[2] as Tier;

// V8's %GetOptimizationStatus bits (src/runtime/runtime.h, OptimizationStatus).
const STATUS = { optimized: 1 << 4, maglevved: 1 << 5, turbofanned: 1 << 6, interpreted: 1 << 7, baseline: 1 << 15 };
// Natives syntax is not valid TypeScript/ESM source: compile it at run time.
const natives = (body: string) => new Function('f', body) as (f: unknown) => number;
const status = natives('return %GetOptimizationStatus(f);');
const prepare = natives('%PrepareFunctionForOptimization(f);');
const optimizeTurbofan = natives('%OptimizeFunctionOnNextCall(f);');
const optimizeMaglev = natives('%OptimizeMaglevOnNextCall(f);');

const BAR_BYTES = 128 * 1024;
const DOORBELL_OFFSET = 0x10000; // P5 PF L2/CREQ doorbell page in BAR2
const libc = systemLibc();
const address = libc.mmap(BAR_BYTES, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED | LINUX.MAP_ANONYMOUS, -1, 0);
if (address < 0n) throw new Error(`mmap failed: ${address}`);
const mmio = new BarMmio(libc.view(address, BAR_BYTES));
const check = new Uint32Array(libc.view(address, BAR_BYTES));
const doorbell64 = BarMmio.prototype.doorbell64;

const wanted: Record<Tier, number> = {
  interpreter: STATUS.interpreted,
  baseline: STATUS.baseline,
  maglev: STATUS.maglevved,
  turbofan: STATUS.turbofanned,
};

if (tier === 'maglev' || tier === 'turbofan') {
  prepare(doorbell64);
  // Warm up with the whole range of halves (small, large, negative) so the optimised code
  // has seen every kind of number it will be given.
  for (let i = 0; i < 1e5; i++) mmio.doorbell64(8 * (i & 15), i * 0x9e3779b1, (i << 20) | (i & 0xfffff));
  (tier === 'maglev' ? optimizeMaglev : optimizeTurbofan)(doorbell64);
  mmio.doorbell64(0, 0, 0);
}

let checksAtTier = 0;
const failures = doorbellFailures(mmio, check, DOORBELL_OFFSET, () => {
  if ((status(doorbell64) & wanted[tier]) !== 0) checksAtTier++;
});
process.stdout.write(
  `${JSON.stringify({
    tier, patterns: DOORBELL_PATTERNS.length, checksAtTier, status: status(doorbell64), failures,
  })}\n`,
);
