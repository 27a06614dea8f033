/**
 * Cables: what carries the software NIC's Ethernet frames, the wrappers around them, and
 * plugPortCable, which builds the stack a port sends into from the NIC's cable spec:
 *
 *   FaultCable ─> LocalDelivery (cables to other machines) ─> PcapTap (if a capture) ─> cable
 *
 * where the cable is a LoopCable (back to the port), a PairCable (two stepped NICs of this
 * process), a UDP cable (QEMU's -netdev dgram: a UdpSocketCable the model's worker reads through
 * libc, or, without koffi or with RIG_BNXT_UDP_IO=dgram, a UdpCable on Node's dgram socket) or a
 * StreamCable (QEMU's -netdev stream).
 */
import type { CableSpec } from '../../model/config.ts';
import type { Result } from '../../../../firmware-hwrm/result.ts';
import type { Random } from '../../model/random.ts';
import { CableStats, type Cable } from '../../model/cable/cable.ts';
import { LoopCable } from '../../model/cable/loop-cable.ts';
import { UdpCable } from './udp-cable.ts';
import { UdpSocketCable, udpThroughLibc } from './udp-socket-cable.ts';
import { StreamCable } from './stream-cable.ts';
import { PairCable } from '../../model/cable/pair-cable.ts';
import { LocalDelivery } from '../../model/cable/local-delivery.ts';
import { PcapTap } from './pcap-tap.ts';
import { FaultCable } from '../../model/cable/faults.ts';

export { CableStats, dropAll, type Cable, type FrameReceiver } from '../../model/cable/cable.ts';
export { LoopCable, type LoopCableOptions } from '../../model/cable/loop-cable.ts';
export { UdpCable, type UdpCableOptions } from './udp-cable.ts';
export { UdpSocketCable, udpThroughLibc, UDP_IO_ENV } from './udp-socket-cable.ts';
export { StreamCable, type StreamCableOptions } from './stream-cable.ts';
export { PcapTap, type PcapTapOptions } from './pcap-tap.ts';
export { refuseNonLoopback, refusePort } from './loopback.ts';
export { PairCable, PairLink, SharedStepping, pairLink, type Stepped } from '../../model/cable/pair-cable.ts';
export { LocalDelivery } from '../../model/cable/local-delivery.ts';
export { FaultCable, type FaultSpec } from '../../model/cable/faults.ts';

/** A queue of frames in memory, delivered when the port's owner runs it (no event-loop turn needed). */
export interface QueuedFrames {
  readonly pending: number;
  deliverPending(): number;
}

export interface PortCableOptions {
  readonly spec: CableSpec;
  /** The port's own addresses (wire order): frames to them stay on the NIC (LocalDelivery). */
  readonly mac: Uint8Array;
  readonly ipv4: Uint8Array;
  readonly pcapPath: string | undefined;
  /** The NIC runs stepped on a virtual clock (captures take its time). */
  readonly stepped: boolean;
  /** The NIC's model runs in the driver's thread, stepped or inline (a pair's two ends run in one thread). */
  readonly inProcess: boolean;
  /** Slots of each in-memory queue (loop, pair, own frames) and the bytes of a sent frame's slot. */
  readonly slots: number;
  readonly slotBytes: number;
  /** Longest frame the port takes in. */
  readonly receiveBytes: number;
  readonly random: Random;
  readonly nowNs: () => number;
  /** A UDP cable's socket is read through libc by the model's thread (EmuConfig.udpIo). */
  readonly udpIo?: 'libc';
  /** Told when a socket cable cannot be set up (bind, connect). */
  readonly onError: (why: string) => void;
}

/** What a port is plugged into, with handles on the queues it must drive and measure. */
export interface PortCable {
  /** What the port sends into and receives from: the fault injector, outermost. */
  readonly cable: FaultCable;
  readonly loop: LoopCable | null;
  readonly pair: PairCable | null;
  /** On a cable to other machines: the port's frames to itself, and forged ones refused. */
  readonly local: LocalDelivery | null;
  /** The capture, if the NIC records its frames. */
  readonly capture: PcapTap | null;
  /** Every in-memory queue, delivered by the port inside its run. */
  readonly queues: readonly QueuedFrames[];
  /** The cable is a socket read on the event loop (Node's dgram, a stream): frames arrive between runs. */
  readonly socket: boolean;
  /**
   * The UDP socket the model's thread reads itself (udp-socket-cable.ts), which a sleeping
   * worker polls; -1 for every other cable.
   */
  readonly pollFd: number;
  /** That socket's cable (null for every other cable): an inline model's host lets the event loop watch it. */
  readonly udpSocket: UdpSocketCable | null;
  /** Settles when a socket cable can carry frames (bound, connected) or has failed to; null for in-memory cables. */
  readonly ready: Promise<Result<void>> | null;
}

/** Builds the cable stack for `o.spec`; throws (nothing is left open) if a part cannot be made. */
export function plugPortCable(o: PortCableOptions): PortCable {
  const spec = o.spec;
  const queues: QueuedFrames[] = [];
  let loop: LoopCable | null = null;
  let pair: PairCable | null = null;
  let inner: Cable;
  let ready: Promise<Result<void>> | null = null;
  let socketPath: UdpSocketCable | null = null;
  let eventLoop = false;
  if (spec.kind === 'loop') {
    loop = new LoopCable({ slots: o.slots, slotBytes: o.slotBytes, delivery: 'manual' });
    queues.push(loop);
    inner = loop;
  } else if (spec.kind === 'pair') {
    if (!o.inProcess) {
      throw new Error('software NIC port: a pair cable joins NICs whose models run in this thread (stepped or inline)');
    }
    const joined = PairCable.join(spec.name, o.slots, o.receiveBytes, o.mac, o.ipv4);
    if (typeof joined === 'string') throw new Error(`software NIC port: ${joined}`);
    pair = joined;
    queues.push(joined);
    inner = joined;
  } else {
    const made = socketCable(spec, o);
    inner = made.cable;
    ready = made.ready;
    socketPath = made.udpSocket;
    eventLoop = made.eventLoop;
    if (socketPath) queues.push(socketPath);
  }
  let capture: PcapTap | null = null;
  if (o.pcapPath !== undefined) {
    // Around a loop cable every frame passes both ways: record it once, as sent.
    const tap = PcapTap.open(inner, o.pcapPath, {
      record: loop ? 'sent' : 'both',
      ...(o.stepped ? { clockUs: () => o.nowNs() / 1000 } : {}),
    });
    if (!tap.ok) {
      inner.close();
      throw new Error(`software NIC port: ${tap.error}`);
    }
    inner = tap.value;
    capture = tap.value;
  }
  // Above the tap: the port's frames to itself never touch the wire, so a capture has none.
  const local = loop ? null : new LocalDelivery(inner, o.mac, o.ipv4, o.slots, o.slotBytes);
  if (local) {
    queues.push(local);
    inner = local;
  }
  const cable = new FaultCable(inner, o.random, o.nowNs, o.receiveBytes);
  const pollFd = socketPath?.fd ?? -1;
  return { cable, loop, pair, local, capture, queues, socket: eventLoop, pollFd, udpSocket: socketPath, ready };
}

/**
 * A socket cable: UDP through libc where it can (the model's thread reads it), else a cable
 * the event loop reads (Node's dgram for UDP, or a stream).
 */
function socketCable(spec: CableSpec, o: PortCableOptions): {
  cable: Cable; ready: Promise<Result<void>>; udpSocket: UdpSocketCable | null; eventLoop: boolean;
} {
  if (spec.kind === 'udp' && o.udpIo === 'libc' && !o.stepped && udpThroughLibc()) {
    const made = UdpSocketCable.create({
      localPort: spec.localPort, remotePort: spec.remotePort, maxFrameBytes: o.receiveBytes,
    });
    if (made.ok) return { cable: made.value, ready: made.value.ready, udpSocket: made.value, eventLoop: false };
    if (!made.unavailable) {
      // The bind failed: the open's error. A model in this thread throws it out of its construction;
      // a worker's reports it before it starts, its port on a cable that carries nothing.
      if (o.inProcess) throw new Error(`software NIC port: ${made.error}`);
      o.onError(made.error);
      return { cable: new UnpluggedCable(), ready: Promise.resolve(made), udpSocket: null, eventLoop: false };
    }
  }
  const cable = eventLoopCable(spec, o);
  return { cable, ready: cable.ready, udpSocket: null, eventLoop: true };
}

/** A UDP cable on Node's dgram socket or a stream cable: frames arrive on the event loop. */
function eventLoopCable(spec: CableSpec, o: PortCableOptions): UdpCable | StreamCable {
  const made = spec.kind === 'udp'
    ? UdpCable.create({ localPort: spec.localPort, remotePort: spec.remotePort, maxFrameBytes: o.receiveBytes })
    : spec.kind === 'stream' ? StreamCable.create({ path: spec.path, maxFrameBytes: o.receiveBytes })
      : { ok: false as const, error: `no socket cable of kind ${spec.kind}` };
  if (!made.ok) throw new Error(`software NIC port: ${made.error}`);
  void made.value.ready.then((r) => { if (!r.ok) o.onError(r.error); });
  return made.value;
}

/** The cable of a port whose socket could not be bound: it carries nothing (the open fails). */
class UnpluggedCable implements Cable {
  readonly stats = new CableStats();
  send(): void {
    this.stats.sendDropped++;
  }
  setReceiver(): void {}
  close(): void {}
}
