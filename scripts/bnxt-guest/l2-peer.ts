/**
 * A minimal Ethernet peer on the far end of the software NIC's UDP cable (one frame per
 * datagram on 127.0.0.1): it answers ARP requests for its address and ICMP echo requests to
 * it, so a guest can ping "a peer on the other end of its cable". With `passPort`, the cable
 * has a second station on that far end, a host software NIC on UDP port passPort: every frame
 * the peer does not answer goes to it unchanged, and every frame it sends goes to the NIC (a
 * two-station segment, as a switch port would join them). Otherwise the rest is ignored.
 * Frames are built here from RFC 826 (ARP), RFC 791 (IPv4) and RFC 792 (ICMP) layouts.
 */
import dgram from 'node:dgram';

export interface L2Peer {
  readonly port: number;
  readonly echoesAnswered: () => number;
  readonly arpsAnswered: () => number;
  /** Frames passed each way between the NIC and the second station. */
  readonly passed: () => { readonly toStation: number; readonly toNic: number };
  close(): void;
}

function checksum(b: Uint8Array, start: number, end: number): number {
  let sum = 0;
  for (let i = start; i < end; i += 2) sum += (b[i]! << 8) | (b[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

export async function startL2Peer(
  o: { mac: Uint8Array; ip: Uint8Array; nicPort: () => number; port?: number; passPort?: number },
): Promise<L2Peer> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((r) => sock.bind(o.port ?? 0, '127.0.0.1', () => r()));
  // A station that is not running yet makes the kernel refuse a send; a cable just loses it.
  sock.on('error', () => {});
  let echoes = 0;
  let arps = 0;
  let toStation = 0;
  let toNic = 0;
  const send = (f: Uint8Array) => sock.send(f, o.nicPort(), '127.0.0.1');
  const pass = (f: Uint8Array) => {
    if (o.passPort === undefined) return;
    toStation++;
    sock.send(f, o.passPort, '127.0.0.1');
  };
  sock.on('message', (m, rinfo) => {
    // Each datagram is its own Buffer: forwarding it as it is copies nothing and reuses nothing.
    if (o.passPort !== undefined && rinfo.port === o.passPort) {
      toNic++;
      send(m);
      return;
    }
    const f = new Uint8Array(m.buffer, m.byteOffset, m.length);
    if (f.length < 42) return pass(m);
    const type = (f[12]! << 8) | f[13]!;
    if (type === 0x0806 && ((f[20]! << 8) | f[21]!) === 1 && f.subarray(38, 42).every((b, i) => b === o.ip[i])) {
      const r = new Uint8Array(42);
      r.set(f.subarray(6, 12), 0); r.set(o.mac, 6); r[12] = 0x08; r[13] = 0x06;
      r.set(f.subarray(14, 20), 14); r[21] = 2; // reply
      r.set(o.mac, 22); r.set(o.ip, 28); r.set(f.subarray(22, 28), 32); r.set(f.subarray(28, 32), 38);
      arps++;
      send(r);
      return;
    }
    if (type !== 0x0800 || f[23] !== 1 || !f.subarray(30, 34).every((b, i) => b === o.ip[i])) return pass(m);
    const ihl = (f[14]! & 0xf) * 4;
    const icmp = 14 + ihl;
    const total = (f[16]! << 8) | f[17]!;
    if (f[icmp] !== 8 || 14 + total > f.length) return pass(m);
    const r = f.slice(0, 14 + total);
    r.set(f.subarray(6, 12), 0); r.set(o.mac, 6);
    r.set(f.subarray(30, 34), 26); r.set(f.subarray(26, 30), 30); // swap addresses
    r[24] = 0; r[25] = 0;
    const ipSum = checksum(r, 14, 14 + ihl); r[24] = ipSum >>> 8; r[25] = ipSum & 0xff;
    r[icmp] = 0; r[icmp + 2] = 0; r[icmp + 3] = 0; // echo reply
    const sum = checksum(r, icmp, 14 + total); r[icmp + 2] = sum >>> 8; r[icmp + 3] = sum & 0xff;
    echoes++;
    send(r);
  });
  return {
    port: (sock.address() as { port: number }).port, echoesAnswered: () => echoes, arpsAnswered: () => arps,
    passed: () => ({ toStation, toNic }), close: () => sock.close(),
  };
}
