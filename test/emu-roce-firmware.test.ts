/**
 * The software NIC's RoCE firmware at the register/DMA level: the CMDQ channel, the CREQ
 * (valid bit per pass, no overrun), side buffers, function-level commands and their gating,
 * fault controls, and garbage. Expected CREQ bytes are written out from the offsets of
 * roce_hsi.h creq_base, creq_qp_event and the creq_*_resp_sb headers, and cmdq_initialize_fw.
 */
import t from 'tap';
import * as R from '../firmware-hwrm/roce/index.ts';
import * as H from '../firmware-hwrm/hwrm/index.ts';
import {
  EmuRig, TestCmdq, bringUp, openRoce as openAnyRoce, makeCq, makeQp, creqXid, type DmaBuf,
} from './helpers/emu-roce-setup.ts';
import { seeded, testSeed } from '../scripts/stress/seeded.ts';

const O = R.RoceOpcode;
const lo = (cookie: number) => cookie & 0xff;
const hi = (cookie: number) => cookie >>> 8;
const u32le = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];

/** A command response as roce_hsi.h creq_qp_event lays it out: type 0x38, status, cookie, xid, v, event = opcode. */
function response(
  status: number, cookie: number, xid: number, v: number, opcode: number, tail = [0, 0, 0, 0, 0, 0],
): number[] {
  return [0x38, status, lo(cookie), hi(cookie), ...u32le(xid), v, opcode, ...tail];
}

/**
 * The current firmware unless a test names another: the expected CREQ bytes (QUERY_VERSION's
 * 230.2.52.0 among them, which the wrap tests carry) are that firmware's answers, whatever
 * RIG_BNXT_EMU_FIRMWARE the run has.
 */
const openRoce = (options: Parameters<typeof openAnyRoce>[0] = {}) => openAnyRoce({ firmware: 'current', ...options });

function rd32(b: DmaBuf, at: number): number {
  return b.view.getUint32(at, true);
}

t.test('QUERY_FUNC before INITIALIZE_FW answers a P5 side buffer and a CREQ entry carrying its size', async (t) => {
  const { rig, q } = openRoce({ init: false, firmware: 'current' });
  const sb = rig.alloc(4096);
  sb.bytes.fill(0xee);
  const cookie = q.send(R.CmdqQueryFunc, { opcode: O.QUERY_FUNC, resp_size: 10, resp_addr: sb.iova });
  const e = q.take()!;
  t.same([...e], response(0, cookie, 10, 1, 0x83), 'status 0, cookie echoed, size 10 units, v 1, event 0x83');
  // Side-buffer header (roce_hsi.h creq_query_func_resp_sb and its kin): opcode, status, cookie, flags, resp_size.
  t.same([...sb.bytes.subarray(0, 8)], [0x83, 0, lo(cookie), hi(cookie), 0, 0, 10, 0]);
  const v = sb.view;
  t.equal(v.getBigUint64(8, true), 1n << 39n, 'max_mr_size 2^39');
  t.equal(rd32(sb, 16), 62, 'max_qp: 64 backing-store QP entries less QP0/QP1');
  t.equal(v.getUint16(20, true), 65535, 'max_qp_wr');
  t.equal(v.getUint16(22, true), 0x220,
    'dev_cap_flags (current firmware): MR_REGISTER_ALLOC | HW_REQUESTER_RETX_ENABLED');
  t.equal(rd32(sb, 24), 64, 'max_cq = backing-store CQ entries');
  t.equal(rd32(sb, 28), 0xfffff, 'max_cqe');
  t.equal(sb.bytes[36], 6, 'max_sge');
  t.equal(sb.bytes[38], 126, 'max_qp_rd_atom');
  t.equal(sb.bytes[39], 126, 'max_qp_init_rd_atom');
  t.equal(rd32(sb, 40), 64, 'max_mr = MRAV entries');
  t.equal(rd32(sb, 68), 96, 'max_inline_data');
  t.equal(sb.bytes[73], 15, 'l2_db_space_size: (15 + 1) x 4 KiB = 64 KiB');
  t.equal(rd32(sb, 76), 256, 'max_gid');
  t.equal(rd32(sb, 128), 4080, 'max_dpi: the 4 KiB pages of BAR2 above 64 KiB');
  t.equal(sb.bytes[133], 0x1, 'dev_cap_ext_flags ATOMIC_OPS_NOT_SUPPORTED');
  t.equal(v.getUint16(142, true) & 0x30, 0, 'REQ_RETRANSMISSION_SUPPORT = HOST_PSN_TABLE');
  t.same([...sb.bytes.subarray(160, 176)], new Array(16).fill(0xee), 'nothing past the 160-byte side buffer');
});

t.test('QUERY_VERSION answers in the CREQ entry itself (the current firmware: 230.2.52.0)', async (t) => {
  const { q } = openRoce({ init: false, firmware: 'current' });
  const cookie = q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.same([...q.take()!], [0x38, 0, lo(cookie), hi(cookie), 230, 2, 52, 0, 1, 0x8b, 0, 0, 1, 10, 3, 133]);
});

t.test('a side buffer is cut to resp_size; an unmapped or empty one is refused INVALID_PARAMETER', async (t) => {
  const { rig, q } = openRoce({ init: false });
  const sb = rig.alloc(4096);
  let cookie = q.send(R.CmdqQueryFunc, { opcode: O.QUERY_FUNC, resp_size: 3, resp_addr: sb.iova });
  t.same([...q.take()!], response(0, cookie, 3, 1, 0x83));
  t.equal(sb.bytes[6], 3, 'header resp_size = units written');
  t.equal(rd32(sb, 16), 62, 'max_qp inside the 48 bytes');
  t.same([...sb.bytes.subarray(48, 64)], new Array(16).fill(0), 'nothing past resp_size units');
  cookie = q.send(R.CmdqQueryFunc, { opcode: O.QUERY_FUNC, resp_size: 10, resp_addr: 0x7000_0000 });
  t.same([...q.take()!], response(5, cookie, 0, 1, 0x83));
  cookie = q.send(R.CmdqQueryFunc, { opcode: O.QUERY_FUNC, resp_size: 0, resp_addr: sb.iova });
  t.same([...q.take()!], response(5, cookie, 0, 1, 0x83));
});

t.test('before INITIALIZE_FW only QUERY_FUNC, QUERY_VERSION and INITIALIZE_FW are taken', async (t) => {
  const { rig, setup, q } = openRoce({ init: false });
  const cq = rig.alloc(4096);
  let cookie = q.send(R.CmdqCreateCq, { opcode: O.CREATE_CQ, cq_size: 16, pbl: cq.iova, cnq_id: setup.nqRingId });
  t.same([...q.take()!], response(3, cookie, 0, 1, O.CREATE_CQ), 'CREATE_CQ: INVALID_CMD');
  cookie = q.send(R.CmdqDeinitializeFw, { opcode: O.DEINITIALIZE_FW });
  t.same([...q.take()!], response(3, cookie, 0, 1, O.DEINITIALIZE_FW), 'DEINITIALIZE_FW: INVALID_CMD');
  cookie = q.send(R.CmdqInitializeFw, { opcode: O.INITIALIZE_FW, stat_ctx_id: setup.statCtxId });
  t.same([...q.take()!], response(0, cookie, 0, 1, O.INITIALIZE_FW), 'INITIALIZE_FW: SUCCESS');
  cookie = q.send(R.CmdqInitializeFw, { opcode: O.INITIALIZE_FW, stat_ctx_id: setup.statCtxId });
  t.same([...q.take()!], response(3, cookie, 0, 1, O.INITIALIZE_FW), 'a second INITIALIZE_FW: INVALID_CMD');
  t.equal(creqXid(q.call(R.CmdqCreateCq, { opcode: O.CREATE_CQ, cq_size: 16, pbl: cq.iova, cnq_id: setup.nqRingId })),
    1, 'CREATE_CQ now works');
  t.same(rig.model.controls.roce.resources(), { initialized: true, qps: 0, cqs: 1, mrs: 0, gids: 0 });
});

t.test('INITIALIZE_FW needs a RoCE statistics context and context memory', async (t) => {
  let { setup, q } = openRoce({ init: false, statCtxFlags: 0 });
  let cookie = q.send(R.CmdqInitializeFw, { opcode: O.INITIALIZE_FW, stat_ctx_id: setup.statCtxId });
  t.same([...q.take()!], response(5, cookie, 0, 1, O.INITIALIZE_FW), 'an L2 statistics context: INVALID_PARAMETER');
  cookie = q.send(R.CmdqInitializeFw, { opcode: O.INITIALIZE_FW, stat_ctx_id: 999 });
  t.same([...q.take()!], response(5, cookie, 0, 1, O.INITIALIZE_FW), 'no such context: INVALID_PARAMETER');

  // Without HWRM_FUNC_BACKING_STORE_CFG, HWRM allocates no ring either (so no CREQ): the
  // function's context memory is taken away after the CREQ exists to see the firmware's own check.
  ({ setup, q } = openRoce({ init: false }));
  q.rig.model.resources.backingStore = undefined;
  cookie = q.send(R.CmdqInitializeFw, { opcode: O.INITIALIZE_FW, stat_ctx_id: setup.statCtxId });
  t.same([...q.take()!], response(2, cookie, 0, 1, O.INITIALIZE_FW), 'no context memory: RESOURCES');
  t.equal(q.rig.model.controls.roce.resources().initialized, false);
});

t.test('DEINITIALIZE_FW is refused (FAIL) while objects exist, and gates commands again after it', async (t) => {
  const { setup, q, rig } = openRoce();
  const cq = makeCq(q);
  let cookie = q.send(R.CmdqDeinitializeFw, { opcode: O.DEINITIALIZE_FW });
  t.same([...q.take()!], response(1, cookie, 0, 1, O.DEINITIALIZE_FW));
  t.equal(q.call(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: cq.id })[1], 0);
  cookie = q.send(R.CmdqDeinitializeFw, { opcode: O.DEINITIALIZE_FW });
  t.same([...q.take()!], response(0, cookie, 0, 1, O.DEINITIALIZE_FW));
  cookie = q.send(R.CmdqCreateCq, { opcode: O.CREATE_CQ, cq_size: 16, pbl: cq.ring.iova, cnq_id: setup.nqRingId });
  t.same([...q.take()!], response(3, cookie, 0, 1, O.CREATE_CQ));
  t.same(rig.model.controls.roce.resources(), { initialized: false, qps: 0, cqs: 0, mrs: 0, gids: 0 });
});

t.test('unknown opcodes are INVALID_CMD, real but unmodelled ones NOT_IMPLEMENTED', async (t) => {
  const { q } = openRoce();
  const raw = new Uint8Array(16);
  raw.set([0x77, 1, 0, 0, 0x34, 0x12]);
  q.place(raw);
  q.ring();
  t.same([...q.take()!], response(3, 0x1234, 0, 1, 0x77));
  const srq = new Uint8Array(64);
  srq.set([O.CREATE_SRQ, 4, 0, 0, 0x35, 0x12]);
  q.place(srq);
  q.ring();
  t.same([...q.take()!], response(4, 0x1235, 0, 1, O.CREATE_SRQ));
});

t.test('malformed framing: cmd_size 0 and cmd_size past the producer are answered INVALID_CMD, then work goes ' +
  'on', async (t) => {
  const { q, rig } = openRoce();
  const zero = new Uint8Array(16);
  zero.set([O.QUERY_VERSION, 0, 0, 0, 0x01, 0x10]);
  q.place(zero);
  q.ring();
  t.same([...q.take()!], response(3, 0x1001, 0, 1, O.QUERY_VERSION), 'cmd_size 0');
  let cookie = q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.equal(q.take()![2], lo(cookie), 'the next command is read from the next unit');

  const long = new Uint8Array(16);
  long.set([O.QUERY_VERSION, 5, 0, 0, 0x02, 0x10]);
  q.place(long);
  q.ring(); // the producer covers one unit of a five-unit command
  t.same([...q.take()!], response(3, 0x1002, 0, 1, O.QUERY_VERSION), 'cmd_size past the producer');
  cookie = q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.equal(q.take()![2], lo(cookie));
  t.equal(rig.model.controls.roce.stats().malformed, 2);

  // A producer further ahead than the ring holds names nothing the firmware can trust: no answer.
  q.prod += 1000;
  q.ring();
  t.equal(q.take(), undefined);
  cookie = q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.equal(q.take()![2], lo(cookie), 'and the channel goes on from the producer');
});

t.test('seeded garbage on the CMDQ never throws out of the model and every command is answered', async (t) => {
  const seed = testSeed();
  t.comment(`SEED=${seed}`);
  const next = seeded(seed);
  const { q, rig } = openRoce({ cmdqDepth: 64 });
  const before = rig.model.controls.roce.stats().commands;
  let answered = 0;
  let sent = 0;
  for (let i = 0; i < 300; i++) {
    const units = 1 + (next() % 9);
    const bytes = new Uint8Array(units * 16);
    for (let b = 0; b < bytes.length; b++) bytes[b] = next() & 0xff;
    bytes[0] = next() % 4 === 0 ? next() & 0xff
      : [0x01, 0x02, 0x03, 0x04, 0x09, 0x0a, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x80, 0x81, 0x83, 0x8b][next() % 16]!;
    bytes[1] = units;
    q.place(bytes);
    q.ring();
    sent++;
    while (q.take()) answered++;
  }
  const stats = rig.model.controls.roce.stats();
  t.equal(stats.internalErrors, 0, `no internal error (${String(rig.model.controls.roce.lastInternalError())})`);
  t.equal(stats.commands - before, sent);
  t.equal(answered, sent, 'one CREQ entry per command');
});

t.test('commands wrap unit by unit around the end of the CMDQ', async (t) => {
  const { q } = openRoce({ cmdqDepth: 16 });
  // CREATE_CQ takes 4 units and QUERY_VERSION 1: several commands straddle the end of a 16-unit ring.
  const ids: number[] = [];
  t.equal(q.call(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION })[4], 230); // units 7: the next CREATE_CQ starts at 8
  let straddled = 0;
  for (let i = 0; i < 6; i++) {
    if ((q.prod % 16) + 4 > 16) straddled++;
    const cq = makeCq(q);
    ids.push(cq.id);
    t.equal(q.call(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION })[4], 230);
  }
  t.same(ids, [1, 2, 3, 4, 5, 6]);
  t.equal(q.prod, 7 + 1 + 30, 'INITIALIZE_FW (7 units), 1, and 6 x (4 + 1) units: twice round the 16-unit ring');
  t.ok(straddled >= 1, `${straddled} CREATE_CQs straddled the end of the ring`);
});

t.test('the CREQ valid bit is 1 on even passes and 0 on odd ones, across wraps', async (t) => {
  const { q, setup } = openRoce({ creqDepth: 16 });
  // INITIALIZE_FW took slot 0 of pass 0.
  for (let i = 1; i < 40; i++) {
    const cookie = q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
    const slot = i % 16;
    const pass = Math.floor(i / 16);
    const bytes = [...setup.creq.bytes.subarray(slot * 16, slot * 16 + 16)];
    t.same(bytes, [0x38, 0, lo(cookie), hi(cookie), 230, 2, 52, 0, pass % 2 === 0 ? 1 : 0, 0x8b, 0, 0, 1, 10, 3, 133],
      `entry ${i}: slot ${slot}, pass ${pass}`);
    t.ok(q.take());
  }
});

t.test('a CREQ behind a page table (RING_ALLOC depth 1) fills across its pages', async (t) => {
  const { q, setup } = openRoce({ creqDepth: 512, creqPaged: true });
  for (let i = 1; i < 300; i++) t.equal(q.call(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION })[9], 0x8b);
  t.equal(setup.creq.bytes[299 * 16 + 9], 0x8b, 'entry 299 is on the second page');
  t.equal(setup.creq.bytes[299 * 16 + 8], 1);
});

t.test('the firmware never overruns the CREQ: answers wait for the consumer doorbell', async (t) => {
  const rig = new EmuRig();
  const setup = bringUp(rig, { creqDepth: 16 });
  const q = new TestCmdq(rig, setup, 256, { autoDoorbell: false });
  q.start();
  const cookies: number[] = [];
  for (let i = 0; i < 20; i++) cookies.push(q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION }));
  const seen: number[] = [];
  for (let e = q.take(); e; e = q.take()) seen.push(e[2]! | (e[3]! << 8));
  t.same(seen, cookies.slice(0, 16), 'the first 16 answers fill the ring');
  t.equal(setup.creq.bytes[2], lo(cookies[0]!), 'slot 0 still holds the first answer');
  t.equal(setup.creq.bytes[8], 1);
  // The consumer went round once: index 0 of pass 1.
  rig.model.roce.creqDoorbell(0, 1);
  rig.run();
  for (let e = q.take(); e; e = q.take()) seen.push(e[2]! | (e[3]! << 8));
  t.same(seen, cookies, 'the held answers follow, in order');
  t.equal(setup.creq.bytes[8], 0, 'written on pass 1 with v = 0');
  // A doorbell naming a position the firmware never produced is ignored.
  rig.model.roce.creqDoorbell(9, 0);
  q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.ok(q.take(), 'the consumer is where the last good doorbell put it');
});

t.test('a CREQ doorbell written to BAR2 (NQ_ARM, xid = the CREQ ring id) returns space to the firmware', async (t) => {
  const rig = new EmuRig();
  const setup = bringUp(rig, { creqDepth: 16 });
  const q = new TestCmdq(rig, setup, 256, { autoDoorbell: false });
  q.start();
  for (let i = 0; i < 17; i++) q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  let n = 0;
  while (q.take()) n++;
  t.equal(n, 16, 'the 17th answer waits');
  // NQ_ARM for ring id X, consumer index 0 of pass 1: lo = index | epoch << 24, hi = xid | valid | 0xB << 28
  // (bnxt_hsi.h struct dbc_dbc).
  rig.bar2Doorbell64(0x10000, 0x0100_0000, (setup.creqRingId | 0x0400_0000 | 0xb000_0000) >>> 0);
  rig.run();
  t.ok(q.take(), 'the 17th answer after the doorbell');
});

t.test('the first-command flag re-reads the mailbox and resets the consumer; a bare trigger runs nothing ' +
  'twice', async (t) => {
  const { rig, q, setup } = openRoce();
  q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.ok(q.take());
  rig.bar0Write32(0x700, 1);
  rig.run();
  t.equal(q.take(), undefined, 'a trigger with no new producer write answers nothing');
  // The driver re-enables the channel with a new CMDQ: mailbox, then a first command with bit 31.
  const q2 = new TestCmdq(rig, setup, 32);
  q2.creq.cons = q.creq.cons;
  q2.start();
  const cookie = q2.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  const e = q2.take()!;
  t.equal(e[2], lo(cookie), 'read from the new CMDQ at unit 0');
  t.equal(rig.model.bar0Written[0x60c >>> 2]! & 0x8000_0000, 0, 'bit 31 was consumed');
});

t.test('a mailbox naming no usable CMDQ answers nothing until a good one arrives', async (t) => {
  const { rig, setup } = openRoce({ init: false });
  const q = new TestCmdq(rig, setup, 16);
  rig.bar0Write32(0x600, 0x1234_0000);
  rig.bar0Write32(0x604, 0x7);
  rig.bar0Write32(0x608, (16 << 2) | (setup.creqRingId << 16));
  rig.bar0Write32(0x60c, 0);
  q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.equal(q.take(), undefined);
  q.first = true;
  q.prod = 0;
  q.start();
  q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.ok(q.take());
});

t.test('fault controls: refuse the Nth command, refuse an opcode, stop answering', async (t) => {
  const { rig, q } = openRoce();
  rig.model.controls.roce.refuseNth(2, R.RoceStatus.INTERNAL_ERROR);
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push(q.call(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION })[1]!);
  t.same(statuses, [0, 7, 0]);

  rig.model.controls.roce.refuseOpcode(O.QUERY_VERSION, R.RoceStatus.FAIL);
  const cookie = q.send(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION });
  t.same([...q.take()!], response(1, cookie, 0, 1, 0x8b), 'refused: status FAIL, nothing else');
  t.equal(makeCq(q).id, 1, 'other opcodes still run');
  rig.model.controls.roce.clearFaults();

  rig.model.controls.roce.silence();
  const seen = rig.model.controls.roce.seen();
  q.send(R.CmdqCreateCq, { opcode: O.CREATE_CQ, cq_size: 16, pbl: rig.alloc(4096).iova, cnq_id: q.setup.nqRingId });
  t.equal(q.take(), undefined, 'silent: no answer');
  t.equal(rig.model.controls.roce.seen(), seen + 1, 'but the command was taken');
  t.equal(rig.model.controls.roce.resources().cqs, 1, 'and not run');
  rig.model.controls.roce.clearFaults();
  t.equal(q.call(R.CmdqQueryVersion, { opcode: O.QUERY_VERSION })[1], 0, 'answers again after clearFaults');
  t.throws(() => rig.model.controls.roce.refuseNth(0, 1), RangeError);
  t.throws(() => rig.model.controls.roce.refuseOpcode(1, 0), RangeError);
});

t.test('HWRM may not free the CREQ of an initialized function nor an NQ a CQ notifies', async (t) => {
  const { rig, q, setup } = openRoce();
  const free = (id: number) => rig.hwrm(H.HWRM_COMMANDS.RING_FREE, {
    ring_type: H.RING_ALLOC_REQ_RING_TYPE.NQ, ring_id: id,
  });
  t.throws(() => free(setup.creqRingId), /error/);
  const cq = makeCq(q);
  t.throws(() => free(setup.nqRingId), /error/);
  t.equal(q.call(R.CmdqDestroyCq, { opcode: O.DESTROY_CQ, cq_cid: cq.id })[1], 0);
  t.doesNotThrow(() => free(setup.nqRingId));
  t.equal(q.call(R.CmdqDeinitializeFw, { opcode: O.DEINITIALIZE_FW })[1], 0);
  t.doesNotThrow(() => free(setup.creqRingId));
});

t.test('HWRM_FUNC_RESET drops every RoCE object and the initialized state', async (t) => {
  const { rig, q } = openRoce();
  const cq = makeCq(q);
  const qpn = makeQp(q, cq.id, cq.id);
  const qp = rig.model.roce.qp(qpn)!;
  rig.hwrm(H.HWRM_COMMANDS.FUNC_RESET, {});
  t.same(rig.model.controls.roce.resources(), { initialized: false, qps: 0, cqs: 0, mrs: 0, gids: 0 });
  t.equal(qp.destroyed, true);
  t.same(rig.hookCalls.at(-1), { hook: 'qpDestroyed', qpn });
});
