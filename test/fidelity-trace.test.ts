// The command trace of rig-bnxt's own driver (issue 11): Nic.open's trace option (or
// RIG_BNXT_TRACE) writes every HWRM request and response, RoCE command and CREQ answer as one
// JSON record a line, fields named as in bnxt_hsi.h / roce_hsi.h (firmware-hwrm/trace.ts). The
// MODIFY_QP records of a device without internal queue memory carry the read depths as slots:
// max_rd_atomic 17, max_dest_rd_atomic 34 for depth 16.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Nic, Qp } from '../lib/index.ts';
import { TRACE_ENV } from '../lib/nic.ts';
import { parseTrace, type TraceRecord } from '../firmware-hwrm/trace.ts';

function tracedRun(t: Test, how: 'option' | 'env'): TraceRecord[] {
  const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-trace-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'trace.jsonl');
  const before = process.env[TRACE_ENV];
  if (how === 'env') process.env[TRACE_ENV] = file;
  const nic = Nic.open('emu', how === 'option' ? { stepped: true, trace: file } : { stepped: true });
  if (how === 'env') {
    if (before === undefined) delete process.env[TRACE_ENV];
    else process.env[TRACE_ENV] = before;
  }
  if (!nic.ok) throw new Error(nic.error);
  const a = Qp.make(nic.value);
  const b = Qp.make(nic.value);
  if (!a.ok || !b.ok) throw new Error('Qp.make');
  if (!a.value.connect(b.value.endpoint).ok || !b.value.connect(a.value.endpoint).ok) throw new Error('connect');
  nic.value.close();
  return parseTrace(readFileSync(file, 'utf8'));
}

t.test('the trace holds every command and answer of a bring-up, two queue pairs and a close, decoded', async (t) => {
  const records = tracedRun(t, 'option');
  t.ok(records.length > 40, `${records.length} records`);
  const names = (ch: string, dir: string) => records.filter((r) => r.ch === ch && r.dir === dir).map((r) => r.name);
  const hwrmReq = names('hwrm', 'req');
  t.equal(hwrmReq[0], 'HWRM_VER_GET', 'HWRM_VER_GET first');
  t.equal(names('hwrm', 'resp').length, hwrmReq.length, 'an HWRM response for every request');
  t.ok(hwrmReq.includes('HWRM_FUNC_BACKING_STORE_CFG') && hwrmReq.includes('HWRM_RING_ALLOC'));
  const cmdq = names('cmdq', 'req');
  t.equal(names('creq', 'resp').length, cmdq.length, 'a CREQ answer for every RoCE command');
  for (const n of ['QUERY_FUNC', 'INITIALIZE_FW', 'CREATE_QP', 'MODIFY_QP', 'DESTROY_QP', 'DEINITIALIZE_FW']) {
    t.ok(cmdq.includes(n), `${n} traced`);
  }
  t.ok(records.every((r, i) => i === 0 || r.t >= records[i - 1]!.t), 'times in order');
  const query = records.find((r) => r.ch === 'creq' && r.name === 'QUERY_FUNC');
  t.ok(query?.side && typeof query.side['max_qp_rd_atom'] === 'number', 'QUERY_FUNC\'s answer carries its side buffer');
  const modify = records.filter((r) => r.ch === 'cmdq' && r.name === 'MODIFY_QP');
  const rtr = modify.filter((r) => r.fields['new_state'] === 2);
  const rts = modify.filter((r) => r.fields['new_state'] === 3);
  t.same(rtr.map((r) => r.fields['max_dest_rd_atomic']), [34, 34], 'INIT -> RTR: max_dest_rd_atomic 34 (IRD 16)');
  t.same(rts.map((r) => r.fields['max_rd_atomic']), [17, 17], 'RTR -> RTS: max_rd_atomic 17 (ORD 16)');
});

t.test('RIG_BNXT_TRACE names the file of a NIC opened without a trace option', async (t) => {
  const records = tracedRun(t, 'env');
  t.ok(records.some((r) => r.ch === 'cmdq' && r.name === 'MODIFY_QP'), 'the same trace');
});

t.test('a trace that cannot be written is an open error naming it', async (t) => {
  const r = Nic.open('emu', { stepped: true, trace: '/nonexistent-dir/trace.jsonl' });
  t.notOk(r.ok);
  if (!r.ok) t.match(r.error, /cannot write the trace \/nonexistent-dir\/trace\.jsonl/);
});
