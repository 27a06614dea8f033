/**
 * The software NIC's worker thread: runs the model like hardware runs beside the host.
 * After work it spins briefly (a doorbell usually follows a doorbell), then sleeps until
 * the next bus write, frame or timer, so an idle NIC takes no CPU.
 *
 * The spin is short (SPIN_AFTER_WORK_MS): on a machine with few free cores a spinning worker
 * takes the core the driver needs to post the next doorbell, and a spin of 2 ms kept a core
 * busy through any traffic. On a socket cable it does not spin at all: its frames arrive on the
 * event loop, which a spin keeps from looking at the socket. The spin reads the clock only when
 * a write is queued, after a run that worked, or every IDLE_LOOKS looks; it then runs the model,
 * except on a cable in memory whose next deadline has not come (nothing else gives it work).
 * It beats the heartbeat (wake.ts) at every look, and the port at every frame it sends during a
 * run, so the driver spins only while this thread runs.
 *
 * Asleep, a worker whose cable is in memory blocks in Atomics.wait (a futex: woken by the
 * driver's next write in microseconds) inside its slice, and turns its event loop every
 * EVENT_LOOP_TURN_MS (captures flush on a timer), busy or not; a UDP cable whose socket this
 * thread reads through libc is run the same way, its sleep a ppoll on the socket and on the
 * driver's eventfd (socket-sleep.ts); on a socket the event loop reads (Node's dgram, a stream)
 * it waits with Atomics.waitAsync, so the event loop keeps reading the socket.
 *
 * Garbage: the data path here allocates (nearly) nothing, because V8 shrinks the young
 * generation of a thread that allocates slowly to ~1 MB (collections.ts), so even 0.7 MB/s,
 * this worker's rate before, made a scavenge every second or so. Every clock read is
 * readFreeClock's (free-clock.ts: clock_gettime through koffi into a preallocated buffer,
 * ~59 ns; performance.now() and Date.now() return a new heap number in Node 20, 16 B a read,
 * an idle spin that read it at every look collected every 25 ms); times live in a Float64Array
 * (a double in a module variable is a new heap number at every store); a run's time goes in
 * as a field (model.bus.nowNs, then runNow()), never as a double argument (a heap number at
 * every call V8 does not inline: runOnce(t), engine.run(t), port.deliver(t) were); a sleep to
 * the slice's end waits whole ms (a fractional timeout is a heap number for Atomics.wait).
 * What is left (bench/qp-zero-gc.ts: 0.02-0.1 B an operation): each event-loop turn (a
 * setImmediate every EVENT_LOOP_TURN_MS, ~1 KB in Node's timers), and the code that runs once
 * a run or a sleep, a few times a batch of messages, until V8 optimizes it after some 10^6
 * operations (its baseline tiers box every double they touch: 0.3-0.6 B an operation).
 */
import { workerData, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { NicModel } from '../model/nic-model.ts';
import { FAILURE_REPLY, type ControlMessage, type ControlReply } from './control.ts';
import { ModelInternalError } from '../model/bus.ts';
import { WAKE_FAILED, WAKE_HEARTBEAT, WAKE_SLEEPING, wakeDriver } from './wake.ts';
import { writeQueueWakeFd } from './write-queue-producer.ts';
import { SocketSleep } from './socket-sleep.ts';
import { FREE_MS, FREE_NS, freeClock, readFreeClock } from './free-clock.ts';
import type { HostInit } from './model-host.ts';
import { hostServices } from './services.ts';

/** How long the model keeps looking for work after its last work, in ms (a cable in memory). */
const SPIN_AFTER_WORK_MS = 0.05;
/**
 * The same on a UDP socket this thread reads (socket-sleep.ts), and only while the driver is
 * awake: its next doorbell then usually comes within microseconds (a receive, then a send),
 * while the peer's frames, from another process, take tens of microseconds and wake the ppoll
 * at once. A spin of 50 us after every work and every wake-up cost 270-280 us of CPU a 64 B
 * round trip in each process (bench/qp-udp-pingpong.ts, load 6), more than the round trip.
 */
const SOCKET_SPIN_AFTER_WORK_MS = 0.01;
/** How long one spin slice runs before yielding to the event loop (for sockets, timers), in ms. */
const SLICE_MS = 0.05;
/**
 * Looks at the write queue between two runs of the model while nothing is queued and the last
 * run found nothing to do (a queued write, or a run that worked, runs the model at once). Each
 * run starts with a clock read (~59 ns; with performance.now() it was a new heap number, and 16
 * looks between reads were most of the worker's garbage in the zero-GC benchmark); 64 are a few
 * microseconds, far inside any timer the model keeps (ACK timeouts start at 4.096 us x 2^1).
 */
const IDLE_LOOKS = 64;
/** Longest synchronous sleep before the event loop turns (timers: the capture's flush), in ms. */
const EVENT_LOOP_TURN_MS = 20;

const data = workerData as HostInit & { port: MessagePort };
const port = data.port;
// Mode 'thread': the model reads the free clock and wakes the driver through its wake block.
const model = new NicModel(data, hostServices(data.config.mode, data.wake));
const wake = new Int32Array(data.wake);
/** A UDP socket this thread reads itself: asleep, block in ppoll on it and on the driver's eventfd. */
const pollFd = model.cablePollFd();
const socketSleep = pollFd >= 0 ? SocketSleep.forWorker(pollFd, writeQueueWakeFd(data.queue)) : undefined;
/** Frames come from a socket on the event loop: no spin, and sleep with waitAsync. */
const socketCable = (data.config.cable.kind === 'udp' || data.config.cable.kind === 'stream') &&
  socketSleep === undefined;
const spinAfterWorkMs = socketCable ? 0 : socketSleep !== undefined ? SOCKET_SPIN_AFTER_WORK_MS : SPIN_AFTER_WORK_MS;
/** No socket: frames come only from this model's own runs (the loop cable). */
const cableInMemory = !socketCable && socketSleep === undefined;
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
      wakeDriver(wake);
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
      wakeDriver(wake);
      break;
    }
  }
}

/**
 * Times in ms, kept in a Float64Array: a double stored in a module variable is a new heap
 * number at every store, and the spin stores one after every run that worked. Every clock
 * read here is readFreeClock's (free-clock.ts): performance.now() returns a new heap number.
 */
const times = new Float64Array(2);
const LAST_WORK = 0;
/** When the current slice ends (its start + sliceMs). */
const SLICE_END = 1;
readFreeClock();
times[LAST_WORK] = freeClock[FREE_MS]!;
let sleeping = false;
let scheduled = false;
/**
 * How long a slice runs before the event loop turns. A socket's frames arrive on the event
 * loop, so its slices are short. A cable in memory needs the event loop only for timers (the
 * capture's flush): its slice spins, sleeps in Atomics.wait and runs again inside one slice for
 * up to EVENT_LOOP_TURN_MS, since each turn is a setImmediate, an object, and turns every
 * 50 us were the worker's garbage in the zero-GC benchmark.
 */
const sliceMs = socketCable ? SLICE_MS : EVENT_LOOP_TURN_MS;

function slice(): void {
  scheduled = false;
  readFreeClock();
  times[SLICE_END] = freeClock[FREE_MS]! + sliceMs;
  try {
    let idle = 0;
    let worked = true;
    for (;;) {
      if (closed) return;
      // An add, as the port's beat for each frame it sends (one counter, two writers in this thread).
      Atomics.add(wake, WAKE_HEARTBEAT, 1);
      const due = worked || model.hasQueuedWrites();
      if (!due && ++idle < IDLE_LOOKS) continue;
      idle = 0;
      readFreeClock();
      const t = freeClock[FREE_MS]!;
      // A cable in memory brings nothing between runs: after a run that found nothing, with no
      // write queued, only a deadline (a timer, a frame due) can give a run work. The run's time
      // goes in as a field (bus.nowNs), never as a double argument (a heap number a call).
      if (due || !cableInMemory || model.dueAtLastReading()) {
        model.bus.nowNs = freeClock[FREE_NS]!;
        worked = model.runNow();
        if (worked) times[LAST_WORK] = t;
      }
      if (t > times[SLICE_END]!) return schedule();
      if (t - times[LAST_WORK]! <= spinAfterWorkMs && (socketSleep === undefined || driverAwake())) continue;
      if (socketCable) return sleep();
      // A cable in memory: block here until the next write or deadline, within this slice,
      // then run at once.
      sleepInSlice();
      worked = true;
    }
  } catch (e) {
    fail(e);
  }
}

/** The driver's thread is not asleep on its clock (ThreadClock.sleep): it may write again soon. */
function driverAwake(): boolean {
  return Atomics.load(wake, WAKE_SLEEPING) === 0;
}

/**
 * Blocks on the write queue (a futex: the driver's next write wakes it) until a write, the
 * model's next deadline, or the slice's end; returns at once if a write is already queued. A
 * UDP socket read through libc blocks in ppoll on it and on the eventfd the driver signals
 * with its next write (socket-sleep.ts) instead: a datagram wakes it too. With no deadline
 * before the slice's end (an idle NIC), the wait is whole milliseconds: a fractional timeout is
 * a heap number passed to Atomics.wait, and the slice's end needs no sub-ms precision.
 */
function sleepInSlice(): void {
  const tail = model.prepareSleep();
  if (tail === undefined) return;
  readFreeClock();
  const leftMs = Math.ceil(times[SLICE_END]! - freeClock[FREE_MS]!);
  const untilDeadlineMs = (model.nextDeadlineNs() - freeClock[FREE_NS]!) / 1e6;
  const timeoutMs = untilDeadlineMs < leftMs ? untilDeadlineMs : leftMs;
  if (timeoutMs > 0) {
    if (socketSleep !== undefined) socketSleep.wait(timeoutMs);
    else Atomics.wait(model.queueWords(), model.queueTailIndex(), tail, timeoutMs);
  }
  model.awake();
  readFreeClock();
  times[LAST_WORK] = freeClock[FREE_MS]!;
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
  wakeDriver(wake);
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(slice);
}

/** A socket cable's sleep: Atomics.waitAsync on the queue, so the event loop keeps reading the socket. */
function sleep(): void {
  const tail = model.prepareSleep();
  if (tail === undefined) return schedule();
  sleeping = true;
  const deadline = model.nextDeadlineNs();
  readFreeClock();
  const timeoutMs = deadline === Infinity ? undefined : Math.max(0, (deadline - freeClock[FREE_NS]!) / 1e6);
  const waited = Atomics.waitAsync(model.queueWords(), model.queueTailIndex(), tail, timeoutMs);
  if (waited.async) waited.value.then(resume);
  else resume();
}

function resume(): void {
  if (!sleeping) return;
  sleeping = false;
  model.awake();
  readFreeClock();
  times[LAST_WORK] = freeClock[FREE_MS]!;
  schedule();
}

/** Frames from a socket arrive on the event loop; make sure the model looks at them soon. */
function kick(): void {
  if (sleeping) resume();
  else {
    readFreeClock();
    times[LAST_WORK] = freeClock[FREE_MS]!;
  }
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
  wakeDriver(wake);
});
schedule();
