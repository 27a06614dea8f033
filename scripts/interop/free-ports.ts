/**
 * Free ports on 127.0.0.1 for one guest run: bind port 0, read the number, close, hand it on.
 * Parallel runs therefore never share a port (a small window remains between close and reuse;
 * QEMU and the host command bind within a second).
 */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

export interface RunPorts {
  /** QEMU's -netdev dgram local end (the guest's data NIC). */
  readonly guestPort: number;
  /** The host command's end of the data NIC. */
  readonly hostPort: number;
  /** 127.0.0.1 TCP port of slirp's hostfwd to the guest's ibv_rc_pingpong port (the host connects here). */
  readonly tcpPort: number;
  /** 127.0.0.1 TCP port where the host's server listens when the guest connects through guestfwd. */
  readonly serverPort: number;
}

export function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

export function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Distinct free ports: two UDP, two TCP. */
export async function pickRunPorts(): Promise<RunPorts> {
  const guestPort = await freeUdpPort();
  let hostPort = await freeUdpPort();
  for (let tries = 0; hostPort === guestPort && tries < 10; tries++) hostPort = await freeUdpPort();
  if (hostPort === guestPort) throw new Error('could not find two distinct free UDP ports on 127.0.0.1');
  const tcpPort = await freeTcpPort();
  let serverPort = await freeTcpPort();
  for (let tries = 0; serverPort === tcpPort && tries < 10; tries++) serverPort = await freeTcpPort();
  if (serverPort === tcpPort) throw new Error('could not find two distinct free TCP ports on 127.0.0.1');
  return { guestPort, hostPort, tcpPort, serverPort };
}

/** Two distinct free UDP ports on 127.0.0.1 (the two ends of a software NIC cable). */
export async function freeUdpPortPair(): Promise<[number, number]> {
  const a = await freeUdpPort();
  let b = await freeUdpPort();
  while (b === a) b = await freeUdpPort();
  return [a, b];
}
