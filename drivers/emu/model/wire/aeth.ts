/**
 * The AETH syndrome byte (IBA 9.3.5, Table 43): the top three bits say what kind of
 * acknowledgement it is, the low five carry the credit count, the RNR timer code or the
 * NAK code.
 *
 *   0b000ccccc  ACK with credit count c (0x1F: credits not tracked, what rxe sends)
 *   0b001ttttt  RNR NAK with RNR timer code t
 *   0b010xxxxx  reserved
 *   0b011nnnnn  NAK with code n
 */

export const AethKind = { ACK: 0, RNR_NAK: 1, RESERVED: 2, NAK: 3 } as const;
const KIND_NAMES = ['ACK', 'RNR_NAK', 'RESERVED', 'NAK'] as const;

/** NAK codes (IBA Table 44). */
export const NakCode = {
  PSN_SEQUENCE_ERROR: 0,
  INVALID_REQUEST: 1,
  REMOTE_ACCESS_ERROR: 2,
  REMOTE_OPERATIONAL_ERROR: 3,
  INVALID_RD_REQUEST: 4,
} as const;
const NAK_NAMES = [
  'PSN_SEQUENCE_ERROR', 'INVALID_REQUEST', 'REMOTE_ACCESS_ERROR', 'REMOTE_OPERATIONAL_ERROR', 'INVALID_RD_REQUEST',
];

/** Credit field value that means "no end-to-end credits advertised" (rxe's plain ACK: 0x1F). */
export const AETH_CREDITS_INVALID = 0x1f;
/** The syndrome of a plain ACK as rxe sends it (rxe_hdr.h AETH_ACK_UNLIMITED, used by rxe_resp.c for every ACK). */
export const AETH_SYNDROME_ACK = AETH_CREDITS_INVALID;

export function aethKind(syndrome: number): number {
  return (syndrome >>> 5) & 3;
}

/** The low five bits: credit count, RNR timer code or NAK code. */
export function aethValue(syndrome: number): number {
  return syndrome & 0x1f;
}

export function ackSyndrome(credits: number): number {
  return credits & 0x1f;
}

export function rnrNakSyndrome(timerCode: number): number {
  return 0x20 | (timerCode & 0x1f);
}

export function nakSyndrome(code: number): number {
  return 0x60 | (code & 0x1f);
}

/**
 * Minimum RNR NAK timer in microseconds for each 5-bit code (IBA Table 45). Code 0 is the
 * longest, 655.36 ms. (rxe's table has 61410 for code 25; the specification says 61.44 ms.)
 */
export const RNR_TIMER_US = Uint32Array.from([
  655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
  2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
]);

/** `ACK(credits=31)`, `RNR_NAK(timer=14)`, `NAK(PSN_SEQUENCE_ERROR)` (tracing only: allocates). */
export function aethSyndromeName(syndrome: number): string {
  const kind = aethKind(syndrome);
  const v = aethValue(syndrome);
  switch (kind) {
    case AethKind.ACK: return `ACK(credits=${v})`;
    case AethKind.RNR_NAK: return `RNR_NAK(timer=${v})`;
    case AethKind.NAK: return `NAK(${NAK_NAMES[v] ?? `code=${v}`})`;
    default: return `${KIND_NAMES[kind]}(0x${syndrome.toString(16)})`;
  }
}
