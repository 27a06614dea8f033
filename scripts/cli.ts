#!/usr/bin/env node
/**
 * rig-bnxt: probe a NIC, measure it as perftest does, or pair with ibv_rc_pingpong.
 * Bad options and unreachable peers end with one line on stderr and a non-zero exit.
 */
import { parseCommandLine } from './cli/options.ts';
import { runPerf } from './cli/run-perf.ts';
import { runPingpong } from './cli/run-pingpong.ts';
import { runProbe } from './cli/run-probe.ts';
import { runServe } from './cli/run-serve.ts';
import { versionLine } from './cli/version.ts';

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'serve') return runServe(argv.slice(1)); // vfio-user server (scripts/cli/run-serve.ts)
  const parsed = parseCommandLine(argv);
  if (!parsed.ok) {
    console.error(parsed.error);
    return 2;
  }
  const cmd = parsed.value;
  switch (cmd.command) {
    case 'help': console.log(cmd.text); return 0;
    case 'version': console.log(versionLine()); return 0;
    case 'probe': return runProbe(cmd);
    case 'perf': return runPerf(cmd);
    case 'pingpong': return runPingpong(cmd);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    // Nothing should reach here; if it does, say what without a stack unless asked.
    console.error(`rig-bnxt: ${(e as Error)?.message ?? String(e)}`);
    if (process.env.RIG_BNXT_DEBUG) console.error(e);
    process.exit(1);
  },
);
