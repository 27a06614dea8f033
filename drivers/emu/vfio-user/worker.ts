/**
 * The vfio-user server's thread: owns the socket, the software NIC model and guest memory.
 * Receives each message header with recvmsg on koffi's thread pool (so this thread's event
 * loop keeps serving the model's cable, timers and control messages while QEMU is quiet),
 * handles the message, lets the model run, and sleeps on a timer until the model's next
 * deadline. Reports to the parent thread with ServerEvent messages.
 */
import { workerData, parentPort } from 'node:worker_threads';
import { unlinkSync } from 'node:fs';
import type { EmuConfig } from '../config.ts';
import { NicVfioDevice } from './nic-device.ts';
import { VfioUserSession } from './session.ts';
import { decodeHeader, HEADER_BYTES } from './protocol.ts';
import { acceptAsync, closeFd, FdReceiver, listenUnix, receiveAll, sendAll, shutdownAndClose } from './socket-libc.ts';
import { errnoName } from '../../vfio/libc.ts';
import { ModelInternalError } from '../bus.ts';
import type { ServerEvent, ServerRequest } from './events.ts';

const { socketPath, config, verbose, tracePath } =
  workerData as { socketPath: string; config: EmuConfig; verbose: boolean; tracePath: string | undefined };
const post = (e: ServerEvent) => parentPort!.postMessage(e);
const log = (line: string) => post({ kind: 'log', line });

let device: NicVfioDevice;
try {
  // The firmware writes the decoded trace of what the guest's drivers sent (HWRM, CMDQ, CREQ).
  device = new NicVfioDevice(tracePath === undefined ? config : { ...config, tracePath });
} catch (e) {
  post({ kind: 'failed', error: `cannot start the software NIC: ${(e as Error).message}` });
  process.exit(0);
}
device.onHwrm = (o) => post({ kind: 'hwrm', ...o });
// The cable's frames arrive on this thread's event loop (a UDP cable through Node's dgram socket:
// the config sets no udpIo), which runs the model for each: a frame is taken while the guest
// waits on its CQ in memory, with no MMIO to run the model.
device.model.onExternalWork = () => pump();

try { unlinkSync(socketPath); } catch { /* absent */ }
const listenFd = listenUnix(socketPath);
if (listenFd < 0) {
  post({ kind: 'failed', error: `cannot listen on ${socketPath}: ${errnoName(listenFd)}` });
  process.exit(0);
}
let connFd = -1;
let closing = false;
let timer: NodeJS.Timeout | undefined;
const header = new FdReceiver(HEADER_BYTES);

const session = new VfioUserSession(device, (bytes) => {
  const r = sendAll(connFd, bytes);
  if (r < 0 && !closing) log(`send failed: ${errnoName(r)}`);
}, verbose ? log : (line) => { if (line.includes('internal error')) log(line); });

post({ kind: 'listening', socketPath });
acceptAsync(listenFd, (fd) => {
  if (fd < 0 || closing) return finish(closing ? 'closed' : 'accept failed');
  connFd = fd;
  post({ kind: 'connected' });
  next();
});

function next(): void {
  header.receiveAsync(connFd, (n) => {
    if (closing) return;
    if (n !== HEADER_BYTES) return finish(n === 0 ? 'the client closed the connection' : `receive failed (${n} bytes)`);
    const h = decodeHeader(header.data);
    const fds = header.fds();
    if (h.size < HEADER_BYTES || h.size > HEADER_BYTES + (1 << 21)) {
      for (const fd of fds) closeFd(fd);
      return finish(
        `message of ${h.size} bytes (id ${h.id}, command ${h.command}): the stream cannot be resynchronised`,
      );
    }
    const body = new Uint8Array(h.size - HEADER_BYTES);
    if (receiveAll(connFd, body) !== body.length) return finish('the client closed the connection inside a message');
    session.handle(h, body, fds);
    if (modelStopped()) return;
    pump();
    if (!closing) next();
  });
}

/** Runs the model until it has nothing to do now, then wakes at its next deadline. */
function pump(): void {
  if (closing) return;
  try {
    device.run();
  } catch (e) {
    return modelFailed(e);
  }
  if (modelStopped()) return;
  if (timer) { clearTimeout(timer); timer = undefined; }
  const deadline = device.nextDeadlineNs();
  if (deadline !== Infinity) timer = setTimeout(pump, Math.max(0, (deadline - performance.now() * 1e6) / 1e6));
}

/**
 * A strict model that broke an invariant stopped (its runs throw ModelInternalError from then
 * on, also inside a BAR access the session answered with an error). The host hears of it at
 * once, as drivers/emu/worker.ts reports it, and the server ends: a dead device serves no guest.
 */
function modelStopped(): boolean {
  const failure = device.model.failure;
  if (failure === undefined) return false;
  modelFailed(failure);
  return true;
}

function modelFailed(e: unknown): void {
  if (closing) return;
  const f = ModelInternalError.of('vfio-user device', e);
  post({ kind: 'model-failed', part: f.part, detail: f.detail });
  finish(f.message);
}

function finish(reason: string): void {
  if (closing && reason !== 'closed') return;
  closing = true;
  if (timer) clearTimeout(timer);
  const stats = {
    traceLines: device.model.traceLines, messages: session.stats.messages, errors: session.stats.errors,
    byCommand: Object.fromEntries(session.stats.byCommand), iommuFaults: device.model.iommu.faults,
    engineCounters: device.model.control('engine.counters', []) as Record<string, number>,
  };
  if (connFd >= 0) shutdownAndClose(connFd);
  shutdownAndClose(listenFd);
  try { unlinkSync(socketPath); } catch { /* gone */ }
  device.close();
  post({ kind: 'ended', reason, stats });
  parentPort!.close();
}

parentPort!.on('message', (m: ServerRequest) => {
  if (m.kind === 'close') return finish('closed');
  if (m.kind === 'control') {
    if (closing) return post({ kind: 'control-reply', id: m.id, ok: false, error: 'the server has ended' });
    try {
      post({ kind: 'control-reply', id: m.id, ok: true, value: device.model.control(m.name, m.args) });
    } catch (e) {
      post({ kind: 'control-reply', id: m.id, ok: false, error: (e as Error).message });
      if (e instanceof ModelInternalError) return modelFailed(e);
    }
    pump();
  }
});
