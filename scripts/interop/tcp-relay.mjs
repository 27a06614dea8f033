// Run by QEMU's slirp for each guest connection to the guestfwd address (stdin/stdout are that
// connection; stderr is too, so nothing is ever written there). Connects to 127.0.0.1:PORT,
// retrying while the host's server is not listening yet (at most 20 s), and copies bytes both ways.
import { connect } from 'node:net';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port < 1 || port > 65535) process.exit(2);
const deadline = Date.now() + 20_000;
process.stdin.pause();

function attempt() {
  const socket = connect({ host: '127.0.0.1', port });
  socket.once('connect', () => {
    process.stdin.pipe(socket);
    socket.pipe(process.stdout);
    socket.once('close', () => process.exit(0));
    process.stdin.once('end', () => socket.end());
  });
  socket.once('error', () => {
    socket.destroy();
    if (Date.now() > deadline) process.exit(1);
    setTimeout(attempt, 100);
  });
}
attempt();
