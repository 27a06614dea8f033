/**
 * `npm run fuzz [-- --frames N] [-- --seed S] [-- --only port|driver] [-- --bring-ups N --rounds N --cqes N]`:
 * the long fuzz runs of issue 5.
 *
 *   port    N crafted frames (default 10^6) into a software NIC's port from the cable
 *           (stress/fuzz-port.ts): no crash, no DMA write outside a receive, CQ or ring the NIC
 *           may write, no byte sent to a peer not granted reads, no effect on queue pairs whose
 *           peer is on the same NIC
 *   driver  bring-ups, command rounds and CQEs under malformed, refused and missing firmware
 *           answers and random completions (stress/fuzz-driver.ts): clear errors, no exception,
 *           no IOMMU fault, every DMA byte back at close
 *
 * Prints the chip and the seed first (a run is replayed by both); exits 1 on any violation. The
 * chip is the software NIC's: the BCM57608 unless RIG_BNXT_CHIP names another (BCM57508: the P5).
 */
import { emuChip, CHIP_ENV } from '../drivers/emu/model/config.ts';
import { fuzzPort } from './stress/fuzz-port.ts';
import { fuzzDriver } from './stress/fuzz-driver.ts';

const USAGE =
  'usage: npm run fuzz -- [--frames N] [--seed S] [--only port|driver] [--bring-ups N] [--rounds N] [--cqes N]';

interface Args {
  frames: number; seed: number; only: string | undefined; bringUps: number; rounds: number; cqes: number;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = {
    frames: 1_000_000, seed: (Date.now() ^ (process.pid << 16)) >>> 0, only: undefined, bringUps: 2000, rounds: 2000,
    cqes: 20_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg, undefined];
    const value = inline ?? argv[++i];
    if (value === undefined) throw new Error(`${name} needs a value\n${USAGE}`);
    if (name === '--only') {
      if (value !== 'port' && value !== 'driver') throw new Error(`--only takes port or driver\n${USAGE}`);
      a.only = value;
      continue;
    }
    const n = Number(value);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${name} needs a whole number\n${USAGE}`);
    if (name === '--frames') a.frames = n;
    else if (name === '--seed') a.seed = n >>> 0;
    else if (name === '--bring-ups') a.bringUps = n;
    else if (name === '--rounds') a.rounds = n;
    else if (name === '--cqes') a.cqes = n;
    else throw new Error(`unknown option ${arg}\n${USAGE}`);
  }
  return a;
}

function main(): number {
  let a: Args;
  try {
    a = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const replay = `${CHIP_ENV}=${emuChip(undefined).name} npm run fuzz -- --seed ${a.seed}`;
  console.log(`fuzz: ${emuChip(undefined).name}, seed ${a.seed} (replay: ${replay})`);
  let failed = false;
  if (a.only !== 'driver') {
    console.log(`port: ${a.frames} crafted frames`);
    const r = fuzzPort({
      seed: a.seed, frames: a.frames, progress: (line) => console.log(`  ${line}`),
      progressEvery: Math.max(10_000, Math.floor(a.frames / 10)),
    });
    const drops =
      Object.entries(r.counters).filter(([k, v]) => k.startsWith('drop') && v > 0).map(([k, v]) => `${k.slice(4)} ${v}`)
      .join(', ');
    console.log(
      `port: ${r.frames} frames in ${(r.wallMs / 1000).toFixed(1)} s (${Math.round(r.frames / (r.wallMs / 1000))} ` +
        `frames/s); ${r.parsed} whole RoCEv2 packets for the port`,
    );
    console.log(`      refused: ${drops}`);
    console.log(
      `      answered: ` +
        `${r.counters['naksSent']} NAKs, ` +
        `${r.counters['acksSent']} ACKs, ` +
        `${r.counters['readResponsesSent']} read responses; ` +
        `${r.counters['qpErrors']} queue pairs failed and ` +
        `${r.rebuilds} rebuilt; ${r.readsChecked} legitimate reads checked`,
    );
    if (r.violations.length > 0) {
      failed = true;
      console.error('port: FAILED');
      for (const v of r.violations) console.error(`  ${v}`);
    } else console.log('port: ok');
  }
  if (a.only !== 'port') {
    console.log(`driver: ${a.bringUps} bring-ups, ${a.rounds} command rounds, ${a.cqes} CQEs`);
    const r = fuzzDriver({
      seed: a.seed, bringUps: a.bringUps, rounds: a.rounds, cqes: a.cqes, progress: (line) => console.log(`  ${line}`),
    });
    console.log(
      `driver: ${(r.wallMs / 1000).toFixed(1)} s; bring-ups ${r.bringUps.ok} whole, ${r.bringUps.failed} failed ` +
        `cleanly; command steps ` +
          `${r.steps.ok} Ok, ` +
          `${r.steps.failed} Error; ` +
          `${r.cqes.injected} CQEs, ${r.cqes.failures} rings failed, ${r.cqes.rebuilds} rebuilds`,
    );
    console.log(`        ${Object.keys(r.errors).length} kinds of error met`);
    if (r.violations.length > 0) {
      failed = true;
      console.error('driver: FAILED');
      for (const v of r.violations) console.error(`  ${v}`);
    } else console.log('driver: ok');
  }
  if (failed) console.error(`replay: ${replay}`);
  return failed ? 1 : 0;
}

process.exitCode = main();
