/**
 * A cable over UDP on the loopback network, the encapsulation of QEMU's `-netdev dgram`: one
 * Ethernet frame (no FCS) per datagram. The cable binds LOCAL and sends to REMOTE; a QEMU
 * guest started with `-netdev dgram,local.port=REMOTE,remote.port=LOCAL` (127.0.0.1 both
 * ends) is then on the same wire, and so is another software NIC with the ports swapped.
 * Addresses outside 127.0.0.0/8 are refused. Datagrams from any source other than REMOTE are
 * dropped and counted, so no other local process can inject frames.
 *
 * Node allocates a Buffer per datagram received, and this cable copies each frame it sends
 * (the socket may still read the bytes after send returns); that is the price of the socket.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Result } from '../../../../firmware-hwrm/result.ts';
import { CableStats, dropAll, type Cable, type FrameReceiver } from '../../model/cable/cable.ts';
import { awaitReady } from './await-ready.ts';
import { refuseNonLoopback, refusePort } from './loopback.ts';

const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

export interface UdpCableOptions {
  /** Port to bind; 0 picks a free one (read it from `localPort` once ready). */
  readonly localPort: number;
  readonly remotePort: number;
  /** Default 127.0.0.1. Must be in 127.0.0.0/8. */
  readonly localHost?: string;
  /** Default 127.0.0.1. Must be in 127.0.0.0/8. */
  readonly remoteHost?: string;
  /** Longest frame sent or taken, in bytes. Default 9216. */
  readonly maxFrameBytes?: number;
  /** Bytes waiting in the socket's send queue beyond which new frames are dropped. Default 4 MiB. */
  readonly maxQueuedBytes?: number;
}

export class UdpCable implements Cable {
  readonly stats = new CableStats();
  readonly localHost: string;
  readonly remoteHost: string;
  readonly maxFrameBytes: number;
  private readonly maxQueuedBytes: number;
  private remotePortValue: number;
  private boundPort = 0;
  private readonly socket: Socket;
  private receiver: FrameReceiver;
  private closed = false;
  /** Why the cable stopped working (bind failure, socket error), if it did. */
  error: string | undefined;
  /** Settles once the socket is bound (ok) or has failed to bind (the error). */
  readonly ready: Promise<Result<void>>;

  private constructor(options: UdpCableOptions) {
    this.localHost = options.localHost ?? '127.0.0.1';
    this.remoteHost = options.remoteHost ?? '127.0.0.1';
    this.remotePortValue = options.remotePort;
    this.maxFrameBytes = options.maxFrameBytes ?? 9216;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 4 * 1024 * 1024;
    this.receiver = dropAll(this.stats);
    // A NIC takes a window of 128 frames of up to 9 KiB at once: ask for a socket buffer that holds
    // one (the kernel caps it at net.core.rmem_max; the default 208 KiB loses the tail of a burst).
    this.socket = createSocket({
      type: 'udp4', recvBufferSize: SOCKET_BUFFER_BYTES, sendBufferSize: SOCKET_BUFFER_BYTES,
    });
    this.socket.on('message', this.onMessage);
    this.ready = new Promise((resolve) => {
      const onError = (e: Error) => {
        const taken = (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
        this.fail(taken
          ? `UDP cable: port ${options.localPort} on ${this.localHost} is already bound by another socket (another ` +
            `NIC or program): ${e.message}`
          : `UDP cable: cannot bind ${this.localHost}:${options.localPort}: ${e.message}`);
        resolve({ ok: false, error: this.error! });
      };
      this.socket.once('error', onError);
      this.socket.bind(options.localPort, this.localHost, () => {
        this.socket.off('error', onError);
        // Later socket errors are kept for the owner; the cable keeps working as a NIC would.
        this.socket.on('error', (e: Error) => { this.error = `UDP cable: socket error: ${e.message}`; });
        this.boundPort = this.socket.address().port;
        resolve({ ok: true, value: undefined });
      });
    });
  }

  /**
   * Checks the addresses and starts binding; returns at once. Frames sent before the bind
   * completes wait in the socket. Await `ready` (or use UdpCable.open) to learn whether the
   * bind succeeded.
   */
  static create(options: UdpCableOptions): Result<UdpCable> {
    const refusal = refuseUdpCableOptions(options);
    if (refusal !== null) return { ok: false, error: refusal };
    return { ok: true, value: new UdpCable(options) };
  }

  /** create, then wait for the bind. */
  static async open(options: UdpCableOptions): Promise<Result<UdpCable>> {
    return awaitReady(UdpCable.create(options));
  }

  /** The bound port (the chosen one when created with 0); 0 before the bind completes. */
  get localPort(): number {
    return this.boundPort;
  }

  get remotePort(): number {
    return this.remotePortValue;
  }

  /** Points the cable at another remote port (for example one picked by the system). */
  setRemotePort(port: number): Result<void> {
    const refusal = refuseRemotePort(port);
    if (refusal !== null) return { ok: false, error: refusal };
    this.remotePortValue = port;
    return { ok: true, value: undefined };
  }

  send(frame: Uint8Array, length: number): void {
    if (!(length >= 0 && length <= frame.length))
      throw new RangeError(`UdpCable.send: length ${length} outside ${frame.length} bytes`);
    if (this.closed || length > this.maxFrameBytes ||
      (this.boundPort !== 0 && this.socket.getSendQueueSize() > this.maxQueuedBytes)) {
      this.stats.sendDropped++;
      return;
    }
    const copy = Buffer.allocUnsafe(length);
    copy.set(length === frame.length ? frame : frame.subarray(0, length));
    this.socket.send(copy, 0, length, this.remotePortValue, this.remoteHost, this.afterSend);
    this.stats.framesSent++;
    this.stats.bytesSent += length;
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket.off('message', this.onMessage);
    try {
      this.socket.close();
    } catch {
      // Closing a socket whose bind failed: nothing left to release.
    }
  }

  private readonly onMessage = (msg: Buffer, from: RemoteInfo): void => {
    if (this.closed) return;
    if (from.port !== this.remotePortValue || from.address !== this.remoteHost || msg.length > this.maxFrameBytes) {
      this.stats.receiveDropped++;
      return;
    }
    this.stats.framesReceived++;
    this.stats.bytesReceived += msg.length;
    this.receiver(msg, msg.length);
  };

  /** One shared completion callback (not a closure per frame): a failed send is a dropped frame. */
  private readonly afterSend = (e: Error | null): void => {
    if (e) {
      this.stats.sendDropped++;
      this.error = `UDP cable: send: ${e.message}`;
    }
  };

  private fail(message: string): void {
    this.error ??= message;
    this.close();
  }
}

/**
 * Why both UDP cables (this one and udp-socket-cable.ts) refuse `options`, or null: hosts in
 * 127.0.0.0/8, ports in range, a frame size a datagram can carry.
 */
export function refuseUdpCableOptions(options: UdpCableOptions): string | null {
  const refusal =
    refuseNonLoopback(options.localHost ?? '127.0.0.1', 'local host') ??
    refuseNonLoopback(options.remoteHost ?? '127.0.0.1', 'remote host') ??
    refusePort(options.localPort, 'local port', 0) ??
    refusePort(options.remotePort, 'remote port', 1);
  if (refusal !== null) return `UDP cable: ${refusal}`;
  const max = options.maxFrameBytes ?? 9216;
  if (!(Number.isInteger(max) && max > 0 && max <= 65507))
    return `UDP cable: maxFrameBytes ${max} must be in [1, 65507]`;
  return null;
}

/** Why both UDP cables' setRemotePort refuses `port`, or null. */
export function refuseRemotePort(port: number): string | null {
  const refusal = refusePort(port, 'remote port', 1);
  return refusal === null ? null : `UDP cable: ${refusal}`;
}
