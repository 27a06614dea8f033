/**
 * Memory keys and regions (roce_hsi.h cmdq_allocate_mrw, cmdq_register_mr; Linux bnxt_re qplib_sp.c
 * bnxt_qplib_alloc_mrw, bnxt_qplib_reg_mr, bnxt_qplib_dereg_mrw, bnxt_qplib_free_mrw):
 * ALLOCATE_MRW, REGISTER_MR, DEREGISTER_MR, DEALLOCATE_KEY.
 *
 *   classic: ALLOCATE_MRW(MR/PMR) -> key; REGISTER_MR(key) binds pages; DEREGISTER_MR
 *            unbinds them (the key stays, for re-registration); DEALLOCATE_KEY frees it.
 *   unified: REGISTER_MR(ALLOC_MR, key = pd) -> new key with pages, only where the firmware
 *            offers it (QUERY_FUNC MR_REGISTER_ALLOC; firmware/personality.ts); elsewhere the
 *            key field is read as a key, and a PD id names none. DEREGISTER_MR unbinds the
 *            pages as for a classic key: only DEALLOCATE_KEY frees a key, which is how Linux
 *            frees every MR (ib_verbs.c bnxt_re_dereg_mr -> qplib_sp.c bnxt_qplib_free_mrw), so a
 *            driver that only deregisters leaks a key per region until DEINITIALIZE_FW refuses.
 *            The public sources do not say what DEREGISTER_MR does to a unified key: this is the
 *            stricter reading (docs/hardware.md).
 */
import {
  CmdqAllocateMrw, CmdqDeallocateKey, CmdqDeregisterMr, CmdqRegisterMr, CreqAllocateMrwResp, CreqDeallocateKeyResp,
  CreqDeregisterMrResp, CreqRegisterMrResp, DevCapFlags, MR_SIZE_ALL, MrwType, RegisterMrFlags, RoceStatus,
} from '../../../../firmware-hwrm/roce/index.ts';
import { EmuMr, type PagedMemory } from '../objects.ts';
import { refuse, success, type Answer, type RoceContext } from './roce-answer.ts';
import { IdentityMemory, resolveRegion } from './roce-memory.ts';
import type { FwKey } from './roce-tables.ts';

const MIN_LOG2_PAGE = 12;
const MAX_LOG2_PAGE = 30;

export function allocateMrw(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqAllocateMrw.decode(cmd);
  const type = c.mrw_flags;
  if (type === MrwType.MW_TYPE1 || type === MrwType.MW_TYPE2A || type === MrwType.MW_TYPE2B) {
    return refuse(RoceStatus.NOT_IMPLEMENTED, 'ALLOCATE_MRW: memory windows are not modelled');
  }
  if (type !== MrwType.MR && type !== MrwType.PMR)
    return refuse(RoceStatus.INVALID_PARAMETER, `ALLOCATE_MRW: type ${type} is unknown`);
  const key = allocKey(ctx, type, c.pd_id, false);
  if (key === undefined) return refuse(RoceStatus.RESOURCES, `ALLOCATE_MRW: all ${ctx.limits().maxMr} keys are in use`);
  return success(CreqAllocateMrwResp.encode({ xid: key.key }));
}

export function registerMr(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqRegisterMr.decode(cmd);
  const P = RoceStatus.INVALID_PARAMETER;
  const unified = (c.flags & RegisterMrFlags.ALLOC_MR) !== 0;
  if (unified && (ctx.firmware.devCapFlags & DevCapFlags.MR_REGISTER_ALLOC) === 0) {
    return refuse(
      P,
      `REGISTER_MR: this firmware has no ALLOC_MR (QUERY_FUNC MR_REGISTER_ALLOC is clear), so key ` +
        `0x${c.key.toString(16)} is read as a key, and it names none`,
    );
  }
  const existing = unified ? undefined : ctx.state.keys.get(c.key);
  if (!unified) {
    if (!existing) return refuse(P, `REGISTER_MR: no key 0x${c.key.toString(16)}`);
    if (existing.mr) return refuse(P, `REGISTER_MR: key 0x${c.key.toString(16)} is already registered`);
  }
  if (c.log2_pg_size < MIN_LOG2_PAGE || c.log2_pg_size > MAX_LOG2_PAGE)
    return refuse(P, `REGISTER_MR: log2 page size ${c.log2_pg_size} is not in 12..30`);
  if (c.lvl > 2) return refuse(P, `REGISTER_MR: PBL level ${c.lvl}`);
  const pageBytes = 2 ** c.log2_pg_size;
  let length: number;
  let memory: PagedMemory;
  if (c.mr_size === MR_SIZE_ALL) {
    // The DMA MR: no page list, bus addresses used as they are.
    if (c.lvl !== 0 || c.pbl !== 0 || c.va !== 0)
      return refuse(P, 'REGISTER_MR: a region of all-ones size must have level 0, pbl 0 and va 0');
    length = Number.MAX_SAFE_INTEGER;
    memory = new IdentityMemory(pageBytes);
  } else {
    const max = ctx.limits().maxMrSizeBytes;
    if (c.mr_size > BigInt(max)) return refuse(P, `REGISTER_MR: mr_size ${c.mr_size} is over ${max}`);
    length = Number(c.mr_size);
    const region = resolveRegion(ctx.bus.iommu, c.pbl, c.lvl, pageBytes, c.va, length);
    if (!region)
      return refuse(P, `REGISTER_MR: the page list at 0x${c.pbl.toString(16)} (level ${c.lvl}) names unmapped memory`);
    memory = region;
  }
  const key = existing ?? allocKey(ctx, MrwType.MR, c.key, true);
  if (!key) return refuse(RoceStatus.RESOURCES, `REGISTER_MR: all ${ctx.limits().maxMr} keys are in use`);
  key.mr = new EmuMr(key.key, key.pd, c.va, length, c.access, memory);
  return success(CreqRegisterMrResp.encode({ xid: key.key }));
}

export function deregisterMr(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqDeregisterMr.decode(cmd);
  const key = ctx.state.keys.get(c.lkey);
  if (!key || !key.mr)
    return refuse(RoceStatus.INVALID_PARAMETER, `DEREGISTER_MR: no region with key 0x${c.lkey.toString(16)}`);
  unbindRegion(key); // the key stays until DEALLOCATE_KEY, unified or not
  return success(CreqDeregisterMrResp.encode({ xid: c.lkey }));
}

export function deallocateKey(ctx: RoceContext, cmd: Uint8Array): Answer {
  const c = CmdqDeallocateKey.decode(cmd);
  const key = ctx.state.keys.get(c.key);
  // mrw_flags names the key's type; REGISTER_MR carries none, so it is not checked against it.
  if (!key) return refuse(RoceStatus.INVALID_PARAMETER, `DEALLOCATE_KEY: no key 0x${c.key.toString(16)}`);
  unbindRegion(key);
  freeKey(ctx, key);
  return success(CreqDeallocateKeyResp.encode({ xid: c.key }));
}

/**
 * The key no longer names its region (if it had one): the region is marked unbound (EmuMr.bound),
 * so the engine refuses the next access of it through a list or RETH it still holds.
 */
export function unbindRegion(key: FwKey): void {
  if (key.mr !== undefined) key.mr.bound = false;
  key.mr = undefined;
}

function allocKey(ctx: RoceContext, type: number, pd: number, unified: boolean): FwKey | undefined {
  const k = ctx.state.keyPool.alloc(ctx.limits().maxMr);
  if (k === undefined) return undefined;
  const key: FwKey = { key: k, type, pd, unified, mr: undefined };
  ctx.state.keys.set(k, key);
  return key;
}

function freeKey(ctx: RoceContext, key: FwKey): void {
  ctx.state.keys.delete(key.key);
  ctx.state.keyPool.free(key.key);
}
