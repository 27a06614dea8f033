/**
 * How a thread that runs software NICs' models sleeps when their UDP cables are sockets it
 * reads itself (cable/udp-socket-cable.ts): ppoll(2) on those sockets, and, for a worker, on
 * the eventfd the driver's thread signals when it queues a write (wake-fd.ts), until one is
 * readable or the models' next deadline. One blocking call covers every way work arrives, so
 * a datagram wakes the thread at once, not at an event-loop turn.
 *
 * The thread's timer slack is set to 1 us first: Linux lets a sleep of a thread with the
 * default 50 us slack run that much long (prctl(2) PR_SET_TIMERSLACK), and the models' ACK and
 * RNR timers are the timeouts here. A worker without an eventfd (none could be made) cuts its
 * sleeps to SHORT_SLEEP_MS, so a queued write still waits at most that long.
 */
import { NET, POLLFD_BYTES, udpLibc, type UdpLibc } from './cable/udp-libc.ts';
import { drainWakeFd } from './wake-fd.ts';

const SHORT_SLEEP_MS = 1;
const TIMER_SLACK_NS = 1000;

export class SocketSleep {
  private readonly fds: Uint8Array;
  /** struct timespec as four int32 halves (little-endian tv_sec, tv_nsec): written without a BigInt. */
  private readonly timeout = new Int32Array(4);
  private readonly count: number;

  private constructor(
    private readonly libc: UdpLibc, sockets: readonly number[], private readonly wakeFd: number,
    private readonly capMs: number,
  ) {
    const all = wakeFd >= 0 ? [...sockets, wakeFd] : [...sockets];
    this.count = all.length;
    this.fds = new Uint8Array(Math.max(1, all.length) * POLLFD_BYTES);
    const v = new DataView(this.fds.buffer);
    all.forEach((fd, i) => {
      v.setInt32(i * POLLFD_BYTES, fd, true);
      v.setInt16(i * POLLFD_BYTES + 4, NET.POLLIN, true);
    });
    libc.prctl(NET.PR_SET_TIMERSLACK, TIMER_SLACK_NS);
  }

  /** A worker's sleep on its socket, woken through `wakeFd` too (-1: none); undefined without libc. */
  static forWorker(socketFd: number, wakeFd: number): SocketSleep | undefined {
    const libc = udpLibc();
    return typeof libc === 'string' ? undefined
      : new SocketSleep(libc, [socketFd], wakeFd, wakeFd >= 0 ? Infinity : SHORT_SLEEP_MS);
  }

  /** The driver thread's sleep on the sockets of its inline models; undefined without libc. */
  static forInline(sockets: readonly number[]): SocketSleep | undefined {
    const libc = udpLibc();
    return typeof libc === 'string' ? undefined : new SocketSleep(libc, sockets, -1, Infinity);
  }

  /** Blocks until a datagram or a wake arrives, or `ms` pass; true if something became readable. */
  wait(ms: number): boolean {
    const bounded = ms < this.capMs ? ms : this.capMs;
    const whole = Math.floor(bounded / 1000);
    const t = this.timeout;
    t[0] = whole;
    t[1] = 0;
    t[2] = Math.floor((bounded - whole * 1000) * 1e6);
    t[3] = 0;
    const ready = this.libc.ppoll(this.fds, this.count, t) > 0;
    if (this.wakeFd >= 0) drainWakeFd(this.wakeFd);
    return ready;
  }
}
