/**
 * The UDP cable (udp-cable.ts: QEMU's `-netdev dgram`, one Ethernet frame per datagram, only
 * 127.0.0.0/8, datagrams from anyone but REMOTE dropped and counted) on a socket the model's
 * thread owns and reads itself, through libc (udp-libc.ts), instead of Node's dgram socket:
 *
 *   - send() is one non-blocking sendto; a frame the socket cannot take now (its 4 MiB send
 *     buffer full) is dropped and counted, as a full transmit queue drops it.
 *   - frames arrive when the port runs its queues (deliverPending: non-blocking recvfrom until
 *     the socket is empty or this run's share is taken), never on an event-loop turn, so the
 *     engine takes a datagram in the run that finds it.
 *   - `fd` is the socket a sleeping model's thread waits on with poll(2) (worker.ts,
 *     inline-udp-host.ts).
 *   - watch(): for a model run inline in the driver's thread, which runs only inside driver
 *     calls, Node's event loop also watches the socket (a dgram socket on the same fd): a
 *     datagram that comes while the program waits on the event loop is kept in the cable
 *     (STASH_SLOTS frames, dropped and counted beyond) and the owner is told, so it can run
 *     the model then. Each datagram is read once, by whichever side looks first.
 *
 * The bind happens in create: a port another socket holds is create's error, naming the port,
 * as it is the dgram cable's. Errors are values; nothing here throws for what the network does.
 */
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import type { Result } from '../../../../firmware-hwrm/result.ts';
import { CableStats, dropAll, type Cable, type FrameReceiver } from '../../model/cable/cable.ts';
import { NET, SOCKADDR_IN_BYTES, errnoName, sockaddrIn, udpLibc, type UdpLibc } from './udp-libc.ts';
import { parseIpv4 } from '../../model/wire/addresses.ts';
import { refuseRemotePort, refuseUdpCableOptions, type UdpCableOptions } from './udp-cable.ts';

const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

/** The environment variable that keeps the UDP cable on Node's dgram socket (`dgram`); else libc, with koffi. */
export const UDP_IO_ENV = 'RIG_BNXT_UDP_IO';

/** Whether UDP cables of a worker-run model use this socket path (koffi permitting). */
export function udpThroughLibc(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env[UDP_IO_ENV] !== 'dgram';
}
/** Datagrams taken per deliverPending: the rest wait for the next pass (the engine runs again at once). */
const FRAMES_PER_DELIVERY = 64;
/** Frames the event loop's reads keep for the next delivery (watch). */
const STASH_SLOTS = 128;

/** The dgram cable's twin on a libc socket (test/tidy.test.ts PERF_FORKS: its differential test and benchmark). */
export class UdpSocketCable implements Cable {
  readonly stats = new CableStats();
  readonly localHost: string;
  readonly remoteHost: string;
  readonly maxFrameBytes: number;
  /** Resolved: the bind is done (or failed) when create returns. */
  readonly ready: Promise<Result<void>> = Promise.resolve({ ok: true, value: undefined });
  /** Why the cable stopped working (a socket error), if it did. */
  error: string | undefined;
  private remotePortValue: number;
  private remoteAddress: Uint8Array;
  private readonly remoteIp: number;
  private readonly receiveBuffer: Uint8Array;
  private readonly from = new Uint8Array(SOCKADDR_IN_BYTES);
  private readonly fromLength = new Uint32Array(1);
  private receiver: FrameReceiver;
  private socket: number;
  private more = false;
  /** The event loop's socket on the same fd (watch), which then owns the fd's close. */
  private watcher: Socket | undefined;
  private readonly stash: Uint8Array[] = [];
  private readonly stashLengths = new Uint32Array(STASH_SLOTS);
  private stashHead = 0;
  private stashTail = 0;
  private onArrival: () => void = () => {};

  private constructor(
    private readonly libc: UdpLibc, fd: number, readonly localPort: number, options: UdpCableOptions, remoteIp: number,
  ) {
    this.socket = fd;
    this.localHost = options.localHost ?? '127.0.0.1';
    this.remoteHost = options.remoteHost ?? '127.0.0.1';
    this.maxFrameBytes = options.maxFrameBytes ?? 9216;
    this.remotePortValue = options.remotePort;
    this.remoteIp = remoteIp;
    this.remoteAddress = sockaddrIn(ipBytes(remoteIp), options.remotePort);
    this.receiveBuffer = new Uint8Array(this.maxFrameBytes);
    this.receiver = dropAll(this.stats);
  }

  /**
   * Checks the addresses, makes the socket and binds it. An error value if koffi is missing
   * (`unavailable` set: the caller may use the dgram cable instead) or the bind fails.
   */
  static create(options: UdpCableOptions): Result<UdpSocketCable> & { unavailable?: true } {
    const refusal = refuseUdpCableOptions(options);
    if (refusal !== null) return { ok: false, error: refusal };
    const libc = udpLibc();
    if (typeof libc === 'string') return { ok: false, error: `UDP cable: ${libc}`, unavailable: true };
    const localHost = options.localHost ?? '127.0.0.1';
    const localIp = parseIpv4(localHost)!;
    const fd = libc.socket(NET.AF_INET, NET.SOCK_DGRAM | NET.SOCK_NONBLOCK | NET.SOCK_CLOEXEC, 0);
    if (fd < 0) return { ok: false, error: `UDP cable: cannot make a socket: ${errnoName(-fd)}` };
    // A NIC takes a window of 128 frames of up to 9 KiB at once: buffers that hold one (the
    // kernel caps them at net.core.rmem_max / wmem_max; the default 208 KiB loses a burst's tail).
    const size = Int32Array.of(SOCKET_BUFFER_BYTES);
    libc.setsockopt(fd, NET.SOL_SOCKET, NET.SO_RCVBUF, size, 4);
    libc.setsockopt(fd, NET.SOL_SOCKET, NET.SO_SNDBUF, size, 4);
    const bound = libc.bind(fd, sockaddrIn(ipBytes(localIp), options.localPort), SOCKADDR_IN_BYTES);
    if (bound < 0) {
      libc.close(fd);
      const why = errnoName(-bound);
      return {
        ok: false,
        error: -bound === NET.EADDRINUSE
          ? `UDP cable: port ${options.localPort} on ${localHost} is already bound by another socket (another NIC ` +
            `or program): bind ${why}`
          : `UDP cable: cannot bind ${localHost}:${options.localPort}: ${why}`,
      };
    }
    const name = new Uint8Array(SOCKADDR_IN_BYTES);
    const nameLength = Uint32Array.of(SOCKADDR_IN_BYTES);
    const named = libc.getsockname(fd, name, nameLength);
    if (named < 0) {
      libc.close(fd);
      return { ok: false, error: `UDP cable: getsockname: ${errnoName(-named)}` };
    }
    const port = new DataView(name.buffer).getUint16(2, false);
    const remoteIp = parseIpv4(options.remoteHost ?? '127.0.0.1')!;
    return { ok: true, value: new UdpSocketCable(libc, fd, port, options, remoteIp) };
  }

  /** The socket to poll for frames (-1 once closed). */
  get fd(): number {
    return this.socket;
  }

  get remotePort(): number {
    return this.remotePortValue;
  }

  /** Points the cable at another remote port (for example one picked by the system). */
  setRemotePort(port: number): Result<void> {
    const refusal = refuseRemotePort(port);
    if (refusal !== null) return { ok: false, error: refusal };
    this.remotePortValue = port;
    this.remoteAddress = sockaddrIn(ipBytes(this.remoteIp), port);
    return { ok: true, value: undefined };
  }

  send(frame: Uint8Array, length: number): void {
    if (!(length >= 0 && length <= frame.length))
      throw new RangeError(`UdpSocketCable.send: length ${length} outside ${frame.length} bytes`);
    if (this.socket < 0 || length > this.maxFrameBytes) {
      this.stats.sendDropped++;
      return;
    }
    const sent = this.libc.sendto(this.socket, frame, length, NET.MSG_DONTWAIT, this.remoteAddress, SOCKADDR_IN_BYTES);
    if (sent !== length) {
      // EAGAIN: the send buffer is full, the frame is lost as on a full transmit queue.
      this.stats.sendDropped++;
      if (sent < 0 && -sent !== NET.EAGAIN) this.error = `UDP cable: sendto: ${errnoName(-sent)}`;
      return;
    }
    this.stats.framesSent++;
    this.stats.bytesSent += length;
  }

  setReceiver(onFrame: FrameReceiver): void {
    this.receiver = onFrame;
  }

  /**
   * Frames the event loop kept, plus 1 if datagrams may still wait in the socket after a
   * delivery that took its whole share (else poll tells).
   */
  get pending(): number {
    return this.stashTail - this.stashHead + (this.more ? 1 : 0);
  }

  /**
   * Lets Node's event loop read the socket too (a dgram socket on this fd, unref'd: it keeps
   * no process alive): what it reads is kept for the next deliverPending, then `onArrival`
   * runs. From then on that socket owns the fd and close() closes it.
   */
  watch(onArrival: () => void): void {
    if (this.watcher !== undefined || this.socket < 0) return;
    this.onArrival = onArrival;
    for (let i = 0; i < STASH_SLOTS; i++) this.stash.push(new Uint8Array(this.maxFrameBytes));
    const w = createSocket('udp4');
    w.on('message', this.onMessage);
    w.on('error', (e: Error) => { this.error = `UDP cable: socket error: ${e.message}`; });
    w.bind({ fd: this.socket } as unknown as number, () => { w.unref(); });
    w.unref();
    this.watcher = w;
  }

  private readonly onMessage = (msg: Buffer, from: RemoteInfo): void => {
    if (this.socket < 0) return;
    if (from.port !== this.remotePortValue || from.address !== this.remoteHost || msg.length > this.maxFrameBytes ||
      this.stashTail - this.stashHead >= STASH_SLOTS) {
      this.stats.receiveDropped++;
      return;
    }
    const slot = this.stashTail % STASH_SLOTS;
    this.stash[slot]!.set(msg);
    this.stashLengths[slot] = msg.length;
    this.stashTail++;
    this.onArrival();
  };

  /**
   * Takes the datagrams waiting in the socket (up to FRAMES_PER_DELIVERY), each handed to the
   * receiver from the cable's one receive buffer. Returns how many were handed on.
   */
  deliverPending(): number {
    const fd = this.socket;
    this.more = false;
    if (fd < 0) return 0;
    let delivered = 0;
    while (this.stashHead !== this.stashTail) {
      const slot = this.stashHead % STASH_SLOTS;
      const n = this.stashLengths[slot]!;
      this.stashHead++;
      this.stats.framesReceived++;
      this.stats.bytesReceived += n;
      this.receiver(this.stash[slot]!, n);
      delivered++;
    }
    const buf = this.receiveBuffer;
    const from = this.from;
    for (let i = 0; i < FRAMES_PER_DELIVERY; i++) {
      this.fromLength[0] = SOCKADDR_IN_BYTES;
      // MSG_TRUNC: the datagram's whole length comes back, so one longer than the buffer is seen and dropped.
      const n = this.libc.recvfrom(fd, buf, buf.length, NET.MSG_DONTWAIT | NET.MSG_TRUNC, from, this.fromLength);
      if (n < 0) {
        if (-n !== NET.EAGAIN && -n !== NET.EINTR) this.error = `UDP cable: recvfrom: ${errnoName(-n)}`;
        return delivered;
      }
      const port = (from[2]! << 8) | from[3]!;
      const ip = ((from[4]! << 24) | (from[5]! << 16) | (from[6]! << 8) | from[7]!) >>> 0;
      if (port !== this.remotePortValue || ip !== this.remoteIp || n > this.maxFrameBytes) {
        this.stats.receiveDropped++;
        continue;
      }
      this.stats.framesReceived++;
      this.stats.bytesReceived += n;
      this.receiver(buf, n);
      delivered++;
    }
    this.more = true;
    return delivered;
  }

  close(): void {
    if (this.socket < 0) return;
    if (this.watcher !== undefined) {
      this.watcher.off('message', this.onMessage);
      try {
        this.watcher.close(); // closes the fd it was given
      } catch {
        this.libc.close(this.socket); // its bind had not completed: the fd is still ours
      }
    } else {
      this.libc.close(this.socket);
    }
    this.socket = -1;
  }
}

function ipBytes(ip: number): number[] {
  return [ip >>> 24, (ip >>> 16) & 0xff, (ip >>> 8) & 0xff, ip & 0xff];
}
