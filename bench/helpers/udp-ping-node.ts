/**
 * A raw Node dgram ping-pong over 127.0.0.1 between two Node processes: the `udp-ping-node`
 * reference (bench/references.ts), the baseline the issue names for the UDP-cabled software NIC
 * ("a raw Node dgram ping-pong"). This process sends 64 bytes and sends again from the
 * 'message' callback of the echo; the echo runs in udp-echo-child.ts beside this file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { fileURLToPath } from 'node:url';
import type { JsonLine } from './json-line.ts';
import { nowNs, summarize, type Durations } from './timing.ts';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ECHO_SCRIPT = fileURLToPath(new URL('./udp-echo-child.ts', import.meta.url));
/** No echo for this long means a lost datagram or a dead echo process. */
const SILENCE_LIMIT_MS = 2_000;
const CHILD_START_LIMIT_MS = 15_000;

/**
 * Measures the ping-pong; the result line has the fields udp-ping.c prints (us_median, us_p99, us_mean, round_trips).
 */
export async function measureNodeUdpPing(d: Durations, payloadBytes = 64): Promise<JsonLine> {
  const child = spawn(process.execPath, [...process.execArgv, ECHO_SCRIPT], {
    cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'],
  });
  const socket = createSocket('udp4');
  try {
    const port = await echoPort(child);
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => socket.connect(port, '127.0.0.1', resolve));
    });
    const samples = await pingPong(socket, d, payloadBytes);
    const s = summarize(samples);
    return {
      program: 'udp-ping-node', payload_bytes: payloadBytes, round_trips: s.count, us_median: s.median / 1e3,
      us_p99: s.p99 / 1e3, us_mean: s.mean / 1e3,
    };
  } finally {
    socket.close();
    await stopChild(child);
  }
}

/** The port the echo process printed on its first line. */
function echoPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(
      () => reject(new Error(`the UDP echo process printed no port within ${CHILD_START_LIMIT_MS} ms`)),
      CHILD_START_LIMIT_MS,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the UDP echo process exited (${code}) before it printed its port`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const newline = text.indexOf('\n');
      if (newline < 0) return;
      clearTimeout(timer);
      const port = Number(text.slice(0, newline));
      if (Number.isInteger(port) && port > 0 && port < 65536) resolve(port);
      else reject(new Error(`the UDP echo process printed "${text.slice(0, newline)}", not a port`));
    });
  });
}

/** Send, wait for the echo in the 'message' callback, send again: warm-up, then one sample per round trip (ns). */
function pingPong(socket: Socket, d: Durations, payloadBytes: number): Promise<Float64Array> {
  const payload = Buffer.alloc(payloadBytes, 0xa5);
  const samples = new Float64Array(d.maxSamples);
  return new Promise((resolve, reject) => {
    let count = 0;
    let warming = true;
    const warmEnd = nowNs() + d.warmupMs * 1e6;
    let sampleEnd = 0;
    let last = 0;
    let heardAt = nowNs();
    const finish = (error?: Error) => {
      clearInterval(watchdog);
      socket.removeAllListeners('message');
      if (error) reject(error);
      else resolve(samples.subarray(0, count));
    };
    const watchdog = setInterval(() => {
      if (nowNs() - heardAt > SILENCE_LIMIT_MS * 1e6)
        finish(new Error(`no echo for ${SILENCE_LIMIT_MS} ms: a datagram was lost or the echo process stopped`));
    }, SILENCE_LIMIT_MS / 4);
    socket.on('message', (message) => {
      const t = nowNs();
      heardAt = t;
      if (message.length !== payloadBytes)
        return finish(new Error(`echo of ${message.length} bytes, sent ${payloadBytes}`));
      if (warming) {
        if (t >= warmEnd) {
          warming = false;
          last = t;
          sampleEnd = t + d.runMs * 1e6;
        }
      } else {
        samples[count++] = t - last;
        last = t;
        if (count === samples.length || t >= sampleEnd) return finish();
      }
      socket.send(payload);
    });
    socket.send(payload);
  });
}

/** Closing its stdin ends the echo process; a kill of our own child is the fallback. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin!.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
  await exited;
  clearTimeout(timer);
}
