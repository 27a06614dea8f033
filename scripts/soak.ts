/**
 * `npm run soak [-- --messages N] [-- --seed S] [-- --drop P --duplicate P --reorder P --corrupt P]
 *   [-- --hostile-seeds N --hostile-messages M | --hostile-seed S]`:
 * the full soak of issue 5 (stress/soak-run.ts): by default 10^6 messages of mixed sizes, sends
 * between two software NICs and reads within each, under 1 % drop, 1 % duplicate, 1 % reorder
 * and 0.1 % corruption of every frame sent. Prints the seed first (a run is replayed by its
 * seed), progress, then the figures; exits 1 if any message was lost, duplicated, corrupted
 * or out of order, or a room was inconsistent. Then the hostile wire of issue 15
 * (stress/hostile-wire-run.ts): 10 seeds (from the soak's seed on) of 2,000 messages per stream
 * through the fault-injecting relay; a failing seed is printed with the line that replays it.
 * Both run on the software NIC's chip: the BCM57608 unless RIG_BNXT_CHIP names another
 * (RIG_BNXT_CHIP=BCM57508 for the P5); the first line says which, and the replay line keeps it.
 */
import { emuChip, CHIP_ENV } from '../drivers/emu/model/config.ts';
import { runSoak, faultTotals, DEFAULT_FAULTS } from './stress/soak-run.ts';
import { runHostileWire } from './stress/hostile-wire-run.ts';

const USAGE =
  'usage: npm run soak -- [--messages N] [--seed S] [--drop P] [--duplicate P] [--reorder P] [--corrupt P] ' +
  '[--hostile-seeds N] [--hostile-messages M] [--hostile-seed S]';

interface SoakArgs {
  messages: number;
  seed: number;
  faults: Record<string, number>;
  hostileSeeds: number;
  hostileMessages: number;
  /** Only the hostile wire, this one seed. */
  hostileSeed: number | undefined;
}

function parseArgs(argv: readonly string[]): SoakArgs {
  let messages = 1_000_000;
  let seed = (Date.now() ^ (process.pid << 16)) >>> 0;
  let hostileSeeds = 10;
  let hostileMessages = 2000;
  let hostileSeed: number | undefined;
  const faults: Record<string, number> = { ...DEFAULT_FAULTS } as Record<string, number>;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = inline ?? argv[++i];
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${name} needs a number\n${USAGE}`);
    if (name === '--messages' && Number.isInteger(n) && n > 0) messages = n;
    else if (name === '--seed' && Number.isInteger(n)) seed = n >>> 0;
    else if (['--drop', '--duplicate', '--reorder', '--corrupt'].includes(name) && n <= 1) faults[name.slice(2)] = n;
    else if (name === '--hostile-seeds' && Number.isInteger(n)) hostileSeeds = n;
    else if (name === '--hostile-messages' && Number.isInteger(n) && n > 0) hostileMessages = n;
    else if (name === '--hostile-seed' && Number.isInteger(n)) hostileSeed = n >>> 0;
    else throw new Error(`unknown or out-of-range option ${arg}\n${USAGE}`);
  }
  return { messages, seed, faults, hostileSeeds, hostileMessages, hostileSeed };
}

/** The hostile wire for `count` seeds from `first`: 0 if every rule held, else 1 (the failing seeds printed). */
async function hostile(first: number, count: number, messages: number): Promise<number> {
  console.log(
    `hostile wire: ${count} seeds from ${first}, ${messages} messages per stream (6 streams), a relay adding hostile ` +
      `frames`,
  );
  let failed = 0;
  for (let i = 0; i < count; i++) {
    const seed = (first + i) >>> 0;
    const r = await runHostileWire({ seed, messages, timeoutMs: 600_000 });
    const p = r.plan;
    const c = r.counters;
    const sum = (k: string) => c.reduce((n, x) => n + (x[k] ?? 0), 0);
    const injected = Object.values(r.relay['injected'] as Record<string, number>).reduce((n, v) => n + v, 0);
    console.log(
      `  seed ${seed}: ${(p.rate * 100).toFixed(0)} % ` +
        `[${p.harmless.join(' ')}${p.disruptive.length ? ` | forging ${p.disruptive.join(' ')}` : ''}]: ${injected} ` +
        `hostile frames, ${r.delivered}/${r.expected} messages, ${r.failures.length} streams ended ` +
        `(by forged frames, or out of retries on a slow host), ` +
        `${sum('ackTimeouts')} ACK timeouts, ${sum('rnrNaksReceived')} RNR NAKs, ${(r.wallMs / 1000).toFixed(1)} s`,
    );
    if (r.problems.length > 0) {
      failed++;
      console.error(`FAILED (hostile wire, seed ${seed}):`);
      for (const problem of r.problems) console.error(`  ${problem}`);
      const chip = `${CHIP_ENV}=${emuChip(undefined).name}`;
      console.error(`replay: ${chip} npm run soak -- --hostile-seed ${seed} --hostile-messages ${messages}`);
    }
  }
  if (failed === 0)
    console.log(
      'ok: no wrong bytes, no message twice, no byte leaked, no memory touched by a crafted request; harmless kinds ' +
        'failed no queue pair',
    );
  return failed === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const { messages, seed, faults } = args;
  if (args.hostileSeed !== undefined) return hostile(args.hostileSeed, 1, args.hostileMessages);
  const chip = emuChip(undefined).name;
  console.log(`soak: ${chip}, seed ${seed}, ${messages} messages, faults per frame sent ${JSON.stringify(faults)}`);
  console.log(`      replay: ${CHIP_ENV}=${chip} npm run soak -- --seed ${seed} --messages ${messages}`);
  const r = runSoak({
    seed, messages, faults, progress: (line) => console.log(`  ${line}`),
    progressEvery: Math.max(10_000, Math.floor(messages / 20)),
  });
  const f = faultTotals(r);
  console.log(
    `done: ${r.messages} messages (${r.sends} sends between the NICs, ${r.reads} reads within them), ` +
      `${(r.bytes / 1e6).toFixed(1)} MB`,
  );
  console.log(
    `      ${(r.virtualNs / 1e9).toFixed(2)} s of NIC time in ${(r.wallMs / 1000).toFixed(1)} s ` +
      `(${Math.round(r.messages / (r.wallMs / 1000))} messages/s)`,
  );
  console.log(
    `      frames sent ${f['framesSent']}: dropped ${f['faultTxDropped']}, duplicated ${f['faultDuplicated']}, ` +
      `reordered ${f['faultReordered']}, corrupted ${f['faultCorrupted']} (ICRC drops ${f['dropBAD_ICRC']})`,
  );
  console.log(
    `      recovery: ${f['retransmitEvents']} go-back-N episodes, ${f['ackTimeouts']} ACK timeouts, ` +
      `${f['duplicateRequests']} duplicate requests answered`,
  );
  console.log(`      digest ${r.digest} (the same seed and options give the same digest)`);
  if (r.problems.length > 0) {
    console.error(`FAILED (seed ${seed}):`);
    for (const p of r.problems) console.error(`  ${p}`);
    console.error(`replay: npm run soak -- --seed ${seed} --messages ${messages}`);
    return 1;
  }
  console.log('ok: no message lost, duplicated, corrupted or out of order; every room consistent');
  return args.hostileSeeds > 0 ? hostile(seed, args.hostileSeeds, args.hostileMessages) : 0;
}

process.exitCode = await main();
