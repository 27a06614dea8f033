/**
 * What the engine counts: plain numbers bumped on the data path, read (copied into an object)
 * only by the control path. Drops are counted by reason so a test or a trace can say why a
 * frame went nowhere.
 */
import { PARSE_STATUS_COUNT, PARSE_STATUS_NAMES, type ParseStatus } from '../wire/index.ts';

export class EngineCounters {
  framesSent = 0;
  bytesSent = 0;
  framesReceived = 0;
  /**
   * RoCE frames taken without comparing their ICRC: this port's own, handed to its loop cable
   * in memory and delivered as that same buffer (docs/hardware.md, "Frames a port hands to itself").
   */
  icrcTrusted = 0;
  /**
   * Frames sent without their ICRC computed: this port's own, to its own MAC, handed to its loop
   * cable, whose ICRC is written only if something copies them first (docs/hardware.md).
   */
  icrcDeferred = 0;
  /** Frames the parser refused, by ParseStatus (WRONG_DEST_MAC, BAD_ICRC, ...). */
  readonly parseDrops = new Float64Array(PARSE_STATUS_COUNT);
  /** Parsed frames for a QP number no QP has, or has destroyed. */
  dropUnknownQp = 0;
  /** Frames for a QP whose state takes none (RESET, INIT, ERR, or RTR for responses). */
  dropQpNotReady = 0;
  /** BTH P_Key does not match the QP's partition. */
  dropBadPkey = 0;
  /** A connected QP's frame from an address other than its peer's, or to an address other than this port's. */
  dropBadAddress = 0;
  /** Frames from a socket that found the receive queue full. */
  dropReceiveQueueFull = 0;
  /** Responses (ACK, read response) with a PSN nothing outstanding explains. */
  dropUnexpectedResponse = 0;
  /** Responses older than the oldest unacknowledged PSN (duplicates, late ACKs). */
  dropStaleResponse = 0;
  /** Requests ahead of the expected PSN after a NAK was sent (IBA: silently dropped). */
  dropOutOfSequence = 0;
  /** Frames for the GSI QP (QP1): MADs over RoCE are not modelled. */
  dropGsi = 0;
  /**
   * RoCE frames for this port while its function had no L2 receive path for them (no receive
   * filter for its MAC steering to a VNIC in a RoCE mode: firmware/hwrm-l2.ts roceReceivePath).
   */
  dropNoL2Filter = 0;

  // Requester
  packetsSent = 0;
  packetsRetransmitted = 0;
  /** Go-back-N episodes: ACK timeouts, sequence NAKs, implied NAKs. */
  retransmitEvents = 0;
  /**
   * Variable-size WQE SQ doorbells that ended inside a WQE (a wqe_size past the slots posted,
   * or below its 2 header slots): the WQE failed with a format error (doorbells.ts).
   */
  sqFormatErrors = 0;
  /** Go-back-N rewinds found in the driver's MSN table (engine/msn-table.ts). */
  msnRetransmissions = 0;
  /** Rewinds the MSN table named no WQE for (the QP failed: REQ_RETX_SETUP_ERROR). */
  msnLookupFailures = 0;
  ackTimeouts = 0;
  rnrNaksReceived = 0;
  seqNaksReceived = 0;
  naksReceived = 0;
  // Responder
  acksSent = 0;
  rnrNaksSent = 0;
  seqNaksSent = 0;
  naksSent = 0;
  duplicateRequests = 0;
  /** READ requests NAKed because the responder already had IRD of them in flight. */
  readsOverIrd = 0;
  readResponsesSent = 0;
  messagesReceived = 0;
  // Completions and queues
  cqesWritten = 0;
  cqNotifications = 0;
  cqOverflows = 0;
  flushedCompletions = 0;
  qpErrors = 0;
  // Doorbells
  doorbells = 0;
  doorbellsRejected = 0;
  /**
   * Doorbells (also in doorbellsRejected) at the other kind's base: a QP or CQ doorbell at the NQ
   * doorbell offset, an NQ or CREQ doorbell on a DPI page (they differ on P7).
   */
  doorbellsWrongBase = 0;
  doorbellsIgnored = 0;
  /** SQ and RQ doorbells of the GSI QP (also in doorbellsIgnored): the engine runs no UD queue. */
  gsiDoorbells = 0;
  /** Host writes attempted on behalf of a destroyed QP (must stay 0: none is made). */
  dmaWritesAfterDestroy = 0;
  /** Host memory accesses the IOMMU refused while running a QP. */
  dmaFaults = 0;

  /** A snapshot for the control path (allocates). */
  snapshot(): EngineCounterSnapshot {
    const out: Record<string, number> = {};
    for (const [key, value] of Object.entries(this)) if (typeof value === 'number') out[key] = value;
    for (let i = 0; i < PARSE_STATUS_COUNT; i++) if (i !== 0) out[`drop${PARSE_STATUS_NAMES[i]}`] = this.parseDrops[i]!;
    let dropped = this.dropUnknownQp + this.dropGsi + this.dropQpNotReady + this.dropBadPkey + this.dropBadAddress +
      this.dropReceiveQueueFull;
    for (let i = 1; i < PARSE_STATUS_COUNT; i++) dropped += this.parseDrops[i]!;
    out['framesDropped'] = dropped;
    // Built by name from this class's own number fields and the parse-status names: the type says so.
    return out as EngineCounterSnapshot;
  }
}

type NumberFields<T> = { readonly [K in keyof T as T[K] extends number ? K : never]: number };

/** Frames the parser refused, by reason: dropBAD_ICRC, dropWRONG_DEST_MAC, ... */
export type ParseDropCounters = { readonly [K in Exclude<keyof typeof ParseStatus, 'OK'> as `drop${K}`]: number };

/** Every counter of EngineCounters as a number, the parse drops by name, and their total. */
export type EngineCounterSnapshot = NumberFields<EngineCounters> & ParseDropCounters & {
  /** Frames that reached no QP: every drop reason above, summed. */
  readonly framesDropped: number;
};
