/**
 * The guest's way to the host's servers: the guest connects to QEMU user networking's host
 * address (10.0.2.2:PORT, which slirp maps to the host's 127.0.0.1:PORT); this relay listens
 * there and joins each connection to 127.0.0.1:target, retrying while the host's server is not
 * listening yet (at most 20 s), so a guest client may start before the server it talks to.
 * The same idea as scripts/interop/tcp-relay.mjs (slirp's guestfwd runs that one per connection).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

const RETRY_MS = 20_000;

export interface TcpRelay {
  readonly port: number;
  readonly connections: () => number;
  close(): Promise<void>;
}

export function startTcpRelay(listenPort: number, targetPort: number): Promise<TcpRelay> {
  let count = 0;
  const open = new Set<Socket>();
  const server: Server = createServer((guest) => {
    count++;
    open.add(guest);
    guest.pause();
    guest.on('error', () => {});
    guest.on('close', () => open.delete(guest));
    const deadline = Date.now() + RETRY_MS;
    const attempt = () => {
      const host = connect({ host: '127.0.0.1', port: targetPort });
      host.once('connect', () => {
        open.add(host);
        host.on('close', () => { open.delete(host); guest.destroy(); });
        guest.on('close', () => host.destroy());
        guest.pipe(host);
        host.pipe(guest);
        guest.resume();
      });
      host.once('error', () => {
        host.destroy();
        if (Date.now() > deadline || guest.destroyed) return void guest.destroy();
        setTimeout(attempt, 100);
      });
    };
    attempt();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: listenPort, host: '127.0.0.1', exclusive: true }, () => resolve({
      port: listenPort,
      connections: () => count,
      close: () => new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
    }));
  });
}
