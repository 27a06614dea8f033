/**
 * Cables: what carries the software NIC's Ethernet frames, the wrappers around them, and
 * plugPortCable, which builds the stack a port sends into from the NIC's cable spec (the host
 * hands it to the model as HostServices.plugCable; the model's types are model/cable/port-cable.ts):
 *
 *   FaultCable ─> LocalDelivery (cables to other machines) ─> PcapTap (if a capture) ─> cable
 *
 * where the cable is a LoopCable (back to the port), a PairCable (two stepped NICs of this
 * process), a UDP cable (QEMU's -netdev dgram: a UdpSocketCable the model's worker reads through
 * libc, or, without koffi or with RIG_BNXT_UDP_IO=dgram, a UdpCable on Node's dgram socket) or a
 * StreamCable (QEMU's -netdev stream).
 */
import type { CableSpec, PortCable, PortCableOptions, QueuedFrames } from '../../model/cable/port-cable.ts';
import type { Result } from '../../../../firmware-hwrm/result.ts';
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
export type { CableSpec, PortCable, PortCableOptions, QueuedFrames } from '../../model/cable/port-cable.ts';

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
  const file = capture?.writer ?? null;
  return { cable, loop, pair, local, capture: file, queues, socket: eventLoop, pollFd, udpSocket: socketPath, ready };
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
