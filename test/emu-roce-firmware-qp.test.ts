/**
 * The RoCE firmware's QPs: CREATE_QP (RC, static WQEs, rings through their PBLs), DESTROY_QP,
 * QUERY_QP, and the MODIFY_QP state machine with its modify-mask rules (roce_hsi.h cmdq_create_qp,
 * cmdq_modify_qp, cmdq_query_qp; Linux bnxt_re qplib_fp.c bnxt_qplib_modify_qp). Expected bytes
 * come from roce_hsi.h's offsets.
 */
import t from 'tap';
import * as R from '../firmware-hwrm/roce/index.ts';
import {
  openRoce, makeCq, makeQp, addGid, qpMemory, createQpValues, toInitValues, toRtrValues, toRtsValues, modify, creqXid,
  PEER_GID, PEER_MAC, type TestCmdq, type EmuRig,
} from './helpers/emu-roce-setup.ts';

const O = R.RoceOpcode;
const S = R.QpState;
const M = R.ModifyQpMask;
const u32le = (v: number) => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
const response = (status: number, cookie: number, xid: number, opcode: number) => [
  0x38, status, cookie & 0xff, cookie >>> 8, ...u32le(xid), 1, opcode, 0, 0, 0, 0, 0, 0,
];

t.test('CREATE_QP answers a QP number (never 0 or 1); the QP starts in RESET with its rings resolved', async (t) => {
  const { q, rig } = openRoce();
  const scq = makeCq(q);
  const rcq = makeCq(q);
  const m = qpMemory(rig, 16, 8);
  const cookie = q.send(R.CmdqCreateQp, createQpValues(scq.id, rcq.id, m, 16, 8));
  const e = q.take()!;
  t.same([...e], response(0, cookie, 2, O.CREATE_QP), 'the first QP number is 2');
  const qp = rig.model.roce.qp(2)!;
  t.equal(qp.state, S.RESET);
  t.equal(qp.pd, 1);
  t.same([qp.handleLo, qp.handleHi], [0xa5a6a7a8, 0xa1a2a3a4], 'qp_handle halves');
  t.same([qp.sq.entries, qp.sq.entryBytes, qp.rq.entries, qp.rq.entryBytes], [16, 128, 8, 128]);
  t.equal(qp.sq.entryIova(3), m.sq.iova + 3 * 128);
  t.equal(qp.sq.memory.iova(16 * 128), m.sq.iova + 2048, 'the PSN search area follows the SQ ring');
  t.equal(qp.rq.entryIova(7), m.rq.iova + 7 * 128);
  t.equal(qp.scq, rig.model.roce.cq(scq.id));
  t.equal(qp.rcq, rig.model.roce.cq(rcq.id));
  t.same([qp.sqSge, qp.rqSge], [6, 6]);
  t.equal(makeQp(q, scq.id, rcq.id), 3);
});

t.test('CREATE_QP resolves a level-1 SQ page list of scattered pages', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q);
  const m = qpMemory(rig, 16, 16);
  // 64 WQEs x 144 B = 9216 B: three pages, named by a PBL with VALID (and LAST / NEXT_TO_LAST) bits.
  const pages = [rig.alloc(4096), rig.alloc(4096), rig.alloc(4096)];
  const pbl = rig.alloc(4096);
  pages.forEach((p, i) => pbl.view.setBigUint64(i * 8, BigInt(p.iova) | BigInt(R.queuePteFlags(i, 3)), true));
  const e = q.call(R.CmdqCreateQp, { ...createQpValues(cq.id, cq.id, m, 64, 16), sq_lvl: 1, sq_pbl: pbl.iova });
  t.equal(e[1], 0);
  const qp = rig.model.roce.qp(creqXid(e))!;
  t.equal(qp.sq.entryIova(31), pages[0]!.iova + 31 * 128);
  t.equal(qp.sq.entryIova(32), pages[1]!.iova);
  t.equal(qp.sq.memory.iova(64 * 128 + 5 * 16), pages[2]!.iova + 5 * 16, 'PSN entry 5 on the third page');
});

t.test('CREATE_QP refusals: type, flags, sizes, CQs, unmapped rings, full table', async (t) => {
  const { q, rig } = openRoce({ qpEntries: 4 });
  const cq = makeCq(q);
  const cases: [string, (m: ReturnType<typeof qpMemory>) => Partial<Record<string, unknown>>, number][] = [
    ['UD', () => ({ type: R.QpType.UD }), 4],
    ['type 9', () => ({ type: 9 }), 5],
    ['SRQ_USED', () => ({ qp_flags: R.CreateQpFlags.SRQ_USED }), 4],
    // P5 runs static WQEs only (bnxt_re_set_drv_mode): refused as a bad parameter.
    ['variable-size WQEs on a P5', () => ({ qp_flags: R.CreateQpFlags.VARIABLE_SIZED_WQE_ENABLED }), 5],
    ['sq_size 65536', () => ({ sq_size: 65536 }), 5],
    ['rq_sge 7', () => ({ rq_sge: 7 }), 5],
    ['dpi past BAR2', () => ({ dpi: 4080 }), 5],
    ['no send CQ', () => ({ scq_cid: 99 }), 5],
    ['no receive CQ', () => ({ rcq_cid: 99 }), 5],
    ['SQ without room for its PSN area', () => ({ sq_size: 32, sq_pbl: rig.alloc(4096).iova }), 5],
    ['RQ unmapped', () => ({ rq_pbl: 0x100_0000 }), 5],
    ['SQ level 3', () => ({ sq_lvl: 3 }), 5],
    ['SQ page-size code 7', () => ({ sq_pg_size: 7 }), 5],
    ['ORRQ unmapped', () => ({ orrq_addr: 0x1000 }), 5],
    ['IRRQ of one page (254 x 32 B need two)', () => ({ irrq_addr: rig.alloc(4096).iova }), 5],
    // The old driver's IRRQ, packed 4064 bytes after its ORRQ (bnxt_qplib_create_qp gives each a page).
    ['IRRQ off a page boundary', () => ({ irrq_addr: rig.alloc(3 * 4096).iova + 4064 }), 5],
  ];
  for (const [what, change, status] of cases) {
    const m = qpMemory(rig, 16, 16);
    const e = q.call(R.CmdqCreateQp, { ...createQpValues(cq.id, cq.id, m), ...change(m) } as never);
    t.equal(e[1], status, what);
    t.same([...e.subarray(4, 8)], [0, 0, 0, 0], `${what}: no xid`);
  }
  t.equal(rig.model.controls.roce.resources().qps, 0, 'nothing was created');
  // 4 backing-store QP entries: QP0, QP1 and two RoCE QPs.
  t.equal(makeQp(q, cq.id, cq.id), 2);
  t.equal(makeQp(q, cq.id, cq.id), 3);
  const m = qpMemory(rig, 16, 16);
  t.equal(q.call(R.CmdqCreateQp, createQpValues(cq.id, cq.id, m))[1], R.RoceStatus.RESOURCES);
  t.equal(q.call(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: 2 })[1], 0);
  t.equal(q.call(R.CmdqCreateQp, createQpValues(cq.id, cq.id, m))[1], 0, 'a destroyed QP frees its entry');
});

t.test('DESTROY_QP: the QP is gone, the engine is told, a second destroy is refused', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q);
  const qpn = makeQp(q, cq.id, cq.id);
  const qp = rig.model.roce.qp(qpn)!;
  let cookie = q.send(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: qpn });
  t.same([...q.take()!], response(0, cookie, qpn, O.DESTROY_QP));
  t.equal(qp.destroyed, true);
  t.equal(rig.model.roce.qp(qpn), undefined);
  t.same(rig.hookCalls, [{ hook: 'qpDestroyed', qpn }]);
  cookie = q.send(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: qpn });
  t.same([...q.take()!], response(5, cookie, 0, O.DESTROY_QP));
});

t.test('the kernel\'s RC connect (RESET->INIT->RTR->RTS) stores every attribute; QUERY_QP reads them ' +
  'back', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q);
  const qpn = makeQp(q, cq.id, cq.id);
  const sgid = addGid(q);
  const qp = rig.model.roce.qp(qpn)!;
  let cookie = q.send(R.CmdqModifyQp, toInitValues(qpn));
  t.same([...q.take()!], response(0, cookie, qpn, O.MODIFY_QP), 'RESET -> INIT');
  t.same([qp.state, qp.access, qp.pkey], [S.INIT, 7, 0xffff]);
  cookie = q.send(R.CmdqModifyQp, toRtrValues(qpn, sgid));
  t.same([...q.take()!], response(0, cookie, qpn, O.MODIFY_QP), 'INIT -> RTR');
  t.equal(qp.state, S.RTR);
  t.same([...qp.destGid], [...PEER_GID]);
  t.same([...qp.destMac], [...PEER_MAC]);
  t.same([qp.sgidIndex, qp.hopLimit, qp.pathMtuBytes, qp.rqPsn, qp.maxDestRdAtomic, qp.minRnrTimer, qp.destQpn], [
    sgid, 64, 1024, 0xabcdef, 254, 12, 0x123,
  ]);
  cookie = q.send(R.CmdqModifyQp, toRtsValues(qpn));
  t.same([...q.take()!], response(0, cookie, qpn, O.MODIFY_QP), 'RTR -> RTS');
  t.same([qp.state, qp.timeout, qp.retryCnt, qp.rnrRetry, qp.maxRdAtomic, qp.sqPsn], [S.RTS, 14, 7, 7, 127, 0x123456]);
  t.same(rig.hookCalls, [
    { hook: 'qpStateChanged', qpn, from: S.RESET, to: S.INIT },
    { hook: 'qpStateChanged', qpn, from: S.INIT, to: S.RTR },
    { hook: 'qpStateChanged', qpn, from: S.RTR, to: S.RTS },
  ]);

  const sb = rig.alloc(4096);
  cookie = q.send(R.CmdqQueryQp, { opcode: O.QUERY_QP, qp_cid: qpn, resp_size: 7, resp_addr: sb.iova });
  t.same([...q.take()!], response(0, cookie, 7, O.QUERY_QP), 'size 7 units');
  const b = sb.bytes;
  const v = sb.view;
  t.same([...b.subarray(0, 8)], [0x04, 0, cookie & 0xff, cookie >>> 8, 0, 0, 7, 0], 'side-buffer header');
  t.equal(v.getUint32(8, true), qpn, 'xid @8');
  t.equal(b[12]! & 0xf, S.RTS, 'state @12');
  t.equal(b[13], 7, 'access @13');
  t.equal(v.getUint16(14, true), 0xffff, 'pkey @14');
  t.same([...b.subarray(24, 40)], [...PEER_GID], 'dgid @24');
  t.equal(v.getUint16(44, true), sgid, 'sgid_index @44');
  t.equal(b[46], 64, 'hop_limit @46');
  t.same([...b.subarray(48, 54)], [...PEER_MAC], 'dest_mac @48');
  t.equal(v.getUint16(54, true), 0xfff | (R.PathMtu.MTU_1024 << 12), 'VLAN 0xfff | path_mtu 1024 @54');
  t.same([b[56], b[57], b[58], b[59]], [14, 7, 7, 12], 'timeout, retry_cnt, rnr_retry, min_rnr_timer @56');
  t.equal(v.getUint32(60, true), 0xabcdef, 'rq_psn @60');
  t.equal(v.getUint32(64, true), 0x123456, 'sq_psn @64');
  t.same([b[68], b[69]], [127, 254], 'max_rd_atomic, max_dest_rd_atomic @68');
  t.same([v.getUint32(72, true), v.getUint32(76, true), v.getUint16(80, true), v.getUint16(82, true)], [16, 16, 6, 6],
    'sizes and SGEs @72');
  t.equal(v.getUint32(84, true), 96, 'max_inline_data @84');
  t.equal(v.getUint32(88, true), 0x123, 'dest_qp_id @88');
  t.same([...b.subarray(96, 102)], [...rig.model.config.mac], 'src_mac @96: the sgid entry\'s MAC');
  t.same([...b.subarray(104, 112)], [0, 0, 0, 0, 0, 0, 0, 0], 'nothing past the 104-byte side buffer');
  cookie = q.send(R.CmdqQueryQp, { opcode: O.QUERY_QP, qp_cid: 77, resp_size: 7, resp_addr: sb.iova });
  t.same([...q.take()!], response(5, cookie, 0, O.QUERY_QP), 'QUERY_QP of no QP');
});

/** A fresh QP driven to `state` by MODIFY_QP (SQD and SQE are states only the NIC enters: set directly). */
function qpIn(q: TestCmdq, rig: EmuRig, cq: number, sgid: number, state: number): number {
  const qpn = makeQp(q, cq, cq);
  const step = (values: Parameters<typeof modify>[1]) => {
    const e = modify(q, values);
    if (e[1] !== 0) throw new Error(`setup transition refused: ${String(rig.model.controls.roce.lastRefusal())}`);
  };
  if (state === S.ERR) step({ opcode: O.MODIFY_QP, qp_cid: qpn, modify_mask: M.STATE, new_state: S.ERR });
  if (state >= S.INIT && state !== S.ERR) step(toInitValues(qpn));
  if (state >= S.RTR && state !== S.ERR) step(toRtrValues(qpn, sgid));
  if (state >= S.RTS && state !== S.ERR) step(toRtsValues(qpn));
  if (state === S.SQD || state === S.SQE) rig.model.roce.qp(qpn)!.state = state as never;
  return qpn;
}

function transitionValues(qpn: number, sgid: number, from: number, to: number): Parameters<typeof modify>[1] {
  if (from === S.RESET && to === S.INIT) return toInitValues(qpn);
  if (from === S.INIT && to === S.RTR) return toRtrValues(qpn, sgid);
  if (from === S.RTR && to === S.RTS) return toRtsValues(qpn);
  return { opcode: O.MODIFY_QP, qp_cid: qpn, modify_mask: M.STATE, new_state: to };
}

t.test('every legal RC transition is taken and reported to the engine', async (t) => {
  const { q, rig } = openRoce({ qpEntries: 200 });
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const legal: [number, number][] = [
    [S.RESET, S.INIT], [S.INIT, S.INIT], [S.INIT, S.RTR], [S.RTR, S.RTS], [S.RTS, S.RTS], [S.SQE, S.RTS],
  ];
  for (let from = S.RESET; from <= S.ERR; from++) legal.push([from, S.RESET], [from, S.ERR]);
  for (const [from, to] of legal) {
    const qpn = qpIn(q, rig, cq, sgid, from);
    rig.hookCalls.length = 0;
    const e = modify(q, transitionValues(qpn, sgid, from, to));
    const name = `${R.qpStateName(from)} -> ${R.qpStateName(to)}`;
    t.equal(e[1], 0, name);
    t.equal(rig.model.roce.qp(qpn)!.state, to, `${name}: state`);
    t.same(rig.hookCalls, from === to ? [] : [{ hook: 'qpStateChanged', qpn, from, to }],
      `${name}: the engine hears of a change only`);
  }
});

t.test('illegal transitions are refused INVALID_PARAMETER and change nothing', async (t) => {
  const { q, rig } = openRoce({ qpEntries: 200 });
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const illegal: [number, number][] = [
    [S.RESET, S.RTR], [S.RESET, S.RTS], [S.INIT, S.RTS], [S.RTR, S.INIT], [S.RTR, S.RTR], [S.RTS, S.INIT],
    [S.RTS, S.RTR], [S.ERR, S.INIT], [S.ERR, S.RTS], [S.RESET, S.SQD], [S.RTS, S.SQD], [S.RTS, S.SQE], [S.SQD, S.RTS],
    [S.INIT, 9],
  ];
  for (const [from, to] of illegal) {
    const qpn = qpIn(q, rig, cq, sgid, from);
    rig.hookCalls.length = 0;
    const values = from === S.INIT && to === S.RTS ? { ...toRtsValues(qpn) } : from === S.RESET && to === S.RTR
      ? toRtrValues(qpn, sgid) : transitionValues(qpn, sgid, from, to);
    const cookie = q.send(R.CmdqModifyQp, values);
    const name = `${R.qpStateName(from)} -> ${R.qpStateName(to)}`;
    t.same([...q.take()!], response(5, cookie, 0, O.MODIFY_QP), name);
    t.equal(rig.model.roce.qp(qpn)!.state, from, `${name}: state unchanged`);
    t.same(rig.hookCalls, [], `${name}: the engine hears nothing`);
  }
  const e = modify(q, { opcode: O.MODIFY_QP, qp_cid: 999, modify_mask: M.STATE, new_state: S.ERR });
  t.equal(e[1], 5, 'MODIFY_QP of no QP');
});

t.test('a transition missing a required attribute, or changing one RTR->RTS may not, is refused', async (t) => {
  const { q, rig } = openRoce({ qpEntries: 64 });
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const cases: [string, number, Parameters<typeof modify>[1]][] = [];
  const fresh = (state: number) => qpIn(q, rig, cq, sgid, state);
  let qpn = fresh(S.RESET);
  cases.push(['RESET -> INIT without PKEY', qpn, { ...toInitValues(qpn), modify_mask: M.STATE | M.ACCESS }]);
  qpn = fresh(S.INIT);
  cases.push([
    'INIT -> RTR without DEST_QP_ID', qpn,
    { ...toRtrValues(qpn, sgid), modify_mask: R.RcTransitionMask.INIT_TO_RTR & ~M.DEST_QP_ID },
  ]);
  cases.push([
    'INIT -> RTR without PATH_MTU', qpn,
    { ...toRtrValues(qpn, sgid), modify_mask: R.RcTransitionMask.INIT_TO_RTR & ~M.PATH_MTU },
  ]);
  cases.push([
    'INIT -> RTR without the address vector (DGID)', qpn,
    { ...toRtrValues(qpn, sgid), modify_mask: R.RcTransitionMask.INIT_TO_RTR & ~M.DGID },
  ]);
  qpn = fresh(S.RTR);
  cases.push([
    'RTR -> RTS without SQ_PSN', qpn, { ...toRtsValues(qpn), modify_mask: R.RcTransitionMask.RTR_TO_RTS & ~M.SQ_PSN },
  ]);
  cases.push([
    'RTR -> RTS without TIMEOUT', qpn, { ...toRtsValues(qpn), modify_mask: R.RcTransitionMask.RTR_TO_RTS & ~M.TIMEOUT },
  ]);
  cases.push([
    'RTR -> RTS changing DGID', qpn,
    { ...toRtsValues(qpn), modify_mask: R.RcTransitionMask.RTR_TO_RTS | M.DGID, dgid: PEER_GID },
  ]);
  cases.push([
    'RTR -> RTS changing DEST_QP_ID', qpn,
    { ...toRtsValues(qpn), modify_mask: R.RcTransitionMask.RTR_TO_RTS | M.DEST_QP_ID, dest_qp_id: 5 },
  ]);
  for (const [what, n, values] of cases) {
    const before = rig.model.roce.qp(n)!.state;
    t.equal(modify(q, values)[1], 5, what);
    t.equal(rig.model.roce.qp(n)!.state, before, `${what}: state unchanged`);
  }
});

t.test('attribute values outside their encodings are refused; a refused modify stores nothing', async (t) => {
  const { q, rig } = openRoce({ qpEntries: 64 });
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const qpn = qpIn(q, rig, cq, sgid, S.INIT);
  const qp = rig.model.roce.qp(qpn)!;
  const rtr = toRtrValues(qpn, sgid);
  const cases: [string, Parameters<typeof modify>[1]][] = [
    ['sgid_index not in the GID table', { ...rtr, sgid_index: 5 }],
    ['path MTU 4096 on a 1500-byte port', { ...rtr, path_mtu: R.PathMtu.MTU_4096 }],
    ['path MTU code 6', { ...rtr, path_mtu: 6 }],
    ['rq_psn of 25 bits', { ...rtr, rq_psn: 0x100_0000 }],
    ['dest_qp_id of 25 bits', { ...rtr, dest_qp_id: 0x100_0000 }],
    ['max_dest_rd_atomic 0', { ...rtr, max_dest_rd_atomic: 0 }],
    ['max_dest_rd_atomic 255 (IRRQ holds 254)', { ...rtr, max_dest_rd_atomic: 255 }],
    ['min_rnr_timer 32', { ...rtr, min_rnr_timer: 32 }],
  ];
  for (const [what, values] of cases) t.equal(modify(q, values)[1], 5, what);
  t.same([qp.state, qp.destQpn, qp.rqPsn, qp.pathMtuBytes], [S.INIT, 0, 0, 4096], 'nothing stored');
  t.equal(modify(q, rtr)[1], 0);
  const rts = toRtsValues(qpn);
  for (const [what, values] of [
    ['retry_cnt 8', { ...rts, retry_cnt: 8 }],
    ['rnr_retry 8', { ...rts, rnr_retry: 8 }],
    ['timeout 32', { ...rts, timeout: 32 }],
    ['max_rd_atomic 128 (ORRQ holds 127)', { ...rts, max_rd_atomic: 128 }],
    ['max_rd_atomic 0', { ...rts, max_rd_atomic: 0 }],
    ['sq_psn of 25 bits', { ...rts, sq_psn: 0x100_0000 }],
  ] as const) t.equal(modify(q, values)[1], 5, what);
  t.equal(qp.state, S.RTR);
});

t.test('a 9000-byte port takes path MTU 4096 but not 8192', async (t) => {
  const { q, rig } = openRoce({ mtu: 9000 });
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const qpn = qpIn(q, rig, cq, sgid, S.INIT);
  t.equal(modify(q, { ...toRtrValues(qpn, sgid), path_mtu: R.PathMtu.MTU_8192 })[1], 5);
  t.equal(modify(q, { ...toRtrValues(qpn, sgid), path_mtu: R.PathMtu.MTU_4096 })[1], 0);
  t.equal(rig.model.roce.qp(qpn)!.pathMtuBytes, 4096);
});

t.test('a MODIFY_QP without the STATE bit changes attributes in place where the state allows it', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const qpn = qpIn(q, rig, cq, sgid, S.RTS);
  rig.hookCalls.length = 0;
  t.equal(modify(q, { opcode: O.MODIFY_QP, qp_cid: qpn, modify_mask: M.TIMEOUT, timeout: 20, new_state: S.RESET })[1],
    0, 'RTS: new_state is ignored without STATE');
  const qp = rig.model.roce.qp(qpn)!;
  t.same([qp.state, qp.timeout], [S.RTS, 20]);
  t.same(rig.hookCalls, []);
  const rtr = qpIn(q, rig, cq, sgid, S.RTR);
  t.equal(modify(q, { opcode: O.MODIFY_QP, qp_cid: rtr, modify_mask: M.TIMEOUT, timeout: 20 })[1], 5,
    'RTR -> RTR is not a transition');
});

t.test('to RESET, the QP forgets its queue positions and its GID', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  const sgid = addGid(q);
  const qpn = qpIn(q, rig, cq, sgid, S.RTS);
  const qp = rig.model.roce.qp(qpn)!;
  qp.sqProducer = 5;
  qp.rqProducer = 9;
  t.equal(q.call(R.CmdqDeleteGid, { opcode: O.DELETE_GID, gid_index: sgid })[1], R.RoceStatus.FAIL,
    'the QP sends from the GID');
  t.equal(modify(q, { opcode: O.MODIFY_QP, qp_cid: qpn, modify_mask: M.STATE, new_state: S.RESET })[1], 0);
  t.same([qp.state, qp.sqProducer, qp.rqProducer], [S.RESET, 0, 0]);
  t.equal(q.call(R.CmdqDeleteGid, { opcode: O.DELETE_GID, gid_index: sgid })[1], 0, 'a reset QP names no GID');
});
