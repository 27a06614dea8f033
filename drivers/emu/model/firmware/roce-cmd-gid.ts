/**
 * The GID table (roce_hsi.h cmdq_add_gid, creq_add_gid_resp; qplib_sp.c bnxt_qplib_add_sgid): ADD_GID answers the
 * hardware index MODIFY_QP later names as sgid_index; DELETE_GID frees it. The GID and MAC arrive as big-endian words
 * (gidFromWords / macFromWords give wire order back).
 */
import {
  CmdqAddGid, CmdqDeleteGid, CreqAddGidResp, CreqDeleteGidResp, RoceStatus, gidFromWords, macFromWords,
} from '../../../../firmware-hwrm/roce/index.ts';
import { refuse, success, type Answer, type RoceContext } from './roce-answer.ts';

export function addGid(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqAddGid.decode(cmd);
  const gid = gidFromWords(c.gid);
  // An all-zero GID is what an empty table entry holds; it names no address.
  if (gid.every((b) => b === 0)) return refuse(RoceStatus.INVALID_PARAMETER, 'ADD_GID: the GID is all zeros');
  const limits = ctx.limits();
  const index = ctx.state.gidIds.alloc(limits.maxGid);
  if (index === undefined) return refuse(RoceStatus.RESOURCES, `ADD_GID: all ${limits.maxGid} GID entries are in use`);
  ctx.state.gids.set(index, {
    index, gid, mac: macFromWords(c.src_mac), vlanId: c.vlan_id, vlanEn: c.vlan_en, tpid: c.tpid,
  });
  return success(CreqAddGidResp.encode({ xid: index }));
}

export function deleteGid(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqDeleteGid.decode(cmd);
  const { state } = ctx;
  if (!state.gids.has(c.gid_index))
    return refuse(RoceStatus.INVALID_PARAMETER, `DELETE_GID: no GID at index ${c.gid_index}`);
  for (const fq of state.qps.values()) {
    if (fq.usesSgid && fq.qp.sgidIndex === c.gid_index)
      return refuse(RoceStatus.FAIL, `DELETE_GID: QP ${fq.qp.qpn} sends from GID ${c.gid_index}`);
  }
  state.gids.delete(c.gid_index);
  state.gidIds.free(c.gid_index);
  return success(CreqDeleteGidResp.encode({ xid: c.gid_index }));
}
