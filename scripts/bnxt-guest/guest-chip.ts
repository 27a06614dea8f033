/**
 * The chips the bnxt guest's software NIC is served as, for the kernel run (run.ts) and for
 * rig-bnxt's own run it is compared with (own-trace.ts, which takes the same chip): the two traces
 * only compare if both drivers met the same chip. Linux 6.12's bnxt_en and bnxt_re drive both:
 * the BCM57508 (P5: context memory V1, static WQEs) and the BCM57608 (P7: context memory V2, the
 * P7 doorbell offsets, variable-size WQEs, the MSN table).
 */
export const BNXT_GUEST_CHIPS = ['BCM57608', 'BCM57508'] as const;
export type BnxtGuestChip = (typeof BNXT_GUEST_CHIPS)[number];
/** The chip run.ts serves when not told (the software NIC's default chip). */
export const BNXT_GUEST_CHIP: BnxtGuestChip = 'BCM57608';
