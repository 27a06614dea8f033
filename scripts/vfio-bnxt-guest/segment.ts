/**
 * An Ethernet segment for several software NICs on UDP cables (one frame per datagram on
 * 127.0.0.1, as drivers/emu/host/cable/udp-cable.ts sends them): a learning switch, one port per
 * station. Station i sends to port `switchPorts[i]` and is sent to at its own `stationPorts[i]`;
 * a frame goes to the station its destination MAC was last seen coming from, or to every other
 * station while that is not known yet (broadcast and multicast always), as a switch forwards
 * (IEEE 802.1D's learning and forwarding, without ageing: the run is short and nothing moves).
 */
import dgram from 'node:dgram';

export interface Segment {
  /** Where each station sends its frames (its cable's remote port). */
  readonly switchPorts: readonly number[];
  /** Frames forwarded to each station. */
  readonly delivered: () => readonly number[];
  close(): void;
}

const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

const macKey = (f: Uint8Array, at: number) =>
  ((f[at]! * 256 + f[at + 1]!) * 256 + f[at + 2]!) * 2 ** 24 + ((f[at + 3]! << 16) | (f[at + 4]! << 8) | f[at + 5]!);

/** A switch with one port per entry of `stationPorts` (each station's own UDP port). */
export async function startSegment(stationPorts: readonly number[]): Promise<Segment> {
  // Buffers that hold a window of frames, as the NICs' own UDP cables ask for (udp-cable.ts; the
  // kernel caps them at net.core.rmem_max / wmem_max): a burst of a 64 KiB send is 64 frames.
  const sockets = stationPorts.map(() => dgram.createSocket({
    type: 'udp4', recvBufferSize: SOCKET_BUFFER_BYTES, sendBufferSize: SOCKET_BUFFER_BYTES,
  }));
  await Promise.all(sockets.map((s) => new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()))));
  const where = new Map<number, number>();
  const delivered = stationPorts.map(() => 0);
  const send = (to: number, frame: Buffer) => {
    delivered[to]!++;
    sockets[to]!.send(frame, stationPorts[to]!, '127.0.0.1');
  };
  sockets.forEach((sock, from) => {
    // A station that is not running yet makes the kernel refuse a send; a cable just loses it.
    sock.on('error', () => {});
    sock.on('message', (frame) => {
      if (frame.length < 14) return;
      where.set(macKey(frame, 6), from);
      const to = (frame[0]! & 1) === 0 ? where.get(macKey(frame, 0)) : undefined;
      if (to !== undefined) {
        if (to !== from) send(to, frame);
        return;
      }
      for (let i = 0; i < sockets.length; i++) if (i !== from) send(i, frame);
    });
  });
  return {
    switchPorts: sockets.map((s) => (s.address() as { port: number }).port),
    delivered: () => [...delivered],
    close: () => { for (const s of sockets) s.close(); },
  };
}
