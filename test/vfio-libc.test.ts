// The koffi binding of libc on this machine: results and -errno come back as the raw
// system calls return them, pointer arguments are written in place, and mapped memory is
// reachable through views.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { LINUX, errnoCode, errnoName, systemLibc } from '../drivers/native/libc.ts';

const libc = systemLibc();

t.test('failures come back as -errno', async (t) => {
  t.equal(libc.open('/nonexistent/vfio/vfio', LINUX.O_RDWR), -errnoCode('ENOENT'));
  t.equal(errnoName(libc.close(1_000_000)), 'EBADF');
  const mapped = libc.mmap(4096, LINUX.PROT_READ, LINUX.MAP_SHARED, 1_000_000, 0);
  t.equal(mapped, -BigInt(errnoCode('EBADF')), 'mmap of a bad fd: MAP_FAILED turned into -EBADF');
  t.equal(errnoName(2), 'ENOENT');
  t.equal(errnoName(-2), 'ENOENT');
});

t.test('ioctl writes through a pointer argument and passes an integer by value', async (t) => {
  const fd = libc.open(fileURLToPath(import.meta.url), 0 /* O_RDONLY */ | LINUX.O_CLOEXEC);
  t.ok(fd >= 0, 'opened this test file');
  // FIGETBSZ (_IO(0x00, 2)): the kernel stores the file system block size in an int.
  const blockSize = new Uint8Array(4);
  t.equal(libc.ioctl(fd, 2, blockSize), 0);
  const size = new DataView(blockSize.buffer).getInt32(0, true);
  t.ok(size >= 512 && (size & (size - 1)) === 0, `block size ${size} was written into the buffer`);
  t.equal(errnoName(libc.ioctlValue(fd, 0x3b64, 0)), 'ENOTTY', 'a VFIO request on a plain file');
  t.equal(libc.close(fd), 0);
});

t.test('memfd, ftruncate, mmap, view, pread and pwrite reach the same memory', async (t) => {
  const fd = libc.memfd_create('vfio-libc-test', LINUX.MFD_CLOEXEC);
  t.ok(fd >= 0);
  t.equal(libc.ftruncate(fd, 8192), 0);
  const address = libc.mmap(8192, LINUX.PROT_READ | LINUX.PROT_WRITE, LINUX.MAP_SHARED, fd, 0);
  t.ok(address > 0n);
  const bytes = new Uint8Array(libc.view(address, 8192));
  bytes[4100] = 0x42;
  const got = new Uint8Array(2);
  t.equal(libc.pread(fd, got, 4099), 2);
  t.same([...got], [0, 0x42]);
  t.equal(libc.pwrite(fd, Uint8Array.of(7, 8, 9), 10), 3);
  t.same([...bytes.subarray(10, 13)], [7, 8, 9]);
  t.equal(libc.munmap(address, 8192), 0);
  t.equal(libc.close(fd), 0);
});
