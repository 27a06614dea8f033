/**
 * MSI-X for the rings bnxt_re polls from its interrupt handlers: the CREQ and the CQ
 * notification queues (NQ-type rings from HWRM RING_ALLOC, the vector being the ring's
 * logical_id: Linux bnxt_re main.c sets lrid to the MSI-X entry's ring_idx). The RoCE firmware
 * and engine write those rings themselves; this watches the driver's NQ and NQ_ARM doorbells
 * (RoCE path) and, while a ring is armed, fires its vector once as soon as the entry at the
 * driver's consumer position is valid for its pass (creq_base.v and nq_base's V are bit 0 of
 * byte 8; the valid bit is 1 on the first pass: CREQ_CMP_VALID, NQE_CMP_VALID in bnxt_re).
 */
import type { Iommu } from '../../model/iommu.ts';
import type { FunctionResources } from '../../model/firmware/function-resources.ts';
import { RING_ALLOC_REQ_INT_MODE } from '../../../../firmware-hwrm/hwrm/ring.ts';
import { elementAddress } from '../../model/l2/ring-address.ts';

const DBC_PATH_ROCE = 0;
const DBC_TYPE_NQ = 0xa;
const DBC_TYPE_NQ_ARM = 0xb;

interface Watched {
  /** The driver's consumer, free-running (position plus passes). */
  consumer: number;
  armed: boolean;
}

export class RoceInterrupts {
  private readonly watched = new Map<number, Watched>();
  fired = 0;

  constructor(
    private readonly iommu: Iommu,
    private readonly fn: FunctionResources,
    private readonly raise: (vector: number) => boolean,
  ) {}

  /** A function reset: the rings are gone, so are their arming and positions. */
  reset(): void {
    this.watched.clear();
  }

  /** Sees every 64-bit doorbell before the engine takes it. */
  doorbell(lo: number, hi: number): void {
    if (((hi >>> 24) & 3) !== DBC_PATH_ROCE) return;
    const type = hi >>> 28;
    if (type !== DBC_TYPE_NQ && type !== DBC_TYPE_NQ_ARM) return;
    const xid = hi & 0xfffff;
    const ring = this.fn.rings.get(xid);
    if (!ring) return;
    const index = lo & 0xffffff;
    if (index >= ring.length) return;
    let w = this.watched.get(xid);
    if (!w) { w = { consumer: 0, armed: false }; this.watched.set(xid, w); }
    // Move the free-running consumer forward to the named position.
    const position = w.consumer % ring.length;
    w.consumer += (index - position + ring.length) % ring.length;
    if (type === DBC_TYPE_NQ_ARM) w.armed = true;
  }

  /** After the model ran: fire every armed ring whose next entry is there. */
  check(): void {
    for (const [xid, w] of this.watched) {
      if (!w.armed) continue;
      const ring = this.fn.rings.get(xid);
      if (!ring) { this.watched.delete(xid); continue; }
      const at = elementAddress(this.iommu, ring, w.consumer);
      if (at < 0 || !this.iommu.check(at + 8, 1)) continue;
      const pass = Math.floor(w.consumer / ring.length);
      const valid = (this.iommu.read8(at + 8) & 1) === ((pass & 1) === 0 ? 1 : 0);
      if (!valid) continue;
      w.armed = false;
      if (ring.intMode !== RING_ALLOC_REQ_INT_MODE.POLL && this.raise(ring.logicalId)) this.fired++;
    }
  }
}
