/**
 * The libc calls of the UDP cable's socket path, bound with koffi (the process's one libc
 * binding, drivers/native/libc.ts): a non-blocking IPv4 datagram socket the model's own thread
 * reads and writes (socket, setsockopt, bind, getsockname, sendto, recvfrom), ppoll(2) to block
 * on it, an eventfd the driver's thread writes to wake that poll, and prctl for the sleeping
 * thread's timer slack. Node's dgram
 * socket delivers datagrams on an event-loop turn, which a worker busy running the model
 * takes only between slices, and which a sleeping worker reaches only through
 * Atomics.waitAsync's task: per round trip that was most of the time (docs/performance.md).
 * A read through these calls takes a datagram the moment the model looks.
 *
 * koffi is loaded on first use, never at import: the software NIC works without koffi's
 * native part (the cable then falls back to Node's dgram socket). Every call returns what the
 * system call returns: a non-negative result or -errno, read right after the call.
 *
 * Constants are x86_64 Linux (sys/socket.h, netinet/in.h, bits/poll.h, sys/eventfd.h,
 * linux/prctl.h, asm-generic/errno.h).
 */
import { koffiOrWhy, lastErrno, libcFunction } from '../../../native/libc.ts';

export const NET = {
  AF_INET: 2, SOCK_DGRAM: 2, SOCK_NONBLOCK: 0x800, SOCK_CLOEXEC: 0x80000,
  SOL_SOCKET: 1, SO_SNDBUF: 7, SO_RCVBUF: 8,
  MSG_DONTWAIT: 0x40, MSG_TRUNC: 0x20,
  POLLIN: 0x1, PR_SET_TIMERSLACK: 29,
  EFD_NONBLOCK: 0x800, EFD_CLOEXEC: 0x80000,
  EAGAIN: 11, EINTR: 4, EADDRINUSE: 98,
} as const;

/** struct sockaddr_in: family (host order), port and address (network order), 8 bytes of zero. */
export const SOCKADDR_IN_BYTES = 16;
/** struct pollfd: int fd, short events, short revents. */
export const POLLFD_BYTES = 8;

export interface UdpLibc {
  socket(domain: number, type: number, protocol: number): number;
  setsockopt(fd: number, level: number, name: number, value: Int32Array, length: number): number;
  bind(fd: number, address: Uint8Array, length: number): number;
  getsockname(fd: number, address: Uint8Array, length: Uint32Array): number;
  sendto(fd: number, data: Uint8Array, length: number, flags: number, to: Uint8Array, toLength: number): number;
  recvfrom(fd: number, into: Uint8Array, length: number, flags: number, from: Uint8Array, fromLength: Uint32Array):
    number;
  /** ppoll with a timespec {tv_sec, tv_nsec} (two int64) and no signal mask. */
  ppoll(fds: Uint8Array, count: number, timeout: Int32Array): number;
  /** prctl with one argument (PR_SET_TIMERSLACK). */
  prctl(option: number, value: number): number;
  eventfd(initial: number, flags: number): number;
  read(fd: number, into: Uint8Array, length: number): number;
  write(fd: number, from: Uint8Array, length: number): number;
  close(fd: number): number;
}

let loaded: UdpLibc | undefined;
let loadError: string | undefined;

/** The bound calls, or why koffi (or libc) could not be loaded. */
export function udpLibc(): UdpLibc | string {
  if (loaded !== undefined) return loaded;
  if (loadError !== undefined) return loadError;
  const koffi = koffiOrWhy();
  if (typeof koffi === 'string') {
    loadError = `koffi did not load: ${koffi}`;
    return loadError;
  }
  try {
    loaded = bind();
    return loaded;
  } catch (e) {
    loadError = `libc did not load: ${(e as Error).message.split('\n')[0]}`;
    return loadError;
  }
}

function bind(): UdpLibc {
  const l = (signature: string) => libcFunction(signature) as (...args: unknown[]) => number;
  // Lengths fit an int (datagrams are below 64 KiB): results come back as numbers, not bigints.
  const f = {
    socket: l('int socket(int domain, int type, int protocol)'),
    setsockopt: l('int setsockopt(int fd, int level, int name, const void *value, uint32_t length)'),
    bind: l('int bind(int fd, const void *address, uint32_t length)'),
    getsockname: l('int getsockname(int fd, void *address, void *length)'),
    sendto: l('int sendto(int fd, const void *data, size_t length, int flags, const void *to, uint32_t tolen)'),
    recvfrom: l('int recvfrom(int fd, void *into, size_t length, int flags, void *from, void *fromlen)'),
    ppoll: l('int ppoll(void *fds, uint64_t count, const void *timeout, const void *sigmask)'),
    // Variadic in C; integer arguments pass the same way on x86_64.
    prctl: l('int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)'),
    eventfd: l('int eventfd(unsigned int initial, int flags)'),
    read: l('int read(int fd, void *into, size_t length)'),
    write: l('int write(int fd, const void *from, size_t length)'),
    close: l('int close(int fd)'),
  };
  const r = (v: number): number => (v < 0 ? -lastErrno() : v);
  return {
    socket: (a, b, c) => r(f.socket(a, b, c)),
    setsockopt: (fd, level, name, value, length) => r(f.setsockopt(fd, level, name, value, length)),
    bind: (fd, address, length) => r(f.bind(fd, address, length)),
    getsockname: (fd, address, length) => r(f.getsockname(fd, address, length)),
    sendto: (fd, data, length, flags, to, toLength) => r(f.sendto(fd, data, length, flags, to, toLength)),
    recvfrom: (fd, into, length, flags, from, fromLength) => r(f.recvfrom(fd, into, length, flags, from, fromLength)),
    ppoll: (fds, count, timeout) => r(f.ppoll(fds, count, timeout, null)),
    prctl: (option, value) => r(f.prctl(option, value, 0, 0, 0)),
    eventfd: (initial, flags) => r(f.eventfd(initial, flags)),
    read: (fd, into, length) => r(f.read(fd, into, length)),
    write: (fd, from, length) => r(f.write(fd, from, length)),
    close: (fd) => r(f.close(fd)),
  };
}

/** A sockaddr_in for 127.x.y.z:port (`host` as four numbers). */
export function sockaddrIn(host: readonly number[], port: number): Uint8Array {
  const out = new Uint8Array(SOCKADDR_IN_BYTES);
  const v = new DataView(out.buffer);
  v.setUint16(0, NET.AF_INET, true);
  v.setUint16(2, port, false);
  out.set(host, 4);
  return out;
}

/** The name strerror gives the errnos this path meets, else the number. */
export function errnoName(errno: number): string {
  switch (errno) {
    case NET.EADDRINUSE: return 'EADDRINUSE (address already in use)';
    case NET.EAGAIN: return 'EAGAIN';
    case 13: return 'EACCES (permission denied)';
    case 99: return 'EADDRNOTAVAIL (address not available)';
    case 9: return 'EBADF';
    case 24: return 'EMFILE (too many open files)';
    case 105: return 'ENOBUFS';
    case 111: return 'ECONNREFUSED (nobody listens at the remote port)';
    default: return `errno ${errno}`;
  }
}
