// `--trace FILE` on every CLI command that opens a NIC (issue 11): the driver's command trace
// (firmware-hwrm/trace.ts records, one JSON line each) written while the command runs and
// complete when it exits. probe runs as its own process, so the file is read only after that
// process is gone: every line parses and every bring-up command (bnxt_en's and bnxt_re's
// names, bnxt_hsi.h / roce_hsi.h) is in it, each with its answer, and the teardown after it.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrace } from '../firmware-hwrm/trace.ts';
import { parseCommandLine } from '../scripts/cli/options.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = ['--import', './scripts/register-ts.mjs', 'scripts/cli.ts'];

function tempFile(t: Test, name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-cli-trace-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, name);
}

/** The bring-up and teardown commands every probe of a NIC sends, in the order they are first sent. */
const HWRM_BRINGUP = [
  'HWRM_VER_GET', 'HWRM_FUNC_RESET', 'HWRM_FUNC_QCAPS', 'HWRM_FUNC_DRV_RGTR', 'HWRM_FUNC_BACKING_STORE_QCAPS',
  'HWRM_FUNC_BACKING_STORE_CFG', 'HWRM_FUNC_QCFG', 'HWRM_PORT_PHY_QCFG', 'HWRM_RING_ALLOC', 'HWRM_STAT_CTX_ALLOC',
  'HWRM_VNIC_ALLOC', 'HWRM_VNIC_CFG', 'HWRM_CFA_L2_FILTER_ALLOC',
];
/** Context memory V2 (P7) in the place of V1 (P5): the chip the software NIC plays decides. */
const asV1 = (name: string) => name.replace(/^(HWRM_FUNC_BACKING_STORE_(QCAPS|CFG))_V2$/, '$1');
const ROCE_BRINGUP = ['QUERY_FUNC', 'INITIALIZE_FW', 'ADD_GID'];
const TEARDOWN = ['DELETE_GID', 'DEINITIALIZE_FW'];
const HWRM_TEARDOWN = ['HWRM_RING_FREE', 'HWRM_STAT_CTX_FREE', 'HWRM_FUNC_DRV_UNRGTR'];

t.test('rig-bnxt probe emu --trace FILE: a complete trace when the command exits', async (t) => {
  const file = tempFile(t, 'probe.jsonl');
  const r = spawnSync(process.execPath, [...cli, 'probe', 'emu', '--trace', file], {
    cwd: root, encoding: 'utf8', timeout: 120_000,
  });
  t.equal(r.status, 0, `probe exits 0 (${r.stderr})`);
  t.match(r.stdout, /chip:\s+BCM5\d{4}/, 'and prints what it probed');
  const text = readFileSync(file, 'utf8');
  t.ok(text.endsWith('\n'), 'the last record is a whole line');
  const records = parseTrace(text); // throws naming any line that is not a record
  t.equal(records.length, text.split('\n').filter((l) => l !== '').length, 'every line is a record');
  const hwrm = records.filter((r) => r.ch === 'hwrm' && r.dir === 'req').map((r) => asV1(r.name));
  const roce = records.filter((r) => r.ch === 'cmdq').map((r) => r.name);
  for (const n of HWRM_BRINGUP) t.ok(hwrm.includes(n), `${n} in the trace`);
  for (const n of ROCE_BRINGUP) t.ok(roce.includes(n), `${n} in the trace`);
  const firstSent = HWRM_BRINGUP.map((n) => hwrm.indexOf(n));
  t.same(firstSent, [...firstSent].sort((a, b) => a - b), 'in the order bring-up sends them');
  for (const n of TEARDOWN) t.ok(roce.includes(n), `${n}: the teardown is in it too`);
  for (const n of [...HWRM_TEARDOWN, 'HWRM_CFA_L2_FILTER_FREE', 'HWRM_VNIC_FREE'])
    t.ok(hwrm.includes(n), `${n}: the teardown is in it too`);
  t.equal(hwrm[hwrm.length - 1], 'HWRM_FUNC_DRV_UNRGTR', 'the last request is the one close sends last');
  t.equal(records.filter((r) => r.ch === 'hwrm' && r.dir === 'resp').length, hwrm.length, 'an answer for each');
  t.equal(records.filter((r) => r.ch === 'creq').length, roce.length, 'a CREQ answer for every RoCE command');
  t.ok(records.some((r) => r.ch === 'db' && r.name === 'NQ_ARM'), 'the CREQ doorbells');
  t.ok(records.every((r) => !/UNKNOWN/.test(r.name)), 'every record named');
});

t.test('--trace is an option of every command that opens a NIC, and needs a file name', async (t) => {
  for (const argv of [
    ['probe', 'emu', '--trace', 'f.jsonl'], ['perf', 'send_lat', '--trace', 'f.jsonl'],
    ['perf', 'read_bw', '--trace=f.jsonl'], ['pingpong', '--trace', 'f.jsonl'],
  ]) {
    const c = parseCommandLine(argv);
    t.ok(c.ok && 'trace' in c.value && c.value.trace === 'f.jsonl', `${argv.join(' ')}: trace f.jsonl`);
  }
  for (const argv of [['probe', 'emu', '--trace='], ['perf', 'send_lat', '--trace='], ['pingpong', '--trace=']]) {
    const c = parseCommandLine(argv);
    t.notOk(c.ok, `${argv.join(' ')} refused`);
    if (!c.ok) t.match(c.error, /--trace needs a file name/);
  }
  const listing = parseCommandLine(['probe', '--trace', 'f.jsonl']);
  t.notOk(listing.ok, 'probe without a device opens nothing to trace');
});

t.test('rig-bnxt perf send_lat --trace FILE: the run\'s doorbells and WQEs too', async (t) => {
  const file = tempFile(t, 'perf.jsonl');
  const r = spawnSync(process.execPath, [...cli, 'perf', 'send_lat', '-n', '5', '--trace', file], {
    cwd: root, encoding: 'utf8', timeout: 120_000,
  });
  t.equal(r.status, 0, `perf exits 0 (${r.stderr})`);
  const records = parseTrace(readFileSync(file, 'utf8'));
  t.ok(records.some((r) => r.ch === 'cmdq' && r.name === 'MODIFY_QP'), 'the queue pairs\' commands');
  t.ok(records.some((r) => r.ch === 'db' && r.name === 'SQ'), 'SQ doorbells');
  const sends = records.filter((r) => r.ch === 'wqe' && r.name === 'SEND');
  t.ok(sends.length >= 5, `the SEND WQEs the software NIC fetched (${sends.length})`);
  t.ok(sends.every((r) => r.fields['wqe_size'] === 3), 'each of one SGE: wqe_size 3');
});
