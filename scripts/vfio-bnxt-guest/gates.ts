/**
 * Gates two guests wait at, so one's client starts only once the other's server listens: a guest
 * asks by name over TCP (steps.sh `gate NAME`: one line to 10.0.2.2:PORT, slirp's way to the
 * host's 127.0.0.1) and is told "go" once the host opened that gate, "wait" until then. The host
 * opens a gate when it sees, on the other guest's console, that its side is ready.
 */
import { createServer, type Server, type Socket } from 'node:net';

export interface Gates {
  readonly port: number;
  open(name: string): void;
  /** The gates opened so far, in order. */
  readonly opened: () => readonly string[];
  close(): Promise<void>;
}

export function startGates(): Promise<Gates> {
  const open = new Set<string>();
  const order: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    let text = '';
    s.on('data', (d) => {
      text += d.toString('latin1');
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      s.end(open.has(text.slice(0, nl).trim()) ? 'go\n' : 'wait\n');
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve({
      port: (server.address() as { port: number }).port,
      open: (name) => {
        if (!open.has(name)) order.push(name);
        open.add(name);
      },
      opened: () => [...order],
      close: () => new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
    }));
  });
}
