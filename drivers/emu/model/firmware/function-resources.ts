/**
 * What HWRM gave the function and the RoCE firmware builds on: the driver's registration,
 * context memory (FUNC_BACKING_STORE_CFG), the NQ-type rings (RING_ALLOC: the CREQ and the
 * CQ notification queues) and the statistics contexts. HWRM (hwrm.ts) writes it; the RoCE
 * firmware (roce.ts) only reads it, as bnxt_re builds on what bnxt_en set up (Linux
 * drivers/infiniband/hw/bnxt_re/main.c, bnxt_re_dev_init).
 */
import type { BackingStoreState } from './hwrm-backing-store.ts';

export interface NqRing {
  readonly id: number;
  readonly pageTblAddr: number;
  readonly pageTblDepth: number;
  readonly pageSizeLog2: number;
  readonly length: number;
  readonly logicalId: number;
  /**
   * RING_ALLOC int_mode (bnxt_hsi.h RING_ALLOC_REQ_INT_MODE_*): a POLL ring raises no
   * interrupt; its entries are written all the same (iPXE polls its Thor NQ so).
   */
  readonly intMode: number;
}

export interface StatCtx {
  readonly dmaAddr: number;
  /** Allocated with STAT_CTX_ALLOC flags ROCE (a RoCE statistics context). */
  readonly roce: boolean;
}

export class FunctionResources {
  registered = false;
  /** FUNC_DRV_IF_CHANGE: the driver said its interface is up (UP) and not down since. */
  interfaceUp = false;
  backingStore: BackingStoreState | undefined;
  /**
   * VNIC_QCAPS max_aggs_supported: TPA v2 offered, which makes the chip's extended ring
   * statistics block a valid STAT_CTX_ALLOC length. 0 (no TPA) unless a test offers it
   * (hwrm controls.offerTpaV2); a property of the firmware, so FUNC_RESET keeps it.
   */
  tpaV2MaxAggs = 0;
  readonly rings = new Map<number, NqRing>();
  readonly statCtxs = new Map<number, StatCtx>();

  /** FUNC_RESET: nothing a previous owner left stays. */
  clear(): void {
    this.rings.clear();
    this.statCtxs.clear();
    this.registered = false;
    this.interfaceUp = false;
    this.backingStore = undefined;
  }
}

/** What the function's RoCE side must do for HWRM (hwrm.ts): reset with the function, guard its rings. */
export interface RoceOfFunction {
  /** HWRM_FUNC_RESET: every RoCE object, the channel and the initialized state go. */
  reset(): void;
  /** True while RoCE names ring `ringId` (HWRM refuses to free it). */
  usesRing(ringId: number): boolean;
}
