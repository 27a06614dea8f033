/**
 * The software NIC's worker thread: runs the model like hardware runs beside the host.
 * After work it spins briefly (a doorbell usually follows a doorbell), then sleeps until
 * the next bus write, frame or timer, so an idle NIC takes no CPU.
 *
 * The spin is short (SPIN_AFTER_WORK_MS): on a machine with few free cores a spinning worker
 * takes the core the driver needs to post the next doorbell, and a spin of 2 ms kept a core
 * busy through any traffic. On a socket cable it does not spin at all: its frames arrive on the
 * event loop, which a spin keeps from looking at the socket. The spin reads the clock and runs
 * the model only when a write is queued or every IDLE_LOOKS looks (a clock read allocates: an
 * idle spin that read it at every look collected garbage every 25 ms). It beats the heartbeat
 * (wake.ts) at every look, so the driver spins only while this thread runs.
 *
 * Asleep, a worker whose cable is in memory blocks in Atomics.wait (a futex: woken by the
 * driver's next write in microseconds) and turns its event loop at least every
 * EVENT_LOOP_TURN_MS (captures flush on a timer); on a socket cable it waits with
 * Atomics.waitAsync, so the event loop keeps reading the socket.
 */
import { workerData, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { NicModel, type ModelInit } from './nic-model.ts';
import { FAILURE_REPLY, type ControlMessage, type ControlReply } from './control.ts';
import { ModelInternalError } from './bus.ts';
import { WAKE_FAILED, WAKE_HEARTBEAT } from './wake.ts';

/** How long the model keeps looking for work after its last work, in ms (a cable in memory). */
const SPIN_AFTER_WORK_MS = 0.05;
/** How long one spin slice runs before yielding to the event loop (for sockets, timers), in ms. */
const SLICE_MS = 0.05;
/** Looks at the write queue between two runs of the model while it has nothing queued. */
const IDLE_LOOKS = 16;
/** Longest synchronous sleep before the event loop turns (timers: the capture's flush), in ms. */
const EVENT_LOOP_TURN_MS = 20;

const data = workerData as ModelInit & { port: MessagePort };
const port = data.port;
const model = new NicModel(data);
const wake = new Int32Array(data.wake);
/** Frames come from a socket on the event loop: no spin, and sleep with waitAsync. */
const socketCable = data.config.cable.kind === 'udp' || data.config.cable.kind === 'stream';
const spinAfterWorkMs = socketCable ? 0 : SPIN_AFTER_WORK_MS;
let beat = 0;
let closed = false;
let failed = false;

model.onControl = () => {
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) handle(m.message as ControlMessage);
};
model.onExternalWork = () => kick();

function handle(m: ControlMessage): void {
  switch (m.op) {
    case 'map': model.iommu.map(m.iova, m.memory, m.length); break;
    case 'unmap': model.iommu.unmap(m.iova); break;
    case 'call': {
      let reply: ControlReply;
      try {
        reply = { id: m.id, ok: true, value: model.control(m.name, m.args) };
      } catch (e) {
        reply = { id: m.id, ok: false, error: (e as Error).message };
        if (e instanceof ModelInternalError) fail(e);
      }
      port.postMessage(reply);
      model.wakeDriver();
      break;
    }
    case 'close': {
      closed = true;
      clearInterval(keepAlive);
      let reply: ControlReply = { id: m.id, ok: true };
      try {
        model.close();
      } catch (e) {
        reply = { id: m.id, ok: false, error: (e as Error).message };
      }
      // The host terminates this thread only after this answer: the capture is on disk by now.
      port.postMessage(reply);
      model.wakeDriver();
      break;
    }
  }
}

const now = () => performance.now() * 1e6;
let lastWorkMs = performance.now();
let sleeping = false;
let scheduled = false;

function slice(): void {
  scheduled = false;
  const sliceStart = performance.now();
  try {
    let idle = 0;
    for (;;) {
      if (closed) return;
      beat = (beat + 1) | 0;
      Atomics.store(wake, WAKE_HEARTBEAT, beat);
      if (!model.hasQueuedWrites() && ++idle < IDLE_LOOKS) continue;
      idle = 0;
      const t = performance.now();
      if (model.runOnce(t * 1e6)) lastWorkMs = t;
      if (t - lastWorkMs > spinAfterWorkMs) return sleep();
      if (t - sliceStart > SLICE_MS) return schedule();
    }
  } catch (e) {
    fail(e);
  }
}

/**
 * The model stopped: a strict model's broken invariant (or anything escaping a run). The host
 * hears of it at once, so the driver's next wait or call throws it instead of timing out, and
 * this worker runs the model no more (it answers no control either).
 */
function fail(e: unknown): void {
  if (failed) return;
  failed = true;
  closed = true;
  const f = ModelInternalError.of('worker', e);
  port.postMessage({ id: FAILURE_REPLY, ok: false, error: f.detail, part: f.part } satisfies ControlReply);
  Atomics.store(wake, WAKE_FAILED, 1);
  // A stopped model answers nothing more, so close its port now: the capture holds every frame sent.
  try {
    model.close();
  } catch {
    // The failure already reported is the one that matters.
  }
  model.wakeDriver();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(slice);
}

function sleep(): void {
  const tail = model.prepareSleep();
  if (tail === undefined) return schedule();
  sleeping = true;
  const deadline = model.nextDeadlineNs();
  const timeoutMs = deadline === Infinity ? undefined : Math.max(0, (deadline - now()) / 1e6);
  if (!socketCable) {
    // Nothing but the driver's writes (and timers) gives this model work: block on the queue.
    Atomics.wait(model.queueWords(), model.queueTailIndex(), tail,
      Math.min(timeoutMs ?? EVENT_LOOP_TURN_MS, EVENT_LOOP_TURN_MS));
    return resume();
  }
  const waited = Atomics.waitAsync(model.queueWords(), model.queueTailIndex(), tail, timeoutMs);
  if (waited.async) waited.value.then(resume);
  else resume();
}

function resume(): void {
  if (!sleeping) return;
  sleeping = false;
  model.awake();
  lastWorkMs = performance.now();
  schedule();
}

/** Frames from a socket arrive on the event loop; make sure the model looks at them soon. */
function kick(): void {
  if (sleeping) resume();
  else lastWorkMs = performance.now();
}

// A pending Atomics.waitAsync does not keep a worker's event loop alive: this timer does,
// until close.
const keepAlive = setInterval(() => {}, 1 << 30);

// Started, once the cable can carry frames: the names of the controls, from which the host
// builds its typed surface (control.ts); or why the cable cannot (a UDP port another socket
// holds), which the host's open returns as its error.
void model.cableReady().then((r) => {
  port.postMessage(
    (r.ok ? { id: 0, ok: true, value: model.controlNames() }
      : { id: 0, ok: false, error: r.error }) satisfies ControlReply,
  );
  model.wakeDriver();
});
schedule();
