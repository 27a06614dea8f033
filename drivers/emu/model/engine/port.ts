/**
 * The NIC's Ethernet port: the cable it is plugged into (from the config: a loop back to
 * itself, a UDP tunnel, a unix stream; the pcap tap and the fault injector wrapped around
 * it; the host builds that stack, bus.plugCable, cable/port-cable.ts), whole RoCEv2 frames
 * built into one preallocated buffer (the cable copies what it keeps; a loop cable takes the
 * buffer itself and hands back another), and received frames handed to the engine.
 *
 * Frames reach the engine two ways. Inside run(), the in-memory queues deliver what was sent
 * into them (manual delivery: stepped mode has no event-loop turns): a loop cable's frames, a
 * pair cable's (two stepped NICs in one process), and, on any cable to other machines, the
 * port's frames to itself (LocalDelivery); the engine takes each frame at once. Outside
 * run(), a socket's frames arrive on the event loop: they are copied into a preallocated
 * receive queue, the worker is told (onExternalWork), and run() takes them.
 */
import { frameBuffer, frameSlots } from '../wire/frame-memory.ts';
import type { Random } from '../random.ts';
import type { Result } from '../../../../firmware-hwrm/result.ts';
import type { EmuConfig } from '../config.ts';
import type { FaultCable } from '../cable/faults.ts';
import type { LocalDelivery } from '../cable/local-delivery.ts';
import type { LoopCable } from '../cable/loop-cable.ts';
import type { PairCable } from '../cable/pair-cable.ts';
import type { CaptureFile, PortCable, PortCableOptions, QueuedFrames, WatchedSocket } from '../cable/port-cable.ts';
import {
  HeaderTemplate, RoceFrame, completeIcrc, encodeFrameWith, frameWordsOf, AETH_BYTES, EXT_AT, ICRC_BYTES, RETH_BYTES,
  ETH_HEADER_BYTES,
} from '../wire/index.ts';
import { PSN_MASK, pathMtuFor } from '../../../../firmware-hwrm/roce/ib-transport.ts';
import type { EngineCounters } from './counters.ts';
import type { QpTransport } from './transport.ts';

/** Frames an in-memory queue (loop, pair, own frames) holds; the requesters leave TX_RESERVE of them for responses. */
const LOOP_SLOTS = 512;
const TX_RESERVE = 64;
/** Frames a socket cable may take per run (keeps the worker's slices short; the rest waits). */
const SOCKET_FRAMES_PER_RUN = 1024;
const RECEIVE_QUEUE_SLOTS = 256;
/** Frames this long are handed to the cable as a view of exactly their bytes. */
const LONG_FRAME_BYTES = 512;

/** The QP's P_Key; 0x0000 / 0x8000 are not valid partition keys, so they mean the default 0xFFFF. */
export function partitionKey(pkey: number): number {
  return (pkey & 0x7fff) === 0 ? 0xffff : pkey & 0xffff;
}

export type FrameHandler = (frame: Uint8Array, length: number) => void;

export class Port {
  /** What the engine sends into: the fault injector, around the pcap tap (if any), around the cable. */
  readonly cable: FaultCable;
  readonly maxFrameBytes: number;
  /** The largest path MTU the port's Ethernet MTU carries (the rule MODIFY_QP checks too). */
  readonly mtuCap: number;
  readonly txf = new RoceFrame();
  readonly rxf = new RoceFrame();
  /**
   * The buffer the next frame is built in. On a loop cable without a capture it is one of the
   * loop's own buffers, handed over with each frame (LoopCable.sendBuffer) and replaced by the
   * one handed back, so read it afresh for every frame.
   */
  txBuf: Uint8Array;
  /**
   * txBuf's memory as words (build.ts frameWordsOf): every buffer txBuf is ever set to lies in it
   * (the port's own, or the loop's one block of slots, from which sendBuffer hands each one back).
   */
  private readonly txWords: Int32Array | null;
  /** The view of a long frame exactView gave last, and the buffer it is of. */
  private longView: Uint8Array = new Uint8Array(0);
  private longOf: Uint8Array | null = null;
  private readonly loop: LoopCable | null;
  /** The loop that takes frames by buffer (no capture records them on the way), if any. */
  private readonly handOver: LoopCable | null;
  /** Two stepped NICs of this process cabled together: this end. */
  private readonly pair: PairCable | null;
  /** On a cable to other machines: the port's frames to itself, and forged ones refused. */
  readonly local: LocalDelivery | null;
  /** The pcap tap's file, if the NIC records its frames. */
  readonly capture: CaptureFile | null;
  /** Settles when a socket cable is bound / connected or has failed to (null: an in-memory cable, ready now). */
  readonly ready: Promise<Result<void>> | null;
  /** In-memory queues delivered inside run() (loop, pair, own frames). */
  private readonly queues: readonly QueuedFrames[];
  private readonly socket: boolean;
  /** The UDP socket the model's thread reads itself, for a sleeping worker to poll (-1: none; port-cable.ts). */
  readonly pollFd: number;
  /** That socket, or null. */
  readonly udpSocket: WatchedSocket | null;
  /** The port's IPv4 address (a number, as frames carry it). */
  readonly ip: number;
  /** The port's MAC as HeaderTemplate keeps a destination MAC: its first two bytes, then its last four. */
  private readonly macHi: number;
  private readonly macLo: number;
  private ipId = 0;
  private inRun = false;
  private runBudget = SOCKET_FRAMES_PER_RUN;
  // Frames from sockets, waiting for run().
  private readonly rxSlots: Uint8Array[] = [];
  private readonly rxLengths = new Uint32Array(RECEIVE_QUEUE_SLOTS);
  private rxHead = 0;
  private rxTail = 0;
  /** Why the cable could not be set up or stopped working (sockets), if it did. */
  error: string | undefined;
  /** Test hook: sees every frame the port sends, before any fault (stepped runs and unit tests); reads only. */
  onTransmit: ((frame: Uint8Array, length: number) => void) | undefined;
  /**
   * The frame the engine is handed now is one this port built and handed to its own loop
   * (LoopCable.handedOver): its ICRC is the one the port computed, over bytes nothing else
   * wrote, so the engine need not check it again. False for every other frame (fromWire, a
   * socket's, a pair cable's, a copy the loop made, one a fault injector changed or held).
   */
  rxTrusted = false;
  /**
   * The driver's heartbeat cell when the driver runs in another thread (a worker's model; the
   * host's DriverWake.heartbeat): each frame sent adds 1 to [0]. The driver spins while it sees
   * the heartbeat move and sleeps once it stood still for a few dozen looks (worker-host.ts,
   * deviceRunning); the worker beats between runs, and a run that carries a message (the WQE, its frame, the
   * receiver's CQE: 1-2 us) outlasted those looks, so the driver fell asleep just before its
   * completion came and a futex wake-up (~20 us here) was in every round trip.
   */
  heartbeat: Int32Array | undefined = undefined;

  constructor(
    config: EmuConfig,
    random: Random,
    private readonly nowNs: () => number,
    private readonly counters: EngineCounters,
    private readonly handler: FrameHandler,
    private readonly onExternalFrame: () => void,
    stepped: boolean,
    plugCable: (o: PortCableOptions) => PortCable,
  ) {
    this.mtuCap = pathMtuFor(config.mtu);
    // Longest frame this port builds: headers + RETH + AETH + one MTU of payload + pad + ICRC.
    this.maxFrameBytes = EXT_AT + RETH_BYTES + AETH_BYTES + this.mtuCap + 3 + ICRC_BYTES;
    // Built where its payload lands 8-byte aligned, as host memory is (frame-memory.ts).
    this.txBuf = frameBuffer(Math.max(this.maxFrameBytes, ETH_HEADER_BYTES + config.mtu));
    this.txf.srcMac.set(config.mac);
    const m = config.mac;
    this.macHi = (m[0]! << 8) | m[1]!;
    this.macLo = (m[2]! << 24) | (m[3]! << 16) | (m[4]! << 8) | m[5]!;
    this.ip = ((config.ipv4[0]! << 24) | (config.ipv4[1]! << 16) | (config.ipv4[2]! << 8) | config.ipv4[3]!) >>> 0;
    const receiveBytes = Math.max(this.txBuf.length, 9216);

    const plugged = plugCable({
      spec: config.cable, mac: config.mac, ipv4: config.ipv4, pcapPath: config.pcapPath, stepped, udpIo: config.udpIo,
      inProcess: config.mode !== 'thread', slots: LOOP_SLOTS, slotBytes: this.txBuf.length, receiveBytes, random, nowNs,
      onError: (why) => { this.error = why; },
    });
    this.cable = plugged.cable;
    this.loop = plugged.loop;
    this.pair = plugged.pair;
    this.local = plugged.local;
    this.capture = plugged.capture;
    this.ready = plugged.ready;
    this.queues = plugged.queues;
    this.socket = plugged.socket;
    const spare = this.loop !== null && this.capture === null ? this.loop.spareBuffer() : null;
    this.handOver = spare !== null ? this.loop : null;
    if (spare !== null) this.txBuf = spare;
    this.txWords = frameWordsOf(this.txBuf);
    this.pollFd = plugged.pollFd;
    this.udpSocket = plugged.udpSocket;
    if (this.socket) this.rxSlots.push(...frameSlots(RECEIVE_QUEUE_SLOTS, receiveBytes));
    this.cable.setReceiver(this.onFrame);
    if (this.handOver !== null) this.cable.beforeReceiveFaults = this.completeOwnIcrc;
  }

  /** Frames the requesters may send now (responses keep a reserve). */
  requestRoom(): number {
    const room = this.room() - TX_RESERVE;
    return room > 0 ? room : 0;
  }

  /** A socket cable's frames for this run are (nearly) used up: whatever waits goes in the next run. */
  exhausted(): boolean {
    return this.socket && this.runBudget <= TX_RESERVE;
  }

  /** Frames the port takes now: the room left in every queue a frame may land in. */
  room(): number {
    if (this.loop) return LOOP_SLOTS - this.loop.pending;
    let room = this.socket ? this.runBudget : LOOP_SLOTS;
    if (this.pair && LOOP_SLOTS - this.pair.peerPending < room) room = LOOP_SLOTS - this.pair.peerPending;
    if (this.local && LOOP_SLOTS - this.local.pending < room) room = LOOP_SLOTS - this.local.pending;
    return room;
  }

  /**
   * Sends the frame described by `txf` (opcode, PSN, flags and extension headers set by the
   * caller) with `payloadLength` bytes already at its payload offset in `txBuf`, to `t`'s peer.
   */
  send(t: QpTransport, payloadLength: number): void {
    const f = this.txf;
    const qp = t.qp;
    const pkey = partitionKey(qp.pkey);
    const destQp = qp.destQpn & 0xffffff;
    let h = t.txHeader;
    if (h === null || !h.holds(qp.destMac, t.dstIp, t.udpSrcPort, pkey, destQp)) h = this.headerFor(t, pkey, destQp);
    f.ipId = this.ipId = (this.ipId + 1) & 0xffff;
    f.psn &= PSN_MASK;
    f.payloadLength = payloadLength;
    // On the loop with no fault in the way, the frame's buffer itself goes into the loop. Addressed
    // to this port, it comes back to this port's RoCE path alone, which takes it without reading its
    // ICRC (rxTrusted): the ICRC is left to whatever copies it first (docs/hardware.md).
    const loop = this.handOver;
    const handOver = loop !== null && this.cable.sendsThrough;
    const deferIcrc =
      handOver && this.onTransmit === undefined && h.dstMacLo === this.macLo && h.dstMacHi === this.macHi;
    const length = encodeFrameWith(this.txBuf, f, h, this.txWords, deferIcrc);
    if (this.socket) this.runBudget--;
    if (this.heartbeat !== undefined) Atomics.add(this.heartbeat, 0, 1);
    if (this.onTransmit !== undefined) this.onTransmit(this.txBuf, length);
    this.counters.framesSent++;
    this.counters.bytesSent += length;
    if (handOver) {
      if (deferIcrc) this.counters.icrcDeferred++;
      this.txBuf = loop!.sendBuffer(this.txBuf, length);
      return;
    }
    // A cable copies a frame given as exactly its bytes with one memcpy; shorter ones byte by byte.
    this.cable.send(length >= LONG_FRAME_BYTES ? this.exactView(length) : this.txBuf, length);
  }

  /** txBuf's first `length` bytes as a view, remade only when the buffer or the length changes (bulk frames repeat). */
  private exactView(length: number): Uint8Array {
    const b = this.txBuf;
    if (this.longOf !== b || this.longView.length !== length) {
      this.longView = b.subarray(0, length);
      this.longOf = b;
    }
    return this.longView;
  }

  /**
   * The template of `t`'s headers, (re)built from its path: on its first frame and after MODIFY_QP
   * changed the path (send compares the template with the path at every frame). The path fields of
   * `txf` are set here only: encodeFrameWith takes them from the template.
   */
  private headerFor(t: QpTransport, pkey: number, destQp: number): HeaderTemplate {
    const f = this.txf;
    f.dstMac.set(t.qp.destMac);
    f.srcIp = this.ip;
    f.dstIp = t.dstIp;
    f.udpSrcPort = t.udpSrcPort;
    f.pkey = pkey;
    f.destQp = destQp;
    const h = t.txHeader ?? new HeaderTemplate();
    h.set(f);
    t.txHeader = h;
    return h;
  }

  /**
   * The run's time in ns, set by the engine before beginRun: a field, so beginRun and deliver
   * take no double argument (a heap number at each call V8 does not inline).
   */
  runNs = 0.5;

  /** Called at the start of run() (at runNs): frames now go straight to the engine. */
  beginRun(): void {
    this.inRun = true;
    this.runBudget = SOCKET_FRAMES_PER_RUN;
    if (!this.cable.sendsThrough) this.cable.release(this.runNs);
  }

  endRun(): void {
    this.inRun = false;
  }

  /**
   * Delivers waiting frames (looped back, queued from a socket, released by the fault injector
   * as of runNs); returns how many.
   */
  deliver(): number {
    // A cable that holds no frame releases none: skip the call, whose double argument V8 boxed
    // (a heap number at every deliver: the worker's last garbage in the zero-GC benchmark).
    let n = this.cable.sendsThrough ? 0 : this.cable.release(this.runNs);
    const queues = this.queues;
    for (let i = 0; i < queues.length; i++) n += queues[i]!.deliverPending();
    while (this.rxHead !== this.rxTail) {
      const slot = this.rxHead % RECEIVE_QUEUE_SLOTS;
      this.rxTrusted = false;
      this.handler(this.rxSlots[slot]!, this.rxLengths[slot]!);
      this.rxHead++;
      n++;
    }
    return n;
  }

  /** Frames waiting to be delivered now (the engine must run again soon). */
  pending(): boolean {
    const queues = this.queues;
    for (let i = 0; i < queues.length; i++) if (queues[i]!.pending > 0) return true;
    return this.rxHead !== this.rxTail;
  }

  /** Earliest time a held (delayed) frame is due. */
  nextReleaseNs(): number {
    return this.cable.nextReleaseNs();
  }

  close(): void {
    this.cable.close();
  }

  /**
   * A frame handed in as if it came off the wire (tests, replayed captures): refused if it
   * claims this port's own address while the port is on a cable to other machines.
   */
  fromWire(frame: Uint8Array, length: number): void {
    this.counters.framesReceived++;
    this.rxTrusted = false;
    if (this.local !== null && this.local.forgedSource(frame, length)) {
      this.local.forged++;
      return;
    }
    this.handler(frame, length);
  }

  /**
   * A frame the receive faults are about to copy, change or hold: if it is one this port handed to
   * its loop, its ICRC may have been deferred, and is written now. (A loop delivers only inside
   * run(), straight to the engine: no other path copies its frames.)
   */
  private readonly completeOwnIcrc = (frame: Uint8Array, length: number): void => {
    if (this.handOver !== null && this.handOver.handedOver(frame)) completeIcrc(frame, length);
  };

  private readonly onFrame = (frame: Uint8Array, length: number): void => {
    this.counters.framesReceived++;
    if (this.inRun) {
      this.rxTrusted = this.handOver !== null && this.handOver.handedOver(frame);
      this.handler(frame, length);
      return;
    }
    // From the event loop (a socket): keep a copy for run().
    if (this.rxTail - this.rxHead >= RECEIVE_QUEUE_SLOTS || length > this.rxSlots[0]!.length) {
      this.counters.dropReceiveQueueFull++;
      return;
    }
    const slot = this.rxTail % RECEIVE_QUEUE_SLOTS;
    this.rxSlots[slot]!.set(length === frame.length ? frame : frame.subarray(0, length));
    this.rxLengths[slot] = length;
    this.rxTail++;
    this.onExternalFrame();
  };
}
