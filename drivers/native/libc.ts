/**
 * The process's libc through koffi, for every part of drivers/ that calls it: koffi and
 * libc.so.6 are loaded here, once, and nowhere else (libdeflate, the one other native library,
 * is bound in drivers/emu/host/native-crc32.ts with the koffi this file brings). Its users:
 *
 *   drivers/vfio/                    the Libc below: open, ioctl, mmap, memfd (a real NIC)
 *   drivers/emu/host/vfio-user/      the same Libc for guest memory's mmap (guest-memory.ts), and
 *                                    unix sockets with passed fds (socket-libc.ts)
 *   drivers/emu/host/                clock_gettime (free-clock.ts), madvise (discard-pages.ts),
 *                                    the UDP cable's sockets, ppoll and eventfd (cable/udp-libc.ts)
 *
 * Each user binds the calls it makes with libcFunction and types them with its own small
 * interface (what a call returns, -errno or not, is the user's convention). Why one module below
 * both backends rather than one per backend: both map memory with the same calls, and a module
 * of the software NIC's hosts that borrowed drivers/vfio/'s binding made the hosts depend on the
 * real NIC's backend; here neither imports the other.
 *
 * koffi is loaded at the first call, never at import: the software NIC needs no native code, so
 * it keeps working where koffi's native part is missing (an install with --ignore-scripts
 * --omit=optional, an unsupported platform), each of its native accelerations falling back to JS.
 * A load that fails is not remembered here (each user keeps its own answer, and a PCI open asks
 * again). Synchronous requires, because Nic.open is synchronous.
 *
 * The Libc's calls return what the raw system call returns: a non-negative result, or -errno
 * (errno is read right after the call, before any other JS can run). Native addresses are
 * bigints, as koffi returns `void *`; they are only handled on the control path.
 */
import { createRequire } from 'node:module';
import { constants as osConstants } from 'node:os';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';

export type Koffi = typeof import('koffi');
/** A bound native function (koffi's: callable, with `.async` for koffi's thread pool). */
export type NativeFunction = ReturnType<ReturnType<Koffi['load']>['func']>;

let koffiModule: Koffi | undefined;
let libcHandle: ReturnType<Koffi['load']> | undefined;
const functions = new Map<string, NativeFunction>();

/** koffi, loaded at the first call; or why it did not load (the first line of its error). */
export function koffiOrWhy(): Koffi | string {
  if (koffiModule !== undefined) return koffiModule;
  try {
    koffiModule = createRequire(import.meta.url)('koffi') as Koffi;
    return koffiModule;
  } catch (e) {
    return (e as Error).message.split('\n')[0]!;
  }
}

/** koffi, or an Error saying why it did not load. */
export function loadKoffi(): Koffi {
  const k = koffiOrWhy();
  if (typeof k === 'string') throw new Error(`koffi did not load: ${k}`);
  return k;
}

/**
 * The libc function of C declaration `signature` ('int close(int fd)'), bound once for the
 * process (the same declaration again is the same function). Throws when koffi or libc does not load.
 */
export function libcFunction(signature: string): NativeFunction {
  let f = functions.get(signature);
  if (f === undefined) {
    const koffi = loadKoffi();
    libcHandle ??= koffi.load('libc.so.6');
    f = libcHandle.func(signature);
    functions.set(signature, f);
  }
  return f;
}

/** errno as the last native call left it (read it right after the call). */
export function lastErrno(): number {
  return loadKoffi().errno();
}

/** A native address (koffi's representation of `void *`). */
export type Pointer = bigint;

/**
 * The file, ioctl and memory calls of a real NIC's backend (drivers/vfio/) and of the vfio-user
 * server's guest memory, each returning the result or -errno. Everything above talks to this
 * interface, so tests can hand in a fake kernel.
 */
export interface Libc {
  open(path: string, flags: number): number;
  close(fd: number): number;
  /** ioctl whose argument is a pointer to `arg` (the kernel may write into it). */
  ioctl(fd: number, request: number, arg: Uint8Array): number;
  /** ioctl whose argument is an integer passed by value (or unused). */
  ioctlValue(fd: number, request: number, value: number): number;
  /** mmap(NULL, …) or, with `at`, mmap(at, …) for MAP_FIXED. Returns the address or -errno. */
  mmap(lengthBytes: number, prot: number, flags: number, fd: number, offset: number, at?: Pointer): Pointer;
  munmap(address: Pointer, lengthBytes: number): number;
  memfd_create(name: string, flags: number): number;
  ftruncate(fd: number, lengthBytes: number): number;
  pread(fd: number, into: Uint8Array, offset: number): number;
  pwrite(fd: number, from: Uint8Array, offset: number): number;
  /** An ArrayBuffer over `lengthBytes` of native memory at `address`, without a copy. */
  view(address: Pointer, lengthBytes: number): ArrayBuffer;
}

// x86_64 Linux values (asm-generic/fcntl.h, asm-generic/mman-common.h, linux/memfd.h);
// test/vfio-abi.test.ts compares each with the C headers.
export const LINUX = {
  O_RDWR: 0x2,
  O_CLOEXEC: 0o2000000,
  PROT_READ: 0x1,
  PROT_WRITE: 0x2,
  MAP_SHARED: 0x1,
  MAP_PRIVATE: 0x2,
  MAP_FIXED: 0x10,
  MAP_ANONYMOUS: 0x20,
  MAP_NORESERVE: 0x4000,
  MAP_POPULATE: 0x8000,
  MFD_CLOEXEC: 0x1,
  MFD_HUGETLB: 0x4,
  MFD_HUGE_2MB: 0x54000000,
} as const;

/** mmap's MAP_FAILED, (void *)-1, as koffi returns it. */
const MAP_FAILED = 0xffff_ffff_ffff_ffffn;

let errnoNames: Map<number, string> | undefined;

/** "ENOENT" for 2 (or "errno 2" when unknown). Accepts errno or -errno. */
export function errnoName(code: number): string {
  // Node's own table (os.constants.errno), so naming an error needs no native module.
  errnoNames ??= new Map(Object.entries(osConstants.errno).map(([name, n]) => [n, name]));
  const n = Math.abs(code);
  return errnoNames.get(n) ?? `errno ${n}`;
}

/** errno value by name, e.g. errnoCode('ENOENT') === 2. */
export function errnoCode(name: string): number {
  const n = (osConstants.errno as Record<string, number>)[name];
  if (n === undefined) throw new Error(`unknown errno name ${name}`);
  return n;
}

let loaded: Libc | undefined;

/** The process's libc, bound once. Throws when koffi cannot load (see loadSystemLibc). */
export function systemLibc(): Libc {
  loaded ??= bindLibc();
  return loaded;
}

/** systemLibc as a Result: opening a PCI device reports a missing koffi as an error, not a crash. */
export function loadSystemLibc(): Result<Libc> {
  try {
    return ok(systemLibc());
  } catch (e) {
    return err((e as Error).message);
  }
}

function bindLibc(): Libc {
  const ffi = koffiOrWhy();
  if (typeof ffi === 'string') {
    throw new Error(
      `real NICs need koffi, the FFI library rig-bnxt binds libc with, and it did not load: ` +
        `${ffi} (reinstall without --ignore-scripts/--omit=optional, or use the software NIC)`,
    );
  }
  const lib = libcFunction;
  // open is variadic in C, but its mode argument is only read with O_CREAT; we never create.
  const open = lib('int open(const char *path, int flags)');
  const close = lib('int close(int fd)');
  const ioctl = lib('int ioctl(int fd, unsigned long request, ...)');
  const mmap = lib('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)');
  const munmap = lib('int munmap(void *addr, size_t length)');
  const memfd_create = lib('int memfd_create(const char *name, unsigned int flags)');
  const ftruncate = lib('int ftruncate(int fd, int64_t length)');
  const pread = lib('int64_t pread(int fd, void *buf, size_t count, int64_t offset)');
  const pwrite = lib('int64_t pwrite(int fd, const void *buf, size_t count, int64_t offset)');

  const checked = (r: number): number => (r < 0 ? -ffi.errno() : r);
  return {
    open: (path, flags) => checked(open(path, flags)),
    close: (fd) => checked(close(fd)),
    ioctl: (fd, request, arg) => checked(ioctl(fd, request, 'void *', arg)),
    ioctlValue: (fd, request, value) => checked(ioctl(fd, request, 'unsigned long', value)),
    mmap: (lengthBytes, prot, flags, fd, offset, at) => {
      const address = BigInt(mmap(at ?? null, lengthBytes, prot, flags, fd, offset));
      return address === MAP_FAILED ? -BigInt(ffi.errno()) : address;
    },
    munmap: (address, lengthBytes) => checked(munmap(address, lengthBytes)),
    memfd_create: (name, flags) => checked(memfd_create(name, flags)),
    ftruncate: (fd, lengthBytes) => checked(ftruncate(fd, lengthBytes)),
    pread: (fd, into, offset) => checked(Number(pread(fd, into, into.byteLength, offset))),
    pwrite: (fd, from, offset) => checked(Number(pwrite(fd, from, from.byteLength, offset))),
    view: (address, lengthBytes) => ffi.view(address, lengthBytes),
  };
}
