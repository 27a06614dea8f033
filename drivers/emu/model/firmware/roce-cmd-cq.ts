/**
 * CREATE_CQ and DESTROY_CQ (roce_hsi.h cmdq_create_cq, cmdq_destroy_cq; Linux bnxt_re qplib_fp.c
 * bnxt_qplib_create_cq, bnxt_qplib_destroy_cq). A CQ is a ring of 32-byte CQEs
 * resolved through its PBL at create, notifying the NQ named by cnq_id. A CQ a live QP
 * sends or receives into cannot be destroyed: QPs go first.
 */
import {
  CmdqCreateCq, CmdqDestroyCq, CreqCreateCqResp, CreqDestroyCqResp, RoceStatus,
} from '../../../../firmware-hwrm/roce/index.ts';
import { EmuCq } from '../objects.ts';
import { handleHalves, refuse, success, type Answer, type RoceContext } from './roce-answer.ts';
import { resolveRing } from './roce-memory.ts';

export const CQE_BYTES = 32;

export function createCq(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqCreateCq.decode(cmd);
  const { state, bus, fn } = ctx;
  const limits = ctx.limits();
  const P = RoceStatus.INVALID_PARAMETER;
  // A CQ of max_cqe + 1 entries is what Linux bnxt_re hands the chip for a consumer asking
  // max_cqe CQEs (ib_verbs.c bnxt_re_create_cq: entries capped at max_cq_wqes + 1), so firmware
  // takes that many; one more is beyond the reported limit and refused (docs/hardware.md).
  if (c.cq_size < 1 || c.cq_size > limits.maxCqe + 1)
    return refuse(P, `CREATE_CQ: cq_size ${c.cq_size} is not in 1..max_cqe + 1 (max_cqe ${limits.maxCqe})`);
  if (c.dpi >= limits.maxDpi) return refuse(P, `CREATE_CQ: dpi ${c.dpi} is not below ${limits.maxDpi}`);
  if (!fn.rings.has(c.cnq_id) || c.cnq_id === ctx.creqRingId)
    return refuse(P, `CREATE_CQ: cnq_id ${c.cnq_id} is no NQ ring`);
  const ring = resolveRing(bus.iommu, c.pbl, c.lvl, c.pg_size, c.cq_size, CQE_BYTES, c.cq_size * CQE_BYTES);
  if (!ring)
    return refuse(
      P, `CREATE_CQ: the ring at 0x${c.pbl.toString(16)} (level ${c.lvl}, page code ${c.pg_size}) is not mapped`,
    );
  const id = state.cqIds.alloc(limits.maxCq);
  if (id === undefined) return refuse(RoceStatus.RESOURCES, `CREATE_CQ: all ${limits.maxCq} CQs are in use`);
  const [lo, hi] = handleHalves(c.cq_handle);
  state.cqs.set(id, { cq: new EmuCq(id, lo, hi, ring, c.cnq_id), cnqEvents: 0 });
  return success(CreqCreateCqResp.encode({ xid: id }));
}

export function destroyCq(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqDestroyCq.decode(cmd);
  const { state } = ctx;
  const entry = state.cqs.get(c.cq_cid);
  if (!entry) return refuse(RoceStatus.INVALID_PARAMETER, `DESTROY_CQ: no CQ ${c.cq_cid}`);
  for (const { qp } of state.qps.values()) {
    if (qp.scq === entry.cq || qp.rcq === entry.cq)
      return refuse(RoceStatus.FAIL, `DESTROY_CQ: QP ${qp.qpn} still uses CQ ${c.cq_cid}`);
  }
  entry.cq.destroyed = true;
  entry.cq.armed = false;
  state.cqs.delete(c.cq_cid);
  state.cqIds.free(c.cq_cid);
  // cq_arm_lvl is reported as 0 (its encoding is not documented); total_cnq_events counts what was written.
  return success(CreqDestroyCqResp.encode({ xid: c.cq_cid, total_cnq_events: entry.cnqEvents & 0xffff }));
}
