// The command trace (firmware-hwrm/trace.ts, drivers/trace-file.ts): records decoded with the
// public layouts, field names as the headers spell them. Input bytes are built by hand from
// the header offsets (roce_hsi.h struct cmdq_create_qp, creq_create_qp_resp, creq_qp_event,
// creq_qp_error_notification; bnxt_hsi.h struct input, hwrm_err_output), never by our encoders.
import t from 'tap';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cmdqEvent, creqEvent, dbEvent, hwrmEvent, parseTrace, rqWqeEvent, sqWqeEvent,
} from '../firmware-hwrm/trace.ts';
import { TraceFile } from '../drivers/trace-file.ts';
import { Nic, Qp, Region } from '../lib/index.ts';

function bytes(size: number, put: (dv: DataView) => void): Uint8Array {
  const b = new Uint8Array(size);
  put(new DataView(b.buffer));
  return b;
}

t.test('a CREATE_QP command: every cmdq_create_qp field by its roce_hsi.h name, 64-bit as hex', async (t) => {
  const cmd = bytes(104, (v) => {
    v.setUint8(0, 0x01); // opcode CREATE_QP
    v.setUint8(1, 104 / 16 + 1); // cmd_size (units; the kernel rounds up)
    v.setUint16(4, 0x8007, true); // cookie
    v.setBigUint64(16, 0x1122334455667788n, true); // qp_handle
    v.setUint32(24, 0x0000000e, true); // qp_flags: FORCE_COMPLETION | RESERVED_LKEY_ENABLE | FR_PMR_ENABLED
    v.setUint8(28, 0x07); // type GSI
    v.setUint8(29, 0x11); // sq_pg_size 1 (8K) << 4 | sq_lvl 1
    v.setUint32(36, 256, true); // sq_size
    v.setUint16(44, 0x0002, true); // sq_sge 2
    v.setUint32(48, 3, true); // scq_cid
    v.setBigUint64(64, 0xfe123000n, true); // sq_pbl
  });
  const e = cmdqEvent(cmd);
  t.same([e.ch, e.dir, e.name], ['cmdq', 'req', 'CREATE_QP']);
  t.equal(e.fields.opcode, 1);
  t.equal(e.fields.cookie, 0x8007);
  t.equal(e.fields.qp_handle, '0x1122334455667788');
  t.equal(e.fields.qp_flags, 0xe);
  t.equal(e.fields.type, 7);
  t.equal(e.fields.sq_lvl, 1, 'the low nibble of sq_pg_size_sq_lvl');
  t.equal(e.fields.sq_pg_size, 1, 'the high nibble');
  t.equal(e.fields.sq_size, 256);
  t.equal(e.fields.sq_sge, 2);
  t.equal(e.fields.scq_cid, 3);
  t.equal(e.fields.sq_pbl, '0xfe123000');
  t.notOk('tlv' in e);
  t.equal(cmdqEvent(cmd, true).tlv, true, 'a TLV-encapsulated command says so');
  const unknown = cmdqEvent(bytes(16, (v) => { v.setUint8(0, 0x84); v.setUint8(1, 1); }));
  t.equal(unknown.name, 'SET_FUNC_RESOURCES', 'a command without a layout: named, with its cmdq_base fields');
  t.same(Object.keys(unknown.fields), ['opcode', 'cmd_size', 'flags', 'cookie', 'resp_size', 'resp_addr', 'reserved8']);
});

t.test('CREQ entries: an answer by its command\'s response layout, a refusal by creq_qp_event, notifications by theirs',
  async (t) => {
  const answer = bytes(16, (v) => {
    v.setUint8(0, 0x38); // type QP_EVENT
    v.setUint16(2, 0x8007, true); // cookie
    v.setUint32(4, 1, true); // xid: QP 1
    v.setUint8(8, 1); // v
    v.setUint8(9, 0x01); // event = CREATE_QP
  });
  const a = creqEvent(answer);
  t.same([a.ch, a.dir, a.name], ['creq', 'resp', 'CREATE_QP']);
  t.same(a.fields, { type: 0x38, status: 0, cookie: 0x8007, v: 1, event: 1, xid: 1, optimized_transmit_enabled: 0 });
  const refused = bytes(16, (v) => { v.setUint8(0, 0x38); v.setUint8(1, 4); v.setUint8(9, 0x01); });
  const r = creqEvent(refused, undefined, 'not modelled');
  t.same(r.fields, { type: 0x38, status: 4, cookie: 0, v: 0, event: 1, xid: 0 }, 'creq_qp_event fields only');
  t.equal(r.why, 'not modelled');
  const note = bytes(16, (v) => {
    v.setUint8(0, 0x38); v.setUint8(3, 0x12); v.setUint32(4, 9, true);
    v.setUint8(9, 0xc0); v.setUint8(11, 0x2); v.setUint16(12, 5, true);
  });
  const n = creqEvent(note);
  t.equal(n.name, 'QP_ERROR_NOTIFICATION');
  const f = n.fields;
  t.same([f.req_err_state_reason, f.xid, f.res_err_state_reason, f.sq_cons_idx], [0x12, 9, 2, 5]);
});

t.test('HWRM: a request by its input layout, an error answer by output', async (t) => {
  const req = bytes(24, (v) => {
    v.setUint16(0, 0x0000, true); // req_type VER_GET
    v.setUint16(2, 0xffff, true); // cmpl_ring
    v.setUint16(4, 9, true); // seq_id
    v.setBigUint64(8, 0x10_2000n, true); // resp_addr
    v.setUint8(16, 1); v.setUint8(17, 10); v.setUint8(18, 3); // hwrm_intf_maj/min/upd
  });
  const e = hwrmEvent('req', 0x0000, req);
  t.same([e.ch, e.name, e.fields.seq_id, e.fields.resp_addr, e.fields.hwrm_intf_min],
    ['hwrm', 'HWRM_VER_GET', 9, '0x102000', 10]);
  const refused = bytes(16, (v) => {
    v.setUint16(0, 0xffff, true); v.setUint16(2, 0x0192, true); v.setUint16(4, 3, true); v.setUint16(6, 16, true);
  });
  const r = hwrmEvent('resp', 0x0192, refused);
  t.same(r.fields, { error_code: 0xffff, req_type: 0x0192, seq_id: 3, resp_len: 16 });
});

t.test('a trace file: one {t,ch,dir,name,fields} line per record, read back; a broken line is named', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'trace-'));
  const path = join(dir, 'trace.jsonl');
  const f = new TraceFile(path);
  f.write(cmdqEvent(bytes(16, (v) => v.setUint8(0, 0x83))));
  f.write(creqEvent(bytes(16, (v) => { v.setUint8(0, 0x38); v.setUint8(9, 0x83); })));
  f.close();
  t.equal(f.lines, 2);
  const text = readFileSync(path, 'utf8');
  t.match(text.split('\n')[0], /^\{"t":\d+,"ch":"cmdq","dir":"req","name":"QUERY_FUNC","fields":\{/);
  const recs = parseTrace(text);
  t.same(recs.map((r) => [r.ch, r.dir, r.name]), [['cmdq', 'req', 'QUERY_FUNC'], ['creq', 'resp', 'QUERY_FUNC']]);
  t.ok(recs[1]!.t >= recs[0]!.t);
  writeFileSync(path, text + '{"t":1}\n');
  t.throws(() => parseTrace(readFileSync(path, 'utf8')), /trace line 3 is not a \{t,ch,dir,name,fields\} record/);
  t.throws(() => new TraceFile(join(dir, 'no', 'such', 'dir.jsonl')), /cannot write the trace .*no\/such\/dir\.jsonl/);
});

t.test('a software NIC with a device trace records what the driver sent it, command by command', async (t) => {
  const path = join(mkdtempSync(join(tmpdir(), 'trace-')), 'device.jsonl');
  const nic = Nic.open('emu', { stepped: true, deviceTrace: path });
  if (!nic.ok) throw new Error(nic.error);
  const a = Qp.make(nic.value);
  const b = Qp.make(nic.value);
  if (!a.ok || !b.ok) throw new Error('Qp.make');
  t.ok(a.value.connect(b.value.endpoint).ok);
  const r = Region.alloc(nic.value, 4096);
  t.ok(r.ok);
  if (!r.ok) return;
  t.ok(b.value.connect(a.value.endpoint).ok);
  b.value.receive(r.value, 0, 64);
  a.value.send(r.value, 2048, 64);
  t.equal(a.value.wait('send', 5e6)?.ok, true, 'a send completes');
  nic.value.close();
  const recs = parseTrace(readFileSync(path, 'utf8'));
  // The device's own trace holds the WQEs it fetched too (and no doorbell: the driver traces those).
  t.same(recs.filter((x) => x.ch === 'wqe').map((x) => [x.name, x.fields['wqe_size']]), [['SEND', 3], ['RCV', 3]],
    'the SEND (fetched after its doorbell), then the receive WQE (fetched when the SEND arrived)');
  t.notOk(recs.some((x) => x.ch === 'db'), 'no doorbell record in the device\'s trace');
  const names = (ch: string) => recs.filter((x) => x.ch === ch && x.dir === (ch === 'creq' ? 'resp' : 'req'))
    .map((x) => x.name);
  t.same(names('hwrm').slice(0, 2), ['HWRM_VER_GET', 'HWRM_FUNC_RESET'], 'the bring-up starts as the driver sends it');
  t.ok(['INITIALIZE_FW', 'CREATE_QP', 'MODIFY_QP'].every((c) => names('cmdq').includes(c)));
  t.same(names('creq').filter((n) => n !== 'QP_ERROR_NOTIFICATION'), names('cmdq'),
    'every command has its answer, in order');
  const hwrmResp = recs.filter((x) => x.ch === 'hwrm' && x.dir === 'resp').length;
  t.equal(hwrmResp, names('hwrm').length, 'every HWRM request has its response');
  const qf = recs.find((x) => x.ch === 'creq' && x.name === 'QUERY_FUNC');
  t.equal(typeof qf?.side?.max_qp, 'number', 'QUERY_FUNC\'s side buffer is decoded');
});

t.test('a doorbell: every dbc_dbc field by its bnxt_hsi.h name, named by DBC_DBC_TYPE', async (t) => {
  // SQ doorbell of QP 0x45, index 3, epoch 1: lo = 3 | 1 << 24; hi = xid 0x45 | valid (bit 26) | type SQ (0) << 28.
  const sq = dbEvent(0x0100_0003, 0x0400_0045);
  t.same([sq.ch, sq.dir, sq.name], ['db', 'req', 'SQ']);
  t.same(sq.fields, { index: 3, epoch: 1, toggle: 0, xid: 0x45, path: 0, valid: 1, debug_trace: 0, type: 0 });
  // NQ_ARM (0xb) of ring 2, index 0x1ff: hi = 0xb << 28 | valid | 2, as an unsigned word or a signed int.
  const arm = dbEvent(0x1ff, (0xb << 28) | (1 << 26) | 2);
  t.same([arm.name, arm.fields.type, arm.fields.xid, arm.fields.index], ['NQ_ARM', 0xb, 2, 0x1ff]);
});

t.test('fetched WQEs: sq_send_hdr / sq_rdma_hdr by wqe_type, rq_wqe_hdr, SGEs as wqe_size counts them', async (t) => {
  const send = bytes(128, (v) => {
    v.setUint8(0, 0x00); // wqe_type SEND
    v.setUint8(1, 0x01); // flags SIGNAL_COMP
    v.setUint8(2, 3); // wqe_size: 32-byte header + one 16-byte SGE
    v.setUint32(8, 4096, true); // length
    v.setBigUint64(32, 0x1_2345_6000n, true); // sge 0 va_or_pa
    v.setUint32(40, 0x0102, true); // l_key
    v.setUint32(44, 4096, true); // size
    v.setUint32(60, 0xdead, true); // a second SGE's size, beyond wqe_size: not a field
  });
  const e = sqWqeEvent(0x45, send);
  t.same([e.ch, e.dir, e.name, e.qp], ['wqe', 'req', 'SEND', 0x45]);
  t.same([e.fields.wqe_type, e.fields.flags, e.fields.wqe_size, e.fields.length], [0, 1, 3, 4096]);
  t.same([e.fields['sge0.va_or_pa'], e.fields['sge0.l_key'], e.fields['sge0.size']], ['0x123456000', 0x102, 4096]);
  t.notOk('sge1.size' in e.fields, 'only the SGEs wqe_size covers');
  const read = sqWqeEvent(7, bytes(128, (v) => {
    v.setUint8(0, 0x06); // READ_WQE
    v.setUint8(2, 3);
    v.setBigUint64(16, 0xffff_8000_0000_1000n, true); // remote_va: a full 64-bit address
    v.setUint32(24, 0x0203, true); // remote_key
  }));
  t.same([read.name, read.fields.remote_va, read.fields.remote_key], ['READ_WQE', '0xffff800000001000', 0x203]);
  t.notOk('q_key' in read.fields, 'sq_rdma_hdr, not sq_send_hdr');
  const inline = sqWqeEvent(7, bytes(128, (v) => { v.setUint8(0, 0x00); v.setUint8(1, 0x10); v.setUint8(2, 4); }));
  t.notOk('sge0.size' in inline.fields, 'an INLINE WQE carries data, not SGEs');
  const recv = rqWqeEvent(9, bytes(128, (v) => {
    v.setUint8(0, 0x80); // RCV
    v.setUint8(2, 3);
    v.setUint32(8, 0x00005, true); // wr_id (20 bits)
    v.setUint32(44, 2048, true); // sge 0 size
  }));
  t.same([recv.name, recv.qp, recv.fields.wqe_type, recv.fields.wqe_size, recv.fields.wr_id, recv.fields['sge0.size']],
    ['RCV', 9, 0x80, 3, 5, 2048]);
});

t.test('a trace whose write fails stops with a warning naming the file and what it holds, never a throw', async (t) => {
  if (!existsSync('/dev/full')) return void t.comment('no /dev/full here: nothing to write into that fails');
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  t.teardown(() => { process.off('warning', onWarning); });
  const f = new TraceFile('/dev/full'); // every write: ENOSPC
  const e = dbEvent(0x1, 0x0400_0045);
  t.doesNotThrow(() => { f.write(e); f.write(e); }, 'the driver\'s call goes on');
  t.equal(f.lines, 0);
  t.match(f.error, /trace \/dev\/full: write: .*ENOSPC/, 'the error is kept');
  await new Promise((r) => setImmediate(r));
  t.equal(warnings.length, 1, 'one warning, not one per record');
  t.match(warnings[0]?.message, /the trace stops after 0 records/);
  f.close();
});
