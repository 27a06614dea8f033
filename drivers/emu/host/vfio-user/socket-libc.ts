/**
 * The libc calls the vfio-user server (and its test client) make, bound with koffi (the
 * process's one libc binding, drivers/native/libc.ts, loaded at the first call): unix
 * stream sockets, recvmsg/sendmsg with SCM_RIGHTS (Node's net module drops passed fds), shutdown
 * to wake a blocked call, eventfd. Blocking calls have an `…Async` form that runs on koffi's
 * thread pool and calls back on the event loop, so the event loop never blocks.
 *
 * Constants are x86_64 Linux (sys/socket.h, bits/socket.h, sys/eventfd.h).
 */
import { lastErrno, libcFunction, loadKoffi, type Pointer } from '../../../native/libc.ts';

export const SOCK = {
  AF_UNIX: 1, SOCK_STREAM: 1, SOCK_CLOEXEC: 0x80000, SOL_SOCKET: 1, SCM_RIGHTS: 1,
  MSG_WAITALL: 0x100, MSG_NOSIGNAL: 0x4000, MSG_CMSG_CLOEXEC: 0x40000000, SHUT_RDWR: 2,
  EFD_CLOEXEC: 0x80000, EFD_NONBLOCK: 0x800,
} as const;

/** Room for this many fds in one message's control data (QEMU sends at most max_msg_fds). */
export const MAX_FDS = 16;
const SOCKADDR_UN_BYTES = 110;
const CMSG_HEADER_BYTES = 16;
const CONTROL_BYTES = CMSG_HEADER_BYTES + MAX_FDS * 4;

type Callback = (error: unknown, result: number) => void;
interface AsyncFn { async(...args: unknown[]): void }

interface Bound {
  socket(domain: number, type: number, protocol: number): number;
  bind(fd: number, addr: Uint8Array, len: number): number;
  listen(fd: number, backlog: number): number;
  accept4(fd: number, addr: null, len: null, flags: number): number;
  connect(fd: number, addr: Uint8Array, len: number): number;
  recvmsg(fd: number, msg: never, flags: number): number | bigint;
  sendmsg(fd: number, msg: never, flags: number): number | bigint;
  recv(fd: number, buf: Uint8Array, len: number, flags: number): number | bigint;
  send(fd: number, buf: Uint8Array, len: number, flags: number): number | bigint;
  shutdown(fd: number, how: number): number;
  close(fd: number): number;
  eventfd(initval: number, flags: number): number;
  read(fd: number, buf: Uint8Array, len: number): number | bigint;
  poll(fds: never, nfds: number, timeoutMs: number): number;
  malloc(len: number): unknown;
  free(ptr: unknown): void;
}

let bound: (Bound & { accept4Async: AsyncFn; recvmsgAsync: AsyncFn; pollAsync: AsyncFn }) | undefined;

function lib(): NonNullable<typeof bound> {
  if (bound) return bound;
  const l = libcFunction;
  const f = {
    socket: l('int socket(int domain, int type, int protocol)'),
    bind: l('int bind(int fd, const void *addr, uint32_t len)'),
    listen: l('int listen(int fd, int backlog)'),
    accept4: l('int accept4(int fd, void *addr, void *len, int flags)'),
    connect: l('int connect(int fd, const void *addr, uint32_t len)'),
    recvmsg: l('intptr_t recvmsg(int fd, void *msg, int flags)'),
    sendmsg: l('intptr_t sendmsg(int fd, const void *msg, int flags)'),
    recv: l('intptr_t recv(int fd, void *buf, size_t len, int flags)'),
    send: l('intptr_t send(int fd, const void *buf, size_t len, int flags)'),
    shutdown: l('int shutdown(int fd, int how)'),
    close: l('int close(int fd)'),
    eventfd: l('int eventfd(unsigned int initval, int flags)'),
    read: l('intptr_t read(int fd, void *buf, size_t len)'),
    poll: l('int poll(void *fds, unsigned long nfds, int timeout)'),
    malloc: l('void *malloc(size_t len)'),
    free: l('void free(void *ptr)'),
  };
  bound = {
    ...(f as unknown as Bound), accept4Async: f.accept4 as unknown as AsyncFn,
    recvmsgAsync: f.recvmsg as unknown as AsyncFn, pollAsync: f.poll as unknown as AsyncFn,
  };
  return bound;
}

const errno = (r: number | bigint): number => (Number(r) < 0 ? -lastErrno() : Number(r));

/**
 * Native memory that never moves (V8 may move small typed arrays): pointers stored inside a
 * msghdr, and buffers a call on another thread fills, live here.
 */
function nativeBytes(length: number): { readonly ptr: Pointer; readonly bytes: Uint8Array; readonly view: DataView } {
  const ptr = BigInt(lib().malloc(length) as unknown as bigint);
  if (ptr === 0n) throw new Error(`malloc(${length}) failed`);
  const ab = loadKoffi().view(ptr as never, length) as ArrayBuffer;
  return { ptr, bytes: new Uint8Array(ab), view: new DataView(ab) };
}

function freeNative(ptr: Pointer): void {
  lib().free(ptr);
}

function sockaddrUn(path: string): Uint8Array {
  const bytes = new TextEncoder().encode(path);
  if (bytes.length >= SOCKADDR_UN_BYTES - 2)
    throw new RangeError(`unix socket path is ${bytes.length} bytes: the limit is ${SOCKADDR_UN_BYTES - 3}`);
  const out = new Uint8Array(SOCKADDR_UN_BYTES);
  new DataView(out.buffer).setUint16(0, SOCK.AF_UNIX, true);
  out.set(bytes, 2);
  return out;
}

/** A listening unix stream socket at `path`; returns the fd or -errno. */
export function listenUnix(path: string): number {
  const c = lib();
  const fd = errno(c.socket(SOCK.AF_UNIX, SOCK.SOCK_STREAM | SOCK.SOCK_CLOEXEC, 0));
  if (fd < 0) return fd;
  const addr = sockaddrUn(path);
  let r = errno(c.bind(fd, addr, addr.length));
  if (r >= 0) r = errno(c.listen(fd, 1));
  if (r < 0) { c.close(fd); return r; }
  return fd;
}

/** Connects a unix stream socket to `path`; returns the fd or -errno. */
export function connectUnix(path: string): number {
  const c = lib();
  const fd = errno(c.socket(SOCK.AF_UNIX, SOCK.SOCK_STREAM | SOCK.SOCK_CLOEXEC, 0));
  if (fd < 0) return fd;
  const addr = sockaddrUn(path);
  const r = errno(c.connect(fd, addr, addr.length));
  if (r < 0) { c.close(fd); return r; }
  return fd;
}

/** accept4 on koffi's thread pool: `done(fd)` with the connection, or a negative number. */
export function acceptAsync(listenFd: number, done: (fd: number) => void): void {
  lib().accept4Async.async(listenFd, null, null, SOCK.SOCK_CLOEXEC, ((e, r) => done(e ? -1 : Number(r))) as Callback);
}

/**
 * Receives a fixed-size piece (a message header) with its ancillary fds. The msghdr, iovec,
 * control area and data live in native memory, as koffi's async call reads and fills them from
 * another thread.
 */
export class FdReceiver {
  private readonly mem: ReturnType<typeof nativeBytes>;
  private static readonly MSG = 0;
  private static readonly IOV = 64;
  private static readonly CONTROL = 128;
  private static readonly DATA = 256;

  constructor(readonly length: number) {
    this.mem = nativeBytes(FdReceiver.DATA + length);
  }

  /** The bytes of the last receive (valid until the next). */
  get data(): Uint8Array {
    return this.mem.bytes.subarray(FdReceiver.DATA, FdReceiver.DATA + this.length);
  }

  private prepare(): void {
    const { ptr, bytes, view: v } = this.mem;
    bytes.fill(0, 0, FdReceiver.DATA);
    v.setBigUint64(FdReceiver.IOV, ptr + BigInt(FdReceiver.DATA), true);
    v.setBigUint64(FdReceiver.IOV + 8, BigInt(this.length), true);
    v.setBigUint64(FdReceiver.MSG + 16, ptr + BigInt(FdReceiver.IOV), true); // msg_iov
    v.setBigUint64(FdReceiver.MSG + 24, 1n, true); // msg_iovlen
    v.setBigUint64(FdReceiver.MSG + 32, ptr + BigInt(FdReceiver.CONTROL), true); // msg_control
    v.setBigUint64(FdReceiver.MSG + 40, BigInt(CONTROL_BYTES), true); // msg_controllen
  }

  /** Fds that came with the last receive (SCM_RIGHTS). */
  fds(): number[] {
    const v = this.mem.view;
    const controllen = Number(v.getBigUint64(FdReceiver.MSG + 40, true));
    const out: number[] = [];
    let at = 0;
    while (at + CMSG_HEADER_BYTES <= controllen) {
      const base = FdReceiver.CONTROL + at;
      const len = Number(v.getBigUint64(base, true));
      if (len < CMSG_HEADER_BYTES) break;
      if (v.getInt32(base + 8, true) === SOCK.SOL_SOCKET && v.getInt32(base + 12, true) === SOCK.SCM_RIGHTS) {
        for (let p = CMSG_HEADER_BYTES; p + 4 <= len && at + p + 4 <= CONTROL_BYTES; p += 4)
          out.push(v.getInt32(base + p, true));
      }
      at += (len + 7) & ~7;
    }
    return out;
  }

  /** Fills `length` bytes (MSG_WAITALL) on koffi's thread pool; `done(bytes)`: 0 at EOF, < 0 on error. */
  receiveAsync(fd: number, done: (bytes: number) => void): void {
    this.prepare();
    const msg = this.mem.ptr + BigInt(FdReceiver.MSG);
    lib()
      .recvmsgAsync.async(fd, msg, SOCK.MSG_WAITALL | SOCK.MSG_CMSG_CLOEXEC,
      ((e, r) => done(e ? -1 : Number(r))) as Callback);
  }

  /** The same, blocking this thread (test clients). */
  receive(fd: number): number {
    this.prepare();
    return errno(
      lib().recvmsg(fd, (this.mem.ptr + BigInt(FdReceiver.MSG)) as never, SOCK.MSG_WAITALL | SOCK.MSG_CMSG_CLOEXEC),
    );
  }
}

/**
 * Waits for a socket to become readable (data, end of stream or an error: POLLIN, POLLHUP,
 * POLLERR), with poll(2). Its pollfd lives in native memory, as the async form fills it on
 * koffi's thread pool. Waiting consumes nothing: another reader may take the data first.
 */
export class ReadablePoller {
  private readonly mem = nativeBytes(8);

  constructor(private readonly fd: number) {}

  private prepare(): void {
    const v = this.mem.view;
    v.setInt32(0, this.fd, true);
    v.setInt16(4, 0x001, true); // events: POLLIN (POLLHUP and POLLERR are always reported)
    v.setInt16(6, 0, true);
  }

  /** Blocks at most `timeoutMs` (0: a look, -1: no limit); true if the socket is readable. */
  wait(timeoutMs: number): boolean {
    this.prepare();
    return lib().poll(this.mem.ptr as never, 1, timeoutMs) > 0;
  }

  /** Waits without a limit on koffi's thread pool; `done()` on the event loop once readable (or closed). */
  waitAsync(done: () => void): void {
    this.prepare();
    lib().pollAsync.async(this.mem.ptr, 1, -1, (() => done()) as Callback);
  }

  close(): void {
    freeNative(this.mem.ptr);
  }
}

/** Reads exactly `into.length` bytes, blocking; returns the count (short only at EOF) or -errno. */
export function receiveAll(fd: number, into: Uint8Array): number {
  let got = 0;
  while (got < into.length) {
    const r = errno(lib().recv(fd, into.subarray(got), into.length - got, SOCK.MSG_WAITALL));
    if (r < 0) return r;
    if (r === 0) break;
    got += r;
  }
  return got;
}

/** Writes all of `bytes`, with `fds` (SCM_RIGHTS) on the first byte; returns 0 or -errno. */
export function sendAll(fd: number, bytes: Uint8Array, fds: readonly number[] = []): number {
  const c = lib();
  let sent = 0;
  if (fds.length > 0) {
    if (fds.length > MAX_FDS) throw new RangeError(`${fds.length} fds in one message: the limit is ${MAX_FDS}`);
    // The first piece (at most 4 KiB) goes with the fds through native memory; the rest by send.
    const first = Math.min(bytes.length, 4096);
    const m = nativeBytes(256 + first);
    const v = m.view;
    // malloc'd memory holds garbage: msg_name, msg_namelen, msg_flags and the cmsg padding must be
    // zero (a stray msg_name made sendmsg fail with EINVAL now and then), as prepare() does for receives.
    m.bytes.fill(0, 0, 256);
    m.bytes.set(bytes.subarray(0, first), 256);
    v.setBigUint64(64, m.ptr + 256n, true); // iovec
    v.setBigUint64(72, BigInt(first), true);
    v.setBigUint64(128, BigInt(CMSG_HEADER_BYTES + fds.length * 4), true); // cmsghdr
    v.setInt32(136, SOCK.SOL_SOCKET, true);
    v.setInt32(140, SOCK.SCM_RIGHTS, true);
    fds.forEach((f, i) => v.setInt32(144 + i * 4, f, true));
    v.setBigUint64(16, m.ptr + 64n, true); // msg_iov
    v.setBigUint64(24, 1n, true);
    v.setBigUint64(32, m.ptr + 128n, true); // msg_control
    v.setBigUint64(40, BigInt(CMSG_HEADER_BYTES + ((fds.length * 4 + 7) & ~7)), true);
    const r = errno(c.sendmsg(fd, m.ptr as never, SOCK.MSG_NOSIGNAL));
    freeNative(m.ptr);
    if (r < 0) return r;
    sent = r;
  }
  while (sent < bytes.length) {
    const r = errno(c.send(fd, bytes.subarray(sent), bytes.length - sent, SOCK.MSG_NOSIGNAL));
    if (r < 0) return r;
    sent += r;
  }
  return 0;
}

/** Wakes every thread blocked on the socket (accept, recvmsg, poll) without closing it. */
export function shutdownSocket(fd: number): void {
  lib().shutdown(fd, SOCK.SHUT_RDWR);
}

/** Wakes every thread blocked on the socket (accept, recvmsg), then closes it. */
export function shutdownAndClose(fd: number): void {
  const c = lib();
  c.shutdown(fd, SOCK.SHUT_RDWR);
  c.close(fd);
}

export function closeFd(fd: number): number {
  return errno(lib().close(fd));
}

export function makeEventfd(): number {
  return errno(lib().eventfd(0, SOCK.EFD_CLOEXEC | SOCK.EFD_NONBLOCK));
}

/** Reads an eventfd's counter (0 when it was not signalled: the fd is non-blocking). */
export function readEventfd(fd: number): number {
  const b = new Uint8Array(8);
  const r = errno(lib().read(fd, b, 8));
  return r === 8 ? Number(new DataView(b.buffer).getBigUint64(0, true)) : 0;
}
