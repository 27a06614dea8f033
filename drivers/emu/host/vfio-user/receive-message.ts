/**
 * Reads one whole vfio-user message from a connected socket: the header (with any fds passed
 * beside it), then a body of the size the header gives. Both the server's reader (worker.ts) and
 * the in-band DMA's wait for its reply (remote-dma.ts) read the same stream, so one reader
 * serves them and the limits it applies are the same for both. A size no message can have means
 * the stream cannot be resynchronised: the fds that came with it are closed and the caller ends.
 */
import { decodeHeader, HEADER_BYTES, type Header } from './protocol.ts';
import { closeFd, FdReceiver, receiveAll } from './socket-libc.ts';

export interface Message { readonly header: Header; readonly body: Uint8Array; readonly fds: number[] }

/** The largest body accepted (2 MiB: a region read or write, or DMA_READ/WRITE data, is smaller). */
const MAX_BODY_BYTES = 1 << 21;

/** The message, or why the stream cannot go on. `header` is the caller's receiver (kept for fds). */
export function receiveMessage(fd: number, header: FdReceiver): Message | string {
  const n = header.receive(fd);
  if (n !== HEADER_BYTES) return n === 0 ? 'the client closed the connection' : `receive failed (${n} bytes)`;
  const h = decodeHeader(header.data);
  const fds = header.fds();
  if (h.size < HEADER_BYTES || h.size > HEADER_BYTES + MAX_BODY_BYTES) {
    for (const f of fds) closeFd(f);
    return `message of ${h.size} bytes (id ${h.id}, command ${h.command}): the stream cannot be resynchronised`;
  }
  const body = new Uint8Array(h.size - HEADER_BYTES);
  if (receiveAll(fd, body) !== body.length) {
    for (const f of fds) closeFd(f);
    return 'the client closed the connection inside a message';
  }
  return { header: h, body, fds };
}
