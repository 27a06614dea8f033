/**
 * `npm run soak [-- --messages N] [-- --seed S] [-- --drop P --duplicate P --reorder P --corrupt P]`:
 * the full soak of issue 5 (test/soak-run.ts): by default 10^6 messages of mixed sizes, sends
 * between two software NICs and reads within each, under 1 % drop, 1 % duplicate, 1 % reorder
 * and 0.1 % corruption of every frame sent. Prints the seed first (a run is replayed by its
 * seed), progress, then the figures; exits 1 if any message was lost, duplicated, corrupted
 * or out of order, or a room was inconsistent.
 */
import { runSoak, faultTotals, DEFAULT_FAULTS } from '../test/soak-run.ts';

const USAGE = 'usage: npm run soak -- [--messages N] [--seed S] [--drop P] [--duplicate P] [--reorder P] [--corrupt P]';

function parseArgs(argv: readonly string[]): { messages: number; seed: number; faults: Record<string, number> } {
  let messages = 1_000_000;
  let seed = (Date.now() ^ (process.pid << 16)) >>> 0;
  const faults: Record<string, number> = { ...DEFAULT_FAULTS } as Record<string, number>;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = inline ?? argv[++i];
    const n = Number(value);
    if (value === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${name} needs a number\n${USAGE}`);
    if (name === '--messages' && Number.isInteger(n) && n > 0) messages = n;
    else if (name === '--seed' && Number.isInteger(n)) seed = n >>> 0;
    else if (['--drop', '--duplicate', '--reorder', '--corrupt'].includes(name) && n <= 1) faults[name.slice(2)] = n;
    else throw new Error(`unknown or out-of-range option ${arg}\n${USAGE}`);
  }
  return { messages, seed, faults };
}

function main(): number {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const { messages, seed, faults } = args;
  console.log(`soak: seed ${seed}, ${messages} messages, faults per frame sent ${JSON.stringify(faults)}`);
  console.log(`      replay: npm run soak -- --seed ${seed} --messages ${messages}`);
  const r = runSoak({ seed, messages, faults, progress: (line) => console.log(`  ${line}`), progressEvery: Math.max(10_000, Math.floor(messages / 20)) });
  const f = faultTotals(r);
  console.log(`done: ${r.messages} messages (${r.sends} sends between the NICs, ${r.reads} reads within them), ${(r.bytes / 1e6).toFixed(1)} MB`);
  console.log(`      ${(r.virtualNs / 1e9).toFixed(2)} s of NIC time in ${(r.wallMs / 1000).toFixed(1)} s (${Math.round(r.messages / (r.wallMs / 1000))} messages/s)`);
  console.log(`      frames sent ${f['framesSent']}: dropped ${f['faultTxDropped']}, duplicated ${f['faultDuplicated']}, reordered ${f['faultReordered']}, corrupted ${f['faultCorrupted']} (ICRC drops ${f['dropBAD_ICRC']})`);
  console.log(`      recovery: ${f['retransmitEvents']} go-back-N episodes, ${f['ackTimeouts']} ACK timeouts, ${f['duplicateRequests']} duplicate requests answered`);
  console.log(`      digest ${r.digest} (the same seed and options give the same digest)`);
  if (r.problems.length > 0) {
    console.error(`FAILED (seed ${seed}):`);
    for (const p of r.problems) console.error(`  ${p}`);
    console.error(`replay: npm run soak -- --seed ${seed} --messages ${messages}`);
    return 1;
  }
  console.log('ok: no message lost, duplicated, corrupted or out of order; every room consistent');
  return 0;
}

process.exitCode = main();
