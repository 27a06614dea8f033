/**
 * The guest data NIC's UDP socket, made here with a large receive buffer and handed to QEMU.
 *
 * QEMU's own dgram socket keeps the kernel's default receive buffer (net.core.rmem_default,
 * 212,992 bytes: about 92 datagrams of a 1 KiB-MTU RoCE packet, counted by their truesize).
 * The guest drains it at TCG speed, and a send_bw window of 128 packets overflows it at once:
 * measured 331 to 2,380 datagrams dropped per three-step run in /proc/net/udp's drops column
 * for QEMU's port, each loss answered by a sequence NAK and a go-back-N resend of the window,
 * whose stale copies then wait in the same queue ahead of the resent packet. A slow guest then
 * needs longer than the host's 7 retries (0.5 s) to reach it, and the host's send fails
 * "retry exceeded" (the model's pacing after a timeout, docs/hardware.md, is the other half of
 * that fix). A socket with SO_RCVBUF of 4 MiB holds every window the host may send, so nothing
 * is lost on the way in and the RC protocol, not the harness, decides what is retransmitted.
 * Linux grants at most net.core.rmem_max without CAP_NET_ADMIN (Linux's default is 212,992;
 * this machine's is 4 MiB); with less, the run still passes, with losses RC recovers from.
 *
 * Node offers no documented way to hand a dgram socket to a child; its handle's fd (libuv's
 * uv_udp_t) is read, and when that is not available the caller lets QEMU make its own socket
 * (and logs why).
 */
import { createSocket, type Socket } from 'node:dgram';

/** What the socket asks for (the kernel caps it at net.core.rmem_max without CAP_NET_ADMIN). */
export const DATA_SOCKET_BUFFER_BYTES = 4 << 20;

export interface DataSocket {
  /** The descriptor to pass to QEMU (valid until close). */
  readonly fd: number;
  /** The receive buffer the kernel granted (SO_RCVBUF, as Linux reports it: doubled). */
  readonly receiveBufferBytes: number;
  /** Closes this process's copy (QEMU keeps its own once started); again is a no-op. */
  close(): void;
}

type Result = { socket: DataSocket } | { error: string };

/** Runs `start` and waits for its callback, or rejects with the socket's error. */
function settled(socket: Socket, start: (done: () => void) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    start(() => { socket.off('error', reject); resolve(); });
  });
}

/** Bound to 127.0.0.1:guestPort, connected to 127.0.0.1:hostPort; an error (with why) if Node will not give its fd. */
export async function openDataSocket(guestPort: number, hostPort: number): Promise<Result> {
  const bytes = DATA_SOCKET_BUFFER_BYTES;
  const socket: Socket = createSocket({ type: 'udp4', recvBufferSize: bytes, sendBufferSize: bytes });
  const failed = (why: string): Result => {
    try { socket.close(); } catch { /* already closed */ }
    return { error: why };
  };
  try {
    await settled(socket, (done) => socket.bind(guestPort, '127.0.0.1', done));
    await settled(socket, (done) => socket.connect(hostPort, '127.0.0.1', done));
  } catch (e) {
    return failed(`cannot open the data socket on 127.0.0.1:${guestPort}: ${(e as Error).message}`);
  }
  // Nothing may be read here: every datagram is QEMU's. The handle is read from the socket's
  // state (lib/dgram.js keeps it under a symbol described "state symbol"), not through the
  // deprecated `_handle` getter (DEP0112), which would print a warning in every run.
  type Handle = { fd?: unknown; recvStop?: () => number };
  const holder = socket as unknown as Record<symbol, { handle?: Handle } | undefined>;
  const stateKey = Object.getOwnPropertySymbols(socket).find((k) => k.description === 'state symbol');
  const handle = stateKey !== undefined ? holder[stateKey]?.handle : undefined;
  handle?.recvStop?.();
  const fd = handle?.fd;
  if (typeof fd !== 'number' || fd < 0) return failed('this Node does not expose a UDP socket\'s descriptor');
  let open = true;
  const close = (): void => { if (open) { open = false; socket.close(); } };
  return { socket: { fd, receiveBufferBytes: socket.getRecvBufferSize(), close } };
}
