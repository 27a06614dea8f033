/**
 * The network cables only ever talk over the loopback network: QEMU's dgram and stream ends
 * and other software NICs on the same machine. An address outside 127.0.0.0/8 is refused, so
 * a misconfigured cable cannot put RoCE frames onto a real network.
 */
import { parseIpv4 } from '../../model/wire/addresses.ts';

/** Null if `host` is a dotted-quad IPv4 address in 127.0.0.0/8, else why it is refused. */
export function refuseNonLoopback(host: string, what: string): string | null {
  const ip = parseIpv4(host);
  if (ip === null)
    return `${what} ${JSON.stringify(host)} is not a dotted-quad IPv4 address (cables use 127.0.0.0/8 only)`;
  if (ip >>> 24 !== 127) return `${what} ${host} is outside 127.0.0.0/8; cables only use the loopback network`;
  return null;
}

/** Null if `port` is an integer in [min, 65535], else why it is refused. */
export function refusePort(port: number, what: string, min: number): string | null {
  if (Number.isInteger(port) && port >= min && port <= 0xffff) return null;
  return `${what} ${port} is not a port number in [${min}, 65535]`;
}
