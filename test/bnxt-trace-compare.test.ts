// The command-by-command comparison of two device traces (scripts/bnxt-guest/compare-trace.ts),
// on hand-made records: what it sorts into which step, and each kind of difference it reports.
import t from 'tap';
import { commands, compareTraces } from '../scripts/bnxt-guest/compare-trace.ts';
import type { TraceRecord } from '../firmware-hwrm/trace.ts';

let clock = 0;
type Fields = Record<string, number | string>;
const req = (ch: 'hwrm' | 'cmdq', name: string, fields: Fields = {}): TraceRecord => ({
  t: clock++, ch, dir: 'req', name, fields,
});
const resp = (ch: 'hwrm' | 'creq', name: string, fields: Fields = {}): TraceRecord => ({
  t: clock++, ch, dir: 'resp', name, fields,
});

/** A kernel-like trace: rings, RoCE init, one GSI and one RC QP, an L2 NQ after the CMDQ started. */
function kernelLike(): TraceRecord[] {
  return [
    req('hwrm', 'HWRM_VER_GET', { hwrm_intf_maj: 1, seq_id: 0 }), resp('hwrm', 'HWRM_VER_GET'),
    req('hwrm', 'HWRM_FUNC_DRV_RGTR', { enables: 0x1b, seq_id: 1 }), resp('hwrm', 'HWRM_FUNC_DRV_RGTR'),
    req('hwrm', 'HWRM_RING_ALLOC', { ring_type: 5 }), resp('hwrm', 'HWRM_RING_ALLOC', { ring_id: 7 }),
    req('hwrm', 'HWRM_STAT_CTX_ALLOC', { stat_ctx_flags: 1 }), resp('hwrm', 'HWRM_STAT_CTX_ALLOC', { stat_ctx_id: 3 }),
    req('cmdq', 'INITIALIZE_FW', { flags: 0 }), resp('creq', 'INITIALIZE_FW', { status: 0 }),
    req('hwrm', 'HWRM_RING_ALLOC', { ring_type: 5 }), resp('hwrm', 'HWRM_RING_ALLOC', { ring_id: 8 }),
    req('hwrm', 'HWRM_VNIC_ALLOC'), resp('hwrm', 'HWRM_VNIC_ALLOC'),
    req('cmdq', 'CREATE_CQ', { cnq_id: 7, cq_handle: '0x1' }), resp('creq', 'CREATE_CQ', { status: 0, xid: 1 }),
    req('cmdq', 'CREATE_QP', { type: 7, scq_cid: 1, rcq_cid: 1 }), resp('creq', 'CREATE_QP', { status: 0, xid: 1 }),
    req('cmdq', 'MODIFY_QP', { qp_cid: 1, modify_mask: 0x19, new_state: 1 }), resp('creq', 'MODIFY_QP', { status: 0 }),
    req('cmdq', 'CREATE_CQ', { cnq_id: 7 }), resp('creq', 'CREATE_CQ', { status: 0, xid: 2 }),
    req('cmdq', 'CREATE_QP', { type: 2, qp_flags: 0xc, scq_cid: 2, rcq_cid: 2, sq_size: 130 }),
    resp('creq', 'CREATE_QP', { status: 0, xid: 2 }),
    req('cmdq', 'MODIFY_QP', { qp_cid: 2, modify_mask: 0xd, new_state: 1, access: 7 }),
    resp('creq', 'MODIFY_QP', { status: 0 }),
    req('hwrm', 'HWRM_STAT_CTX_FREE', { stat_ctx_id: 3 }), resp('hwrm', 'HWRM_STAT_CTX_FREE'),
  ];
}

t.test('requests are sorted into steps by what they are', async (t) => {
  const c = commands(kernelLike()).map((x) => `${x.step} ${x.key}`);
  t.same(c, [
    'bring-up HWRM_VER_GET', 'bring-up HWRM_FUNC_DRV_RGTR',
    'roce-init HWRM_RING_ALLOC(NQ)', 'roce-init HWRM_STAT_CTX_ALLOC(ROCE)', 'roce-init INITIALIZE_FW',
    'l2 HWRM_RING_ALLOC(NQ)', 'l2 HWRM_VNIC_ALLOC',
    'gsi CREATE_CQ', 'gsi CREATE_QP(GSI)', 'gsi MODIFY_QP(GSI ->INIT)',
    'qp CREATE_CQ', 'qp CREATE_QP(RC)', 'qp MODIFY_QP(RC ->INIT)',
    'roce-init HWRM_STAT_CTX_FREE(ROCE)',
  ], 'an NQ before the first RoCE command is the RoCE function\'s, one after it that no CQ uses is L2; '
    + 'QP1\'s CQ goes with it');
});

t.test('differences: commands one side sends, order, fields (not the ones naming memory or objects)', async (t) => {
  const rig: TraceRecord[] = [
    req('hwrm', 'HWRM_VER_GET', { hwrm_intf_maj: 1, seq_id: 9 }), resp('hwrm', 'HWRM_VER_GET'),
    req('hwrm', 'HWRM_STAT_CTX_ALLOC', { stat_ctx_flags: 1 }), resp('hwrm', 'HWRM_STAT_CTX_ALLOC', { stat_ctx_id: 1 }),
    req('hwrm', 'HWRM_RING_ALLOC', { ring_type: 5 }), resp('hwrm', 'HWRM_RING_ALLOC', { ring_id: 1 }),
    req('cmdq', 'INITIALIZE_FW', { flags: 0 }), resp('creq', 'INITIALIZE_FW', { status: 0 }),
    req('hwrm', 'HWRM_FUNC_DRV_UNRGTR'), resp('hwrm', 'HWRM_FUNC_DRV_UNRGTR'),
    req('cmdq', 'CREATE_CQ', { cnq_id: 1 }), resp('creq', 'CREATE_CQ', { status: 0, xid: 1 }),
    req('cmdq', 'CREATE_QP', { type: 2, qp_flags: 0xe, scq_cid: 1, rcq_cid: 1, sq_size: 4096 }),
    resp('creq', 'CREATE_QP', { status: 0, xid: 2 }),
    req('cmdq', 'MODIFY_QP', { qp_cid: 2, modify_mask: 0xd, new_state: 1, access: 1 }),
    resp('creq', 'MODIFY_QP', { status: 0 }),
    req('hwrm', 'HWRM_STAT_CTX_FREE', { stat_ctx_id: 1 }), resp('hwrm', 'HWRM_STAT_CTX_FREE'),
  ];
  t.same(compareTraces(kernelLike(), rig), [
    'bring-up: only the kernel sends HWRM_FUNC_DRV_RGTR',
    'bring-up: only rig-bnxt sends HWRM_FUNC_DRV_UNRGTR',
    'roce-init: order: the kernel HWRM_RING_ALLOC(NQ), HWRM_STAT_CTX_ALLOC(ROCE), INITIALIZE_FW, '
      + 'HWRM_STAT_CTX_FREE(ROCE); rig-bnxt HWRM_STAT_CTX_ALLOC(ROCE), HWRM_RING_ALLOC(NQ), INITIALIZE_FW, '
      + 'HWRM_STAT_CTX_FREE(ROCE)',
    'qp: CREATE_QP(RC) qp_flags: the kernel 0xc, rig-bnxt 0xe',
    'qp: MODIFY_QP(RC ->INIT) access: the kernel 0x7, rig-bnxt 0x1',
    'gsi: only the kernel sends CREATE_CQ', 'gsi: only the kernel sends CREATE_QP(GSI)',
    'gsi: only the kernel sends MODIFY_QP(GSI ->INIT)',
    'l2: only the kernel sends HWRM_RING_ALLOC(NQ)', 'l2: only the kernel sends HWRM_VNIC_ALLOC',
  ], 'seq_id, sq_size, ids and handles are not compared; '
    + 'the rig NQ after INITIALIZE_FW is RoCE\'s because a CQ uses it');
  t.same(compareTraces(kernelLike(), kernelLike()), [], 'a trace against itself: nothing');
});
