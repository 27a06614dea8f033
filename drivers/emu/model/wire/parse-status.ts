/**
 * What parseFrame says about a frame: OK, or the first reason it is not a RoCEv2 packet this
 * port takes. Numbers, so the receive path returns them without allocating; PARSE_STATUS_NAMES
 * turns them into text for traces and counters.
 */
export const ParseStatus = {
  OK: 0,
  /** The frame ends before a header, or before the end the IPv4 total length gives. */
  TRUNCATED: 1,
  /** Destination MAC is not the port's. */
  WRONG_DEST_MAC: 2,
  /** EtherType is not IPv4 (0x0800), or the IP version is not 4. */
  NOT_IPV4: 3,
  /** IHL is not 5 (options are not taken) or the total length is below IPv4 + UDP. */
  BAD_IP_HEADER: 4,
  BAD_IP_CHECKSUM: 5,
  /** More-fragments set or a fragment offset: RoCEv2 packets are never fragmented. */
  IP_FRAGMENT: 6,
  NOT_UDP: 7,
  /** UDP length disagrees with the IPv4 total length. */
  BAD_UDP_LENGTH: 8,
  NOT_ROCEV2_PORT: 9,
  /** UDP payload too short for BTH + ICRC, or not a multiple of 4 bytes, or shorter than the opcode's headers. */
  BAD_LENGTH: 10,
  BAD_ICRC: 11,
  /** BTH transport header version is not 0. */
  BAD_TVER: 12,
  /** Not an RC opcode this engine knows. */
  UNKNOWN_OPCODE: 13,
  /** Pad count larger than the payload space, or nonzero on an opcode without payload. */
  BAD_PAD: 14,
  /** Payload bytes on an opcode that carries none (READ request, ACK, atomics). */
  UNEXPECTED_PAYLOAD: 15,
} as const;

export type ParseStatusCode = (typeof ParseStatus)[keyof typeof ParseStatus];

/** PARSE_STATUS_NAMES[code] = 'BAD_ICRC' etc. */
export const PARSE_STATUS_NAMES: readonly string[] = (() => {
  const names: string[] = [];
  for (const [name, code] of Object.entries(ParseStatus)) names[code] = name;
  return names;
})();

export const PARSE_STATUS_COUNT = PARSE_STATUS_NAMES.length;

export function parseStatusName(code: number): string {
  return PARSE_STATUS_NAMES[code] ?? `UNKNOWN_STATUS_${code}`;
}
