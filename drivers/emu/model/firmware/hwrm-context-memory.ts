/**
 * The context memory commands, in the chip's own form only: FUNC_BACKING_STORE_QCAPS / CFG on a
 * V1 chip (hwrm-backing-store.ts), their V2 forms on a V2 chip (hwrm-backing-store-v2.ts). The
 * other form is a command this firmware does not have (the stricter reading: a V2 chip requires
 * V2, BS_V2_REQUIRED; what a P5 firmware without BS_V2_SUPPORTED answers to QCAPS_V2 is not
 * public).
 */
import * as H from '../../../../firmware-hwrm/hwrm/index.ts';
import type { HwrmCommandName } from '../../../../firmware-hwrm/hwrm/commands.ts';
import type { HwrmContext, HwrmHandler, HwrmHandlers } from './hwrm-handler.ts';
import { answerBackingStoreQcaps, checkBackingStoreCfg } from './hwrm-backing-store.ts';

/** `handler` on a chip whose context memory commands are of `form`; CMD_NOT_SUPPORTED on the other. */
function onlyFor<K extends HwrmCommandName>(form: 'v1' | 'v2', handler: HwrmHandler<K>): HwrmHandler<K> {
  return (ctx: HwrmContext, req) =>
    (ctx.bus.chip.backingStore === 'v2') === (form === 'v2') ? handler(ctx, req)
      : { error: H.HWRM_ERR_CODE.CMD_NOT_SUPPORTED };
}

export const CONTEXT_MEMORY_HANDLERS = {
  FUNC_BACKING_STORE_QCAPS: onlyFor<'FUNC_BACKING_STORE_QCAPS'>('v1', (ctx) => ({
    values: answerBackingStoreQcaps(ctx.tqmOffer),
  })),
  // No registration needed: Linux's bnxt_en configures context memory before it registers
  // (bnxt.c bnxt_fw_init_one_p2: bnxt_hwrm_func_qcaps -> bnxt_alloc_ctx_mem, then
  // bnxt_hwrm_func_drv_rgtr), and was seen doing so over vfio-user (docs/bnxt-en-bringup.md).
  FUNC_BACKING_STORE_CFG: onlyFor<'FUNC_BACKING_STORE_CFG'>('v1', (ctx, req) => {
    const state = checkBackingStoreCfg(req, ctx.bus.iommu, ctx.tqmOffer);
    if (typeof state === 'number') return { error: state };
    ctx.fn.backingStore = state;
    return { values: {} };
  }),
  FUNC_BACKING_STORE_QCAPS_V2: onlyFor<'FUNC_BACKING_STORE_QCAPS_V2'>('v2', (ctx, req) =>
    ctx.backingStoreV2.qcaps(req)),
  // The function has context memory only once BS_CFG_ALL_DONE completed the set.
  FUNC_BACKING_STORE_CFG_V2: onlyFor<'FUNC_BACKING_STORE_CFG_V2'>('v2', (ctx, req) => {
    const a = ctx.backingStoreV2.cfg(req, ctx.bus.iommu);
    if ('state' in a && a.state) ctx.fn.backingStore = a.state;
    return 'error' in a ? a : { values: {} };
  }),
} satisfies HwrmHandlers;
