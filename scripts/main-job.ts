/**
 * `npm start`: the main job on a software NIC: bring it up, show what it reports, run
 * perftest's send_lat, send_bw and read_lat on it, and say where the capture and docs are.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Nic } from '../lib/index.ts';
import { emuChip } from '../drivers/emu/model/config.ts';
import { probeLines } from './cli/run-probe.ts';
import { parseCommandLine } from './cli/options.ts';
import type { PerfCommand } from './cli/commands.ts';
import { runPerf } from './cli/run-perf.ts';

const pcap = join(tmpdir(), `rig-bnxt-main-job-${process.pid}.pcap`);

async function main(): Promise<number> {
  // The default software NIC: a Thor2 (BCM57608) unless RIG_BNXT_CHIP names another chip.
  const chip = emuChip(undefined);
  const what = `a software NIC (${chip.name} model, ${chip.family})`;
  console.log(`rig-bnxt: bringing up ${what} over HWRM and the RoCE command queue`);
  const t0 = performance.now();
  const nic = Nic.open('emu');
  if (!nic.ok) {
    console.error(`cannot bring up the software NIC: ${nic.error}`);
    return 1;
  }
  for (const l of probeLines(nic.value.info)) console.log(`  ${l}`);
  console.log(`  bring-up took ${(performance.now() - t0).toFixed(1)} ms`);
  nic.value.close();
  for (const args of [
    ['perf', 'send_lat', '-n', '1000'], ['perf', 'send_bw', '-n', '1000'],
    ['perf', 'read_lat', '-n', '1000', '--pcap', pcap],
  ]) {
    console.log(`\n$ rig-bnxt ${args.join(' ')}`);
    const cmd = parseCommandLine(args);
    if (!cmd.ok) { console.error(cmd.error); return 1; }
    const code = await runPerf(cmd.value as PerfCommand);
    if (code !== 0) return code;
  }
  console.log(`\nEvery frame of the read_lat run is in ${pcap} (Wireshark decodes it as RoCEv2).`);
  console.log(
    'Docs: README.md (quick start, API, CLI, real NICs), docs/ (architecture, hardware, performance, failures).',
  );
  return 0;
}

main()
  .then((code) => process.exit(code),
  (e) => { console.error(`main job failed: ${(e as Error).message}`); process.exit(1); });
