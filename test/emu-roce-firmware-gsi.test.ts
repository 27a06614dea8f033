/**
 * The GSI QP (QP1) as Linux's bnxt_re creates it on P5 (ib_verbs.c bnxt_re_init_qp_type: GSI
 * type in UD mode; qplib_fp.c bnxt_qplib_create_qp: no PSN-search area, no ORRQ/IRRQ for a
 * non-RC QP) and as ib_mad moves it to RTS (core/mad.c ib_mad_port_start: INIT with the P_Key
 * index and Q_Key 0x80010000, RTR, RTS with the SQ PSN; bnxt_re adds PATH_MTU at RTR and qplib
 * SGID_INDEX). The modify masks are the kernel's, written out from roce_hsi.h's
 * CMDQ_MODIFY_QP_MODIFY_MASK_* bits: STATE 0x1, ACCESS 0x4, PKEY 0x8, QKEY 0x10, SGID_INDEX 0x80,
 * PATH_MTU 0x1000, SQ_PSN 0x80000, DEST_QP_ID 0x4000000.
 */
import t from 'tap';
import * as R from '../firmware-hwrm/roce/index.ts';
import {
  openRoce, makeCq, makeQp, qpMemory, createQpValues, modify, creqXid, type TestCmdq, type EmuRig,
} from './helpers/emu-roce-setup.ts';

const O = R.RoceOpcode;
const S = R.QpState;
const IB_QP1_QKEY = 0x80010000;
/** What ib_mad's QP1 gets from bnxt_re: 128 + 128 + 1 send WRs rounded up, 512 + 1 receives rounded up. */
const SQ_WQES = 512;
const RQ_WQES = 1024;

/** CREATE_QP as bnxt_qplib_create_qp sends it for the GSI QP: SQ of sq_size x 128 B only, no ORRQ/IRRQ. */
function gsiValues(rig: EmuRig, cq: number) {
  const sq = rig.alloc(SQ_WQES * 128);
  const rq = rig.alloc(RQ_WQES * 128);
  return {
    ...createQpValues(cq, cq, qpMemory(rig, 1, 1)),
    type: R.QpType.GSI, sq_size: SQ_WQES, rq_size: RQ_WQES, sq_sge: 2, rq_sge: 6, sq_pbl: sq.iova, rq_pbl: rq.iova,
    orrq_addr: 0, irrq_addr: 0,
    qp_flags: R.CreateQpFlags.FORCE_COMPLETION | R.CreateQpFlags.RESERVED_LKEY_ENABLE | R.CreateQpFlags.FR_PMR_ENABLED,
  };
}

/** MODIFY_QP of QP 1 with these fields; its CREQ status. */
function modifyQp1(q: TestCmdq, values: Record<string, number>): number {
  return modify(q, { opcode: O.MODIFY_QP, qp_cid: 1, ...values })[1]!;
}

function gsiToRts(q: TestCmdq): number[] {
  return [
    modifyQp1(q, { modify_mask: 0x19, new_state: S.INIT, pkey: 0xffff, qkey: IB_QP1_QKEY }),
    // sgid_index: the hw id of the kernel's GID entry 0, which may not be in the table yet (0xffff).
    modifyQp1(q, { modify_mask: 0x1081, new_state: S.RTR, path_mtu: R.PathMtu.MTU_1024, sgid_index: 0xffff }),
    modifyQp1(q, { modify_mask: 0x80001, new_state: S.RTS, sq_psn: 0 }),
  ];
}

t.test('CREATE_QP of type GSI: QP 1, a UD QP without PSN area or read queues; one per function', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  const e = q.call(R.CmdqCreateQp, gsiValues(rig, cq));
  t.equal(e[1], 0, 'accepted');
  t.equal(creqXid(e), 1, 'the GSI QP is QP 1');
  const qp = rig.model.roce.qp(1)!;
  t.equal(qp.service, 'gsi');
  t.same([qp.sq.entries, qp.sq.entryBytes, qp.rq.entries, qp.sqSge, qp.rqSge], [SQ_WQES, 128, RQ_WQES, 2, 6]);
  t.equal(q.call(R.CmdqCreateQp, gsiValues(rig, cq))[1], R.RoceStatus.RESOURCES, 'a second GSI QP is refused');
  t.equal(makeQp(q, cq, cq), 2, 'RC QPs still start at 2');
  t.equal(q.call(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: 1 })[1], 0, 'DESTROY_QP of QP 1');
  t.equal(creqXid(q.call(R.CmdqCreateQp, gsiValues(rig, cq))), 1, 'and it can be created again');
  const short = { ...gsiValues(rig, cq), sq_pbl: rig.alloc(SQ_WQES * 128 - 4096).iova };
  t.equal(q.call(R.CmdqDestroyQp, { opcode: O.DESTROY_QP, qp_cid: 1 })[1], 0);
  const I = R.RoceStatus.INVALID_PARAMETER;
  t.equal(q.call(R.CmdqCreateQp, short)[1], I, 'an SQ smaller than sq_size x 128 B is refused');
  t.equal(q.call(R.CmdqCreateQp, { ...gsiValues(rig, cq), rcq_cid: 99 })[1], I, 'so is a missing CQ');
  t.equal(q.call(R.CmdqCreateQp, { ...gsiValues(rig, cq), type: R.QpType.UD })[1], R.RoceStatus.NOT_IMPLEMENTED,
    'a UD QP is not modelled');
});

t.test('MODIFY_QP walks QP1 to RTS with the masks ib_mad and bnxt_re send; QUERY_QP reports it', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  t.equal(q.call(R.CmdqCreateQp, gsiValues(rig, cq))[1], 0);
  t.same(gsiToRts(q), [0, 0, 0], 'RESET -> INIT (0x19), INIT -> RTR (0x1081), RTR -> RTS (0x80001)');
  const qp = rig.model.roce.qp(1)!;
  t.equal(qp.state, S.RTS);
  const sb = rig.alloc(4096);
  t.equal(q.call(R.CmdqQueryQp, { opcode: O.QUERY_QP, qp_cid: 1, resp_size: 7, resp_addr: sb.iova })[1], 0);
  t.equal(sb.view.getUint32(8, true), 1, 'xid @8');
  t.equal(sb.bytes[12]! & 0xf, S.RTS, 'state @12');
  t.equal(sb.view.getUint32(16, true), IB_QP1_QKEY, 'qkey @16');
});

t.test('MODIFY_QP refuses what a UD QP cannot take: missing Q_Key or SQ PSN, connected-QP attributes', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  t.equal(q.call(R.CmdqCreateQp, gsiValues(rig, cq))[1], 0);
  const P = R.RoceStatus.INVALID_PARAMETER;
  t.equal(modifyQp1(q, { modify_mask: 0x09, new_state: S.INIT, pkey: 0xffff }), P, 'INIT without QKEY');
  t.equal(modifyQp1(q, { modify_mask: 0x1d, new_state: S.INIT, pkey: 0xffff, qkey: IB_QP1_QKEY }), P,
    'INIT with ACCESS (RC only)');
  t.equal(modifyQp1(q, { modify_mask: 0x19, new_state: S.INIT, pkey: 0xffff, qkey: IB_QP1_QKEY }), 0);
  t.equal(modifyQp1(q, { modify_mask: 0x4001081, new_state: S.RTR, dest_qp_id: 5 }), P, 'RTR with DEST_QP_ID');
  t.equal(modifyQp1(q, { modify_mask: 0x1081, new_state: S.RTR }), 0);
  t.equal(modifyQp1(q, { modify_mask: 0x1, new_state: S.RTS }), P, 'RTS without SQ_PSN');
  t.equal(rig.model.roce.qp(1)!.state, S.RTR, 'refusals changed nothing');
});

t.test('the engine leaves QP1 alone: its doorbells are counted, not run', async (t) => {
  const { q, rig } = openRoce();
  const cq = makeCq(q).id;
  t.equal(q.call(R.CmdqCreateQp, gsiValues(rig, cq))[1], 0);
  gsiToRts(q);
  const before = rig.model.engine.controls.counters();
  // RQ producer 8 (the first receives ib_mad posts), then an SQ doorbell: xid 1, path RoCE, valid.
  rig.bar2Doorbell64(0x11000, R.doorbellLo(8 * 8, 0), R.doorbellHi(1, R.DbcType.RQ));
  rig.bar2Doorbell64(0x11000, R.doorbellLo(8, 0), R.doorbellHi(1, R.DbcType.SQ));
  rig.run();
  const after = rig.model.engine.controls.counters();
  t.equal(after.gsiDoorbells - before.gsiDoorbells, 2);
  t.equal(after.doorbellsRejected, before.doorbellsRejected, 'none is taken for a driver error');
  t.equal(after.framesSent, before.framesSent, 'nothing is sent for QP1');
});
