/**
 * The chip the bnxt guest's software NIC is, for the kernel run (run.ts) and for rig-bnxt's own
 * run it is compared with (own-trace.ts): the two traces only compare if both drivers met the same
 * chip. A BCM57508 (P5): Linux's P7 paths (context memory V2, the P7 doorbells) have not been run
 * against the model.
 */
export const BNXT_GUEST_CHIP = 'BCM57508';
