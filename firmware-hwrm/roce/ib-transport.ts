/**
 * InfiniBand transport facts that the driver, the software NIC's firmware and its port all
 * rely on, kept once: the path MTUs, the path MTU an Ethernet MTU carries, 24-bit PSN
 * arithmetic and the longest message. Pure numbers, no I/O.
 */

/** IBA 9.7.1: PSNs are 24 bits and wrap. */
export const PSN_MASK = 0xffffff;

/** (psn + n) mod 2^24 (n may be negative). */
export function psnAdd(psn: number, n: number): number {
  return (psn + n) & PSN_MASK;
}

/**
 * Signed distance a - b in PSN space, in [-2^23, 2^23): IBA 9.7.2 compares PSNs in a window
 * of half the space, so "a is behind b" means psnDiff(a, b) < 0.
 */
export function psnDiff(a: number, b: number): number {
  return ((a - b) << 8) >> 8;
}

/**
 * Packets a message of `lengthBytes` (a 32-bit length: 0..2^32 - 1) takes at a path MTU of
 * 2^mtuShift bytes: ceil(length / MTU), and at least one (a zero-length message, a READ). By a
 * shift, as the driver's post computes it per send and the model per WQE and READ:
 * ceil(n / m) = floor((n - 1) / m) + 1 for n >= 1, exact in 32 bits (no n + m - 1 to overflow).
 */
export function psnPacketsByShift(lengthBytes: number, mtuShift: number): number {
  return lengthBytes === 0 ? 1 : ((lengthBytes - 1) >>> mtuShift) + 1;
}

/** Packets a message of `lengthBytes` takes at the path MTU `mtuBytes` (a power of two): psnPacketsByShift. */
export function psnPackets(lengthBytes: number, mtuBytes: number): number {
  return psnPacketsByShift(lengthBytes, 31 - Math.clz32(mtuBytes));
}

/** IBA 9.4.1: a message is at most 2^31 bytes (the kernel's bnxt_re refuses longer WQEs too). */
export const MAX_MESSAGE_BYTES = 2 ** 31;

/** IBA path MTUs (enum ib_mtu 1..5 in ib_verbs.h), smallest first. */
export const IB_MTUS: readonly number[] = [256, 512, 1024, 2048, 4096];

export function isIbMtu(bytes: number): boolean {
  return IB_MTUS.includes(bytes);
}

// Header sizes as include/rdma/ib_pack.h names them (IB_*_BYTES).
export const GRH_BYTES = 40;
export const UDP_HEADER_BYTES = 8;
export const BTH_BYTES = 12;
export const XRC_ETH_BYTES = 4;
export const ATOMIC_ETH_BYTES = 28;
export const ICRC_BYTES = 4;

/**
 * Bytes of an Ethernet MTU that RoCE headers may take, as the Linux RoCE stack counts them
 * (include/rdma/ib_addr.h iboe_get_mtu): GRH 40 + UDP 8 + BTH 12 + XRCETH 4 + AtomicETH 28 +
 * ICRC 4 = 96. The tightest RoCEv2-over-IPv4 bound is 64 (IPv4 20 + UDP 8 + BTH 12 + RETH 16 +
 * ImmDt 4 + ICRC 4, RDMA WRITE Only with Immediate); the kernel's larger allowance is kept so
 * that both ends of a connection pick the same path MTU (docs/hardware.md, "Path MTU").
 */
export const ROCE_HEADROOM_BYTES = GRH_BYTES + UDP_HEADER_BYTES + BTH_BYTES + XRC_ETH_BYTES + ATOMIC_ETH_BYTES +
  ICRC_BYTES;

/**
 * The largest path MTU an Ethernet MTU carries (1500 gives 1024, 9000 gives 4096), or 256 if
 * not even that fits (an Ethernet MTU below 352; NICs open with 576 or more).
 */
export function pathMtuFor(ethernetMtu: number): number {
  const room = ethernetMtu - ROCE_HEADROOM_BYTES;
  for (let i = IB_MTUS.length - 1; i > 0; i--) if (IB_MTUS[i]! <= room) return IB_MTUS[i]!;
  return IB_MTUS[0]!;
}
