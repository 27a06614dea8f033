// Issue 11 item 1: memory regions as Linux bnxt_re makes them. With QUERY_FUNC's
// MR_REGISTER_ALLOC (dev_cap_flags 0x20) one REGISTER_MR with ALLOC_MR and the PD id in the
// key field; without it ALLOCATE_MRW (type MR) first, then REGISTER_MR with that key
// (qplib_sp.c bnxt_qplib_reg_mr, qplib_res.h _is_alloc_mr_unified). Teardown is DEALLOCATE_KEY
// (ib_verbs.c bnxt_re_dereg_mr -> bnxt_qplib_free_mrw). Bytes at roce_hsi.h offsets:
//   cmdq_allocate_mrw: 0 opcode 0x0d, 24 mrw_flags (bits 0-3, MR = 0), 28 pd_id
//   cmdq_register_mr:  0 opcode 0x0f, 2 flags (ALLOC_MR 0x1), 20 key
//   cmdq_deallocate_key: 0 opcode 0x0e, 16 mrw_flags, 20 key
// And the software NIC's rules: the older firmware refuses REGISTER_MR with ALLOC_MR, and
// DEREGISTER_MR alone (the old teardown) leaves the key allocated.
import t from 'tap';
import { Nic, Region } from '../lib/index.ts';
import { nicInternals } from '../lib/nic.ts';
import { CmdqDeregisterMr } from '../firmware-hwrm/roce/index.ts';
import { captureCmdq } from './helpers/cmdq-capture.ts';
import { controls } from './helpers/qp-control.ts';

const ALLOCATE_MRW = 0x0d, DEALLOCATE_KEY = 0x0e, REGISTER_MR = 0x0f, DEREGISTER_MR = 0x10, DEINITIALIZE_FW = 0x81;

function u16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}
function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

function open(firmware: string): Nic {
  const nic = Nic.open('emu', { stepped: true, firmware });
  if (!nic.ok) throw new Error(nic.error);
  return nic.value;
}

t.test('current firmware: one REGISTER_MR with ALLOC_MR, the PD in the key field; DEALLOCATE_KEY', async (t) => {
  const nic = open('current');
  t.teardown(() => nic.close());
  const pd = nicInternals(nic).roce.pdId;
  const capture = captureCmdq();
  const r = Region.alloc(nic, 8192);
  const made = capture.sent.map((c) => c.opcode);
  if (!r.ok) return void t.fail(r.error);
  t.same(made, [REGISTER_MR], 'no ALLOCATE_MRW');
  const reg = capture.of(REGISTER_MR)[0]!;
  t.equal(u16(reg, 2) & 1, 1, 'REGISTER_MR flags: ALLOC_MR');
  t.equal(u32(reg, 20), pd, 'key field: the PD id');
  capture.sent.length = 0;
  t.ok(r.value.deregister().ok);
  capture.restore();
  t.same(capture.sent.map((c) => c.opcode), [DEALLOCATE_KEY], 'teardown: DEALLOCATE_KEY alone, as bnxt_re_dereg_mr');
  const d = capture.of(DEALLOCATE_KEY)[0]!;
  t.equal(d[16]! & 0xf, 0, 'mrw_flags: MR');
  t.equal(u32(d, 20), r.value.key, 'the region\'s key');
});

t.test('p5-legacy firmware: ALLOCATE_MRW (MR, the PD), REGISTER_MR with that key and no ALLOC_MR', async (t) => {
  const nic = open('p5-legacy');
  t.teardown(() => nic.close());
  const pd = nicInternals(nic).roce.pdId;
  const capture = captureCmdq();
  const r = Region.alloc(nic, 8192);
  capture.restore();
  if (!r.ok) return void t.fail(r.error);
  t.same(capture.sent.map((c) => c.opcode), [ALLOCATE_MRW, REGISTER_MR]);
  const a = capture.of(ALLOCATE_MRW)[0]!;
  t.equal(a[24]! & 0xf, 0, 'ALLOCATE_MRW mrw_flags: MR');
  t.equal(u32(a, 28), pd, 'pd_id');
  const reg = capture.of(REGISTER_MR)[0]!;
  t.equal(u16(reg, 2) & 1, 0, 'REGISTER_MR without ALLOC_MR');
  t.equal(u32(reg, 20), r.value.key, 'key: the one ALLOCATE_MRW gave');
  t.ok(r.value.deregister().ok, 'deregistered');
});

t.test('p5-legacy firmware refuses the unified REGISTER_MR the driver sent before the fix', async (t) => {
  const nic = open('p5-legacy');
  t.teardown(() => nic.close());
  const rcfw = nicInternals(nic).roce.rcfw;
  const send = rcfw.send.bind(rcfw);
  // The old driver: ALLOC_MR whatever QUERY_FUNC said, no ALLOCATE_MRW.
  rcfw.send = ((cmd, body, names) => {
    const pd = nicInternals(nic).roce.pdId;
    if (cmd.opcode === ALLOCATE_MRW) return { ok: true, value: { xid: pd, entry: new Uint8Array(16) } };
    if (cmd.opcode === REGISTER_MR) (body as Record<string, unknown>)['flags'] = 1;
    return send(cmd, body, names);
  }) as typeof rcfw.send;
  const r = Region.alloc(nic, 8192);
  rcfw.send = send;
  t.notOk(r.ok, 'Region.alloc fails');
  if (!r.ok) t.match(r.error, /REGISTER_MR refused by the firmware: INVALID_PARAMETER/);
});

t.test('DEREGISTER_MR alone (the old teardown) leaves the key: DEINITIALIZE_FW refuses at close', async (t) => {
  const nic = open('current');
  const rcfw = nicInternals(nic).roce.rcfw;
  const send = rcfw.send.bind(rcfw);
  const deinit: string[] = [];
  rcfw.send = ((cmd, body, names) => {
    if (cmd.opcode === DEALLOCATE_KEY) {
      const lkey = (body as Record<string, number>)['key'];
      return send({ opcode: DEREGISTER_MR, layout: CmdqDeregisterMr }, { lkey }, names);
    }
    const r = send(cmd, body, names);
    if (cmd.opcode === DEINITIALIZE_FW) deinit.push(r.ok ? 'ok' : r.error);
    return r;
  }) as typeof rcfw.send;
  const r = Region.alloc(nic, 8192);
  if (!r.ok) return void t.fail(r.error);
  t.ok(r.value.deregister().ok, 'DEREGISTER_MR is answered');
  t.equal(controls(nic).roce.resources().mrs, 1, 'but the key is still allocated in the firmware');
  nic.close();
  t.equal(deinit.length, 1, 'close sent DEINITIALIZE_FW');
  t.match(deinit[0], /DEINITIALIZE_FW refused/, 'which the firmware refused: a key was left');
});
