/**
 * The echo side of udp-ping-node.ts (beside it), run as its own Node process: binds a UDP socket on
 * 127.0.0.1 (port chosen by the kernel), prints the port on stdout, connects to the first
 * sender and sends every datagram straight back. Ends when its stdin closes (the parent ended).
 */
import { createSocket } from 'node:dgram';

const socket = createSocket('udp4');
let connected = false;

socket.on('message', (message, from) => {
  if (connected) {
    socket.send(message);
    return;
  }
  // First datagram: connect to its sender so later sends skip the address lookup, then echo it.
  socket.connect(from.port, from.address, () => {
    connected = true;
    socket.send(message);
  });
});
socket.on('error', (e) => {
  process.stderr.write(`udp echo: ${e.message}\n`);
  process.exit(1);
});
socket.bind(0, '127.0.0.1', () => {
  process.stdout.write(`${socket.address().port}\n`);
});

process.stdin.on('end', () => {
  socket.close();
  process.exit(0);
});
process.stdin.resume();
