/**
 * The eventfd that wakes a software NIC's worker blocked in poll(2) on its UDP socket
 * (worker.ts): a thread in poll cannot also wait on the write queue's futex, so the driver's
 * thread, when it queues a write while the worker sleeps (write-queue.ts), also adds 1 to
 * this eventfd, which poll watches beside the socket.
 *
 * Made by the host before the worker starts; its number travels in the write queue's header
 * (write-queue.ts WAKE_FD_WORD, as fd + 1: 0 means none), so both ends read it from the
 * memory they already share. Closed by the host after the worker has stopped. Any failure
 * (koffi missing, no fds left) leaves it out: the worker then polls with a short timeout.
 */
import { NET, udpLibc } from './cable/udp-libc.ts';

const one = new BigUint64Array([1n]);
const oneBytes = new Uint8Array(one.buffer);
const drained = new Uint8Array(8);

/** A non-blocking eventfd, or -1 if none could be made. */
export function openWakeFd(): number {
  const libc = udpLibc();
  if (typeof libc === 'string') return -1;
  const fd = libc.eventfd(0, NET.EFD_NONBLOCK | NET.EFD_CLOEXEC);
  return fd >= 0 ? fd : -1;
}

/** Wakes whoever polls `fd` (the count stays set until drained: a wake before the poll is not lost). */
export function signalWakeFd(fd: number): void {
  const libc = udpLibc();
  if (typeof libc !== 'string') libc.write(fd, oneBytes, 8);
}

/** Resets the count after a poll saw it (non-blocking: nothing to read is fine). */
export function drainWakeFd(fd: number): void {
  const libc = udpLibc();
  if (typeof libc !== 'string') libc.read(fd, drained, 8);
}

export function closeWakeFd(fd: number): void {
  const libc = udpLibc();
  if (fd >= 0 && typeof libc !== 'string') libc.close(fd);
}
