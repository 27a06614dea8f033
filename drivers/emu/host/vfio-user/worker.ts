/**
 * The vfio-user server's thread: owns the socket, the software NIC model and guest memory.
 * Waits for the socket to become readable with poll on koffi's thread pool (so this thread's
 * event loop keeps serving the model's cable, timers and control messages while QEMU is quiet),
 * then takes every message there is, handles each, lets the model run, and sleeps on a timer
 * until the model's next deadline. Only this thread reads the socket: an in-band DMA (remote-dma.ts)
 * reads its reply itself, from inside the model, and the requests that came meanwhile and need the
 * model wait in `deferred` for the model's run to end. Reports to the parent with ServerEvent messages.
 */
import { workerData, parentPort } from 'node:worker_threads';
import { unlinkSync } from 'node:fs';
import type { EmuConfig } from '../../model/config.ts';
import { NicVfioDevice } from './nic-device.ts';
import { VfioUserSession } from './session.ts';
import { CMD, commandName, HEADER_BYTES } from './protocol.ts';
import {
  acceptAsync, closeFd, FdReceiver, listenUnix, ReadablePoller, sendAll, shutdownAndClose, shutdownSocket,
} from './socket-libc.ts';
import { RemoteDma } from './remote-dma.ts';
import { receiveMessage, type Message } from './receive-message.ts';
import { errnoName } from '../../../native/libc.ts';
import { ModelInternalError } from '../../model/bus.ts';
import type { ServerEvent, ServerRequest } from './events.ts';

const { socketPath, config, verbose, tracePath, dmaReplyLimitMs } = workerData as {
  socketPath: string; config: EmuConfig; verbose: boolean; tracePath: string | undefined;
  dmaReplyLimitMs: number | undefined;
};
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
let poller: ReadablePoller | undefined;
let inBand: RemoteDma | undefined;

/** Requests that came while an in-band DMA waited, in order, for when the model is free. */
const deferred: Message[] = [];
/** Set once a request was deferred during the current wait: everything after it waits too (ordering). */
let deferring = false;
/** Answered during a wait: they read state and change nothing, so they need not wait for the model. */
const ANSWERED_DURING_DMA = new Set<number>([
  CMD.REGION_READ, CMD.DEVICE_GET_INFO, CMD.DEVICE_GET_REGION_INFO, CMD.DEVICE_GET_IRQ_INFO,
]);

const session = new VfioUserSession(device, (bytes) => {
  const r = sendAll(connFd, bytes);
  if (r < 0 && !closing) log(`send failed: ${errnoName(r)}`);
}, verbose ? log : (line) => { if (line.includes('internal error')) log(line); });

post({ kind: 'listening', socketPath });
acceptAsync(listenFd, (fd) => {
  if (fd < 0 || closing) return finish(closing ? 'closed' : 'accept failed');
  connFd = fd;
  poller = new ReadablePoller(fd);
  inBand = new RemoteDma({
    fd, limitMs: dmaReplyLimitMs, maxTransferBytes: () => session.maxTransferBytes, log: verbose ? log : () => {},
    onRequest: (h, body, fds) => {
      // A read answered now, with the registers as the model left them, keeps a vCPU that waits
      // for it (holding QEMU's lock) from stalling our DMA. A read after a deferred write waits
      // too: a read never passes an earlier posted write.
      if (!deferring && ANSWERED_DURING_DMA.has(h.command) && fds.length === 0) session.handle(h, body, fds);
      else {
        if (verbose) log(`${commandName(h.command)} (id ${h.id}) kept until the model's run is over`);
        deferring = true;
        deferred.push({ header: h, body, fds });
      }
    },
    onBroken: (why) => { setImmediate(() => finish(why)); },
  });
  device.memory.inBand = inBand;
  device.dmaWaiting = () => inBand!.waiting;
  post({ kind: 'connected' });
  next();
});

/** Waits (off this thread) until the socket is readable, then takes every message there is. */
let pollPending = false;
let afterPoll: (() => void) | undefined;
function next(): void {
  pollPending = true;
  poller!.waitAsync(() => {
    pollPending = false;
    if (closing) return afterPoll?.();
    // An in-band DMA may have read what woke the wait: take only what is there now (a bounded
    // batch, so that the cable's frames and the timers get the event loop between batches).
    for (let i = 0; i < 64 && !closing && poller!.wait(0); i++) {
      if (!receiveOne()) return;
    }
    if (!closing) next();
  });
}

/** Receives and handles one message; false once the server is finishing. */
function receiveOne(): boolean {
  const m = receiveMessage(connFd, header);
  if (typeof m === 'string') {
    finish(m);
    return false;
  }
  return handle(m);
}

/** Handles one message and lets the model run; false once the server is finishing. */
function handle(m: Message): boolean {
  session.handle(m.header, m.body, m.fds);
  if (modelStopped()) return false;
  pump();
  return !closing;
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
  takeDeferred();
  if (closing) return;
  if (timer) { clearTimeout(timer); timer = undefined; }
  const deadline = device.nextDeadlineNs();
  if (deadline !== Infinity) timer = setTimeout(pump, Math.max(0, (deadline - performance.now() * 1e6) / 1e6));
}

let takingDeferred = false;
/** The requests an in-band DMA's wait kept, in order, now that the model is free. */
function takeDeferred(): void {
  if (takingDeferred || inBand?.waiting) return;
  takingDeferred = true;
  try {
    deferring = false;
    while (deferred.length > 0 && !closing) {
      if (!handle(deferred.shift()!)) return;
      deferring = false;
    }
  } finally {
    takingDeferred = false;
  }
}

/**
 * A strict model that broke an invariant stopped (its runs throw ModelInternalError from then
 * on, also inside a BAR access the session answered with an error). The host hears of it at
 * once, as drivers/emu/host/worker.ts reports it, and the server ends: a dead device serves no guest.
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
  if (closing) return; // once: a second run would close fds that other threads may have been handed since
  closing = true;
  if (timer) clearTimeout(timer);
  const stats = {
    traceLines: device.model.traceLines, messages: session.stats.messages, errors: session.stats.errors,
    byCommand: Object.fromEntries(session.stats.byCommand), iommuFaults: device.model.iommu.faults,
    engineCounters: device.model.control('engine.counters', []) as Record<string, number>,
  };
  for (const m of deferred.splice(0)) for (const fd of m.fds) closeFd(fd);
  device.memory.inBand = undefined;
  shutdownAndClose(listenFd);
  try { unlinkSync(socketPath); } catch { /* gone */ }
  device.close();
  post({ kind: 'ended', reason, stats });
  // A wait for the socket still running on koffi's thread pool ends at the shutdown; the socket
  // is closed and the thread let go only once it has (its callback runs on this thread's loop).
  if (connFd >= 0) {
    if (pollPending) { shutdownSocket(connFd); afterPoll = () => { closeFd(connFd); parentPort!.close(); }; return; }
    shutdownAndClose(connFd);
  }
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
