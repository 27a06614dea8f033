// The command trace of rig-bnxt's own driver (issue 11): Nic.open's trace option (or
// RIG_BNXT_TRACE) writes every HWRM request and response, RoCE command and CREQ answer as one
// JSON record a line, fields named as in bnxt_hsi.h / roce_hsi.h (firmware-hwrm/trace.ts). The
// MODIFY_QP records of a device without internal queue memory carry the read depths as slots:
// max_rd_atomic 17, max_dest_rd_atomic 34 for depth 16. A send and a read add the data path:
// a "db" record per doorbell (bnxt_hsi.h struct dbc_dbc) and, from the software NIC, a "wqe"
// record per WQE it fetched (roce_hsi.h sq_send_hdr / sq_rdma_hdr / rq_wqe_hdr), whose
// wqe_size is 3 for one SGE (bnxt_qplib_required_slots: 32-byte header + one 16-byte sq_sge).
// Expected values come from the headers' rules, not from the driver's encoders.
import t, { type Test } from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Nic, Qp, Region } from '../lib/index.ts';
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
  // Context memory V1 (P5) or V2 (P7, FUNC_QCAPS flags_ext BS_V2_SUPPORTED).
  const cfg = hwrmReq.includes('HWRM_FUNC_BACKING_STORE_CFG') || hwrmReq.includes('HWRM_FUNC_BACKING_STORE_CFG_V2');
  t.ok(cfg && hwrmReq.includes('HWRM_RING_ALLOC'));
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

// roce_hsi.h / bnxt_hsi.h numbers the expectations use (by hand).
const DBC_TYPE = { SQ: 0x0, RQ: 0x1, NQ_ARM: 0xb } as const;
const WQE_TYPE = { SEND: 0x00, READ_WQE: 0x06, RCV: 0x80 } as const;
const SIGNAL_COMP = 0x01;

interface DataRun {
  readonly records: TraceRecord[];
  readonly a: number;
  readonly b: number;
  readonly keyA: number;
  readonly keyB: number;
}

/** One SEND of 4096 bytes a -> b and one READ of 1000 bytes by a from b, traced; the trace read after close. */
function dataRun(t: Test, thread: boolean): DataRun {
  const dir = mkdtempSync(join(tmpdir(), 'rig-bnxt-trace-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'trace.jsonl');
  const nic = Nic.open('emu', thread ? { thread: true, trace: file } : { stepped: true, trace: file });
  if (!nic.ok) throw new Error(nic.error);
  let ids: Omit<DataRun, 'records'>;
  try {
    const a = Qp.make(nic.value);
    const b = Qp.make(nic.value);
    const ra = Region.alloc(nic.value, 65536);
    const rb = Region.alloc(nic.value, 65536);
    if (!a.ok || !b.ok || !ra.ok || !rb.ok) throw new Error('setup');
    if (!a.value.connect(b.value.endpoint).ok || !b.value.connect(a.value.endpoint).ok) throw new Error('connect');
    b.value.receive(rb.value, 0, 4096);
    a.value.send(ra.value, 0, 4096);
    t.equal(a.value.wait('send', 5e6)?.ok, true, 'the send completed');
    t.equal(b.value.wait('receive', 5e6)?.ok, true, 'the receive completed');
    a.value.read(rb.value, 8192, ra.value, 8192, 1000);
    t.equal(a.value.wait('send', 5e6)?.ok, true, 'the read completed');
    ids = { a: a.value.endpoint.qp, b: b.value.endpoint.qp, keyA: ra.value.key, keyB: rb.value.key };
  } finally {
    nic.value.close();
  }
  return { records: parseTrace(readFileSync(file, 'utf8')), ...ids };
}

for (const thread of [false, true]) {
  const how = thread ? 'model in a worker thread' : 'stepped model';
  t.test(`a send/read run's trace decodes every command, doorbell and fetched WQE (${how})`, async (t) => {
    const run = dataRun(t, thread);
    const { records } = run;
    for (const r of records) {
      if (/UNKNOWN/.test(r.name)) t.fail(`a record without a name: ${JSON.stringify(r)}`);
      for (const [k, v] of Object.entries(r.fields)) {
        if (typeof v !== 'number' && !(typeof v === 'string' && /^0x[0-9a-f]+$/.test(v))) {
          t.fail(`${r.ch} ${r.name}.${k} = ${JSON.stringify(v)}: neither a number nor 0x-hex`);
        }
      }
    }
    const cmdq = records.filter((r) => r.ch === 'cmdq').map((r) => r.name);
    for (const n of ['CREATE_CQ', 'CREATE_QP', 'MODIFY_QP', 'REGISTER_MR', 'DESTROY_QP', 'DEINITIALIZE_FW']) {
      t.ok(cmdq.includes(n), `${n} traced`);
    }
    t.equal(records.filter((r) => r.ch === 'creq').length, cmdq.length, 'a CREQ answer for every RoCE command');

    const db = records.filter((r) => r.ch === 'db');
    t.ok(db.every((r) => r.dir === 'req' && r.fields['valid'] === 1 && r.fields['path'] === 0), 'RoCE path, valid');
    const sq = db.filter((r) => r.fields['type'] === DBC_TYPE.SQ && r.fields['xid'] === run.a);
    // The producer index after each of two equal WQEs: in WQEs (static mode: 1, 2) or in 16-byte
    // slots (variable mode: 3, 6), so the second is twice the first (bnxt_qplib_ring_prod_db).
    const index = sq.map((r) => r.fields['index'] as number);
    t.same(sq.map((r) => [r.name, r.fields['epoch']]), [['SQ', 0], ['SQ', 0]],
      'the sender\'s two SQ doorbells, epoch 0 before the first wrap');
    t.ok(index[0]! > 0 && index[1] === 2 * index[0]!, `index: the producer after each WQE (${index.join(', ')})`);
    const rq = db.filter((r) => r.fields['type'] === DBC_TYPE.RQ && r.fields['xid'] === run.b);
    t.same(rq.map((r) => r.fields['index']), [1], 'the receiver\'s RQ doorbell: index 1');
    t.ok(db.some((r) => r.fields['type'] === DBC_TYPE.NQ_ARM && r.name === 'NQ_ARM'), 'the CREQ\'s NQ_ARM doorbells');

    const wqe = records.filter((r) => r.ch === 'wqe');
    const send = wqe.filter((r) => r.qp === run.a && r.fields['wqe_type'] === WQE_TYPE.SEND);
    t.equal(send.length, 1, 'the SEND fetched once');
    t.equal(send[0]?.name, 'SEND');
    t.equal(send[0]?.fields['wqe_size'], 3, 'wqe_size 3: header + one SGE');
    t.equal(send[0]?.fields['length'], 4096);
    t.equal((send[0]?.fields['flags'] as number) & SIGNAL_COMP, SIGNAL_COMP, 'SIGNAL_COMP');
    t.equal(send[0]?.fields['sge0.l_key'], run.keyA, 'its SGE names the sender\'s region');
    t.equal(send[0]?.fields['sge0.size'], 4096);
    t.notOk('sge1.size' in (send[0]?.fields ?? {}), 'one SGE only: wqe_size says so');
    const read = wqe.filter((r) => r.qp === run.a && r.fields['wqe_type'] === WQE_TYPE.READ_WQE);
    t.equal(read.length, 1, 'the READ fetched once');
    t.equal(read[0]?.name, 'READ_WQE');
    t.equal(read[0]?.fields['wqe_size'], 3);
    t.equal(read[0]?.fields['remote_key'], run.keyB, 'sq_rdma_hdr: remote_key of the responder\'s region');
    t.equal(read[0]?.fields['sge0.size'], 1000);
    t.match(read[0]?.fields['remote_va'], /^0x[0-9a-f]+$/, 'remote_va (64-bit) as a hex string');
    const recv = wqe.filter((r) => r.qp === run.b);
    t.same(recv.map((r) => [r.name, r.fields['wqe_type'], r.fields['wqe_size'], r.fields['sge0.size']]),
      [['RCV', WQE_TYPE.RCV, 3, 4096]], 'the receive WQE fetched once: rq_wqe_hdr, wqe_size 3');
    const sqDoorbell = records.indexOf(sq[0]!);
    t.ok(records.indexOf(send[0]!) > sqDoorbell || thread, 'the SEND fetched after its doorbell');
  });
}
