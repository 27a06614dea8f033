/**
 * Two software NICs in one process cabled to each other, stepped on one virtual clock: what
 * the soak and the fuzzers use to run two NICs deterministically and fast (no sockets, no
 * threads). Each end's frames wait in the other end's inbound ring of preallocated slots (a
 * manual LoopCable) until that end's model runs; a full ring drops the frame, as a NIC's full
 * receive ring would.
 *
 *   end 0 ──send──> [inbound of end 1] ──deliverPending (end 1's run)──> end 1's receiver
 *   end 1 ──send──> [inbound of end 0] ──deliverPending (end 0's run)──> end 0's receiver
 *
 * Ends meet by name: the first NIC opened with a pair name takes end 0, the second end 1, a
 * third is refused. The link also holds the shared virtual time and the models stepped on
 * it (drivers/emu/host/device.ts), so a wait on either NIC runs both. The name is free again once
 * every end taken has closed.
 */
import { LoopCable } from './loop-cable.ts';
import { CableStats, type Cable, type FrameReceiver } from './cable.ts';

/** Something stepped on a pair's shared clock (a NicModel). */
export interface Stepped {
  runOnce(nowNs: number): boolean;
  nextDeadlineNs(): number;
  /** A write of the driver waits to be taken by the next run. */
  hasQueuedWrites(): boolean;
}

/** Runs each model once at `nowNs` (the inline and the stepped host's turn); whether any did work. */
export function runModelsOnce(models: readonly Stepped[], nowNs: number): boolean {
  let worked = false;
  for (let i = 0; i < models.length; i++) if (models[i]!.runOnce(nowNs)) worked = true;
  return worked;
}

/** One clock and the models run on it: a virtual one (stepped NICs) or the real one (inline NICs). */
export class SharedStepping {
  nowNs = 0;
  /** Which clock the first NIC of a pair brought; the second must bring the same. */
  clock: 'virtual' | 'real' | undefined;
  readonly models: Stepped[] = [];
}

export class PairLink {
  readonly ends: [PairCable | undefined, PairCable | undefined] = [undefined, undefined];
  readonly stepping = new SharedStepping();
  /** Ends taken so far (0, 1 or 2): a third open is refused while one of them is open. */
  taken = 0;
  closed = 0;
  constructor(readonly name: string) {}
}

const links = new Map<string, PairLink>();

/** The link named `name`, if an end of it is open. */
export function pairLink(name: string): PairLink | undefined {
  return links.get(name);
}

export class PairCable implements Cable {
  readonly stats = new CableStats();
  /** Frames sent to this end, waiting for its model's run. */
  private readonly inbound: LoopCable;
  private closed = false;

  private constructor(
    readonly link: PairLink, readonly end: 0 | 1, slots: number, slotBytes: number, readonly mac: Uint8Array,
    readonly ipv4: Uint8Array,
  ) {
    this.inbound = new LoopCable({ slots, slotBytes, delivery: 'manual' });
  }

  /**
   * Takes the next free end of the pair `name` for a NIC with `mac` and `ipv4`; an error if
   * both are taken, or if the NIC at the other end has the same MAC or address (each would
   * take the other's frames for forged ones: LocalDelivery).
   */
  static join(name: string, slots: number, slotBytes: number, mac: Uint8Array, ipv4: Uint8Array): PairCable | string {
    let link = links.get(name);
    if (!link) {
      link = new PairLink(name);
      links.set(name, link);
    }
    if (link.taken >= 2) return `the software NIC pair "${name}" already has two NICs`;
    const other = link.ends[0];
    if (link.taken === 1 && other !== undefined && !other.closed) {
      if (sameBytes(other.ipv4, ipv4))
        return `the software NIC pair "${name}": the NIC at the other end already has the address ` +
          `${[...ipv4].join('.')}: two ends of a cable need two addresses`;
      if (sameBytes(other.mac, mac))
        return `the software NIC pair "${name}": the NIC at the other end already has this MAC: two ends of a cable ` +
          `need two MACs`;
    }
    const end = link.taken as 0 | 1;
    const cable = new PairCable(link, end, slots, slotBytes, mac.slice(), ipv4.slice());
    link.ends[end] = cable;
    link.taken++;
    return cable;
  }

  private get peer(): PairCable | undefined {
    return this.link.ends[this.end === 0 ? 1 : 0];
  }

  /** Frames waiting for this end's run. */
  get pending(): number {
    return this.inbound.pending;
  }

  /** Frames waiting at the other end (where this end's sends go); 0 if it is not there. */
  get peerPending(): number {
    const p = this.peer;
    return p === undefined || p.closed ? 0 : p.inbound.pending;
  }

  send(frame: Uint8Array, length: number): void {
    const p = this.peer;
    if (this.closed || p === undefined || p.closed) {
      this.stats.sendDropped++;
      return;
    }
    const before = p.inbound.stats.sendDropped;
    p.inbound.send(frame, length);
    if (p.inbound.stats.sendDropped !== before) {
      this.stats.sendDropped++;
      return;
    }
    this.stats.framesSent++;
    this.stats.bytesSent += length;
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.inbound.setReceiver(onFrame);
  }

  /** Hands the frames waiting at this end to its receiver (called from its model's run). */
  deliverPending(): number {
    const n = this.inbound.deliverPending();
    this.stats.framesReceived += n;
    return n;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.inbound.close();
    const link = this.link;
    link.closed++;
    if (link.closed === link.taken && links.get(link.name) === link) links.delete(link.name);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
