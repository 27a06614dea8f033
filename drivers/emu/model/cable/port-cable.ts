/**
 * What a port is plugged into, as the model sees it: the cable spec a NIC's config names, the
 * options a port asks its cable stack with, and the stack it gets back. The host builds the
 * stack (drivers/emu/host/cable/index.ts plugPortCable, handed in as HostServices.plugCable):
 *
 *   FaultCable ─> LocalDelivery (cables to other machines) ─> capture (if any) ─> cable
 *
 * The in-memory parts are the model's own (faults.ts, local-delivery.ts, loop-cable.ts,
 * pair-cable.ts); the sockets and the capture file are the host's, and reach the model only
 * through the narrow types here.
 */
import type { Result } from '../../../../firmware-hwrm/result.ts';
import type { Random } from '../random.ts';
import type { FaultCable } from './faults.ts';
import type { LocalDelivery } from './local-delivery.ts';
import type { LoopCable } from './loop-cable.ts';
import type { PairCable } from './pair-cable.ts';

export type CableSpec =
  | { readonly kind: 'loop' }
  | { readonly kind: 'udp'; readonly localPort: number; readonly remotePort: number }
  | { readonly kind: 'stream'; readonly path: string }
  /** Stepped only: cabled to the other NIC opened with the same name in this process (cable/pair-cable.ts). */
  | { readonly kind: 'pair'; readonly name: string };

/** A queue of frames in memory, delivered when the port's owner runs it (no event-loop turn needed). */
export interface QueuedFrames {
  readonly pending: number;
  deliverPending(): number;
}

/** The file a capture writes (engine.capture()): what it holds so far. */
export interface CaptureFile {
  readonly path: string;
  readonly framesWritten: number;
  /** Why writing stopped, if it did. */
  readonly error: string | undefined;
}

/** A socket the model's thread reads itself, which the event loop may also watch (an inline model's host). */
export interface WatchedSocket {
  /** Lets the event loop read the socket too, calling `onArrival` after each frame it keeps. */
  watch(onArrival: () => void): void;
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
  /** The capture's file, if the NIC records its frames. */
  readonly capture: CaptureFile | null;
  /** Every in-memory queue, delivered by the port inside its run. */
  readonly queues: readonly QueuedFrames[];
  /** The cable is a socket read on the event loop (Node's dgram, a stream): frames arrive between runs. */
  readonly socket: boolean;
  /**
   * The UDP socket the model's thread reads itself (host/cable/udp-socket-cable.ts), which a
   * sleeping worker polls; -1 for every other cable.
   */
  readonly pollFd: number;
  /** That socket (null for every other cable): an inline model's host lets the event loop watch it. */
  readonly udpSocket: WatchedSocket | null;
  /** Settles when a socket cable can carry frames (bound, connected) or has failed to; null for in-memory cables. */
  readonly ready: Promise<Result<void>> | null;
}
