/**
 * A software NIC's model run in a worker thread (worker.ts), in real time. The host's side:
 * a clock whose sleeps the model cuts short when it writes something, and the control port
 * (DMA maps, test calls by name, the worker's start and failure reports).
 *
 * A strict model that stops on a broken invariant posts its failure and sets the failed word
 * of the wake block; from then on the driver's next wait, relax, control call or close throws
 * that ModelInternalError here, instead of waiting for answers that will not come.
 */
import { Worker, MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Clock } from '../../device.ts';
import { ok, err, type Result } from '../../../firmware-hwrm/result.ts';
import { WriteKind } from '../model/write-queue.ts';
import { WriteQueueProducer } from './write-queue-producer.ts';
import { WAKE_COUNTER, WAKE_FAILED, WAKE_HEARTBEAT, WAKE_SLEEPING } from './wake.ts';
import { FAILURE_REPLY, controlsByName, type ControlMessage, type ControlReply } from './control.ts';
import { ModelInternalError } from '../model/bus.ts';
import type { ControlNames } from '../model/nic-model.ts';
import type { HostInit, ModelHost } from './model-host.ts';
import { findWorkerFile } from './worker-file.ts';

/** The Performance object, read once (a getter of globalThis at each use: services.ts says more). */
const perf = performance;

/**
 * A worker's start compiles and loads the model in a new thread: 0.5 s on an idle machine, up to
 * 7 s measured with six processes starting workers at a load of 30 on two cores; a bound of 10 s
 * failed opens in test suites run on such a machine.
 */
const START_TIMEOUT_US = 30_000_000;
const CALL_TIMEOUT_US = 30_000_000;
const CLOSE_TIMEOUT_US = 10_000_000;

/** Real time; sleeps end early when the model writes something; a stopped model's failure is thrown. */
class ThreadClock implements Clock {
  constructor(private readonly wake: Int32Array, private readonly port: ControlPort) {}
  nowNs(): number {
    return perf.now() * 1e6;
  }
  readNs(into: Float64Array): void {
    into[0] = perf.now() * 1e6;
  }
  /**
   * The last sleep's length and its timeout in ms as Atomics.wait takes it. The field holds
   * the number object itself (it starts as undefined, so V8 keeps it as a plain reference):
   * a wait of the same length passes that object again instead of computing a new double,
   * which would be an allocation per sleep.
   */
  private sleptUs = -1;
  private sleepMs: number | undefined = undefined;
  sleep(us: number): boolean {
    this.port.check();
    if (us !== this.sleptUs) {
      this.sleptUs = us;
      this.sleepMs = us / 1000;
    }
    const seen = Atomics.load(this.wake, WAKE_COUNTER);
    Atomics.store(this.wake, WAKE_SLEEPING, 1);
    const slept = Atomics.wait(this.wake, WAKE_COUNTER, seen, this.sleepMs);
    Atomics.store(this.wake, WAKE_SLEEPING, 0);
    this.port.check();
    return slept === 'timed-out';
  }
  relax(): void {
    this.port.check();
  }
  private lastBeat = -1;
  private stillLooks = 0;
  /** The worker's heartbeat moved within the last STILL_LOOKS looks. */
  deviceRunning(): boolean {
    const beat = Atomics.load(this.wake, WAKE_HEARTBEAT);
    if (beat !== this.lastBeat) {
      this.lastBeat = beat;
      this.stillLooks = 0;
      return true;
    }
    return ++this.stillLooks < STILL_LOOKS;
  }
}

/**
 * Looks without a heartbeat after which the worker counts as not running (~1-3 us: a worker
 * that runs beats every few hundred ns; one that sleeps or has no core does not beat at all).
 */
const STILL_LOOKS = 32;

/** The host's end of the worker's control port: replies by id, and the worker's failure report. */
class ControlPort {
  private failure: ModelInternalError | undefined;
  /** Replies read while looking for something else (the failure report), by id. */
  private readonly early = new Map<number, ControlReply>();
  constructor(private readonly port: MessagePort, private readonly wake: Int32Array, private readonly worker: Worker) {}

  /** The failure the worker reported, if it stopped (one shared-memory load until it does). */
  failed(): ModelInternalError | undefined {
    if (this.failure || Atomics.load(this.wake, WAKE_FAILED) === 0) return this.failure;
    while (!this.failure && this.take()) { /* read up to the failure report */ }
    this.failure ??= new ModelInternalError('worker', 'it stopped, and its report did not arrive');
    return this.failure;
  }

  /** Throws the worker's failure, if it stopped. */
  check(): void {
    const f = this.failed();
    if (f) throw f;
  }

  /**
   * Waits for reply `id`, sleeping on `clock`: its value, or an Error (refused, no answer in
   * time). A call the worker answered before it stopped still gets its answer; one it did not
   * answer throws the worker's failure.
   */
  awaitReply(id: number, clock: Clock, timeoutUs: number): unknown {
    const start = clock.nowNs();
    for (;;) {
      const reply = this.early.get(id);
      if (reply) {
        this.early.delete(id);
        return reply.ok ? reply.value : new Error(reply.error ?? 'control call failed');
      }
      if (this.take()) continue;
      if (this.failure) throw this.failure;
      if (clock.nowNs() - start > timeoutUs * 1000)
        return new Error(`no answer from the software NIC's worker (thread ${this.worker.threadId})`);
      try {
        clock.sleep(1000);
      } catch (e) {
        if (!(e instanceof ModelInternalError)) throw e; // its answer may have come first: look again
      }
    }
  }

  /** Reads one message: the failure report is kept, a reply filed by its id. False if none waits. */
  private take(): boolean {
    const m = receiveMessageOnPort(this.port);
    if (!m) return false;
    const reply = m.message as ControlReply;
    if (reply.id === FAILURE_REPLY)
      this.failure ??= new ModelInternalError(reply.part ?? 'worker', reply.error ?? 'no detail');
    else this.early.set(reply.id, reply);
    return true;
  }
}

/** The worker thread running the model, and the host's end of its message channel. */
function startWorker(init: HostInit): Result<{ worker: Worker; hostPort: MessagePort }> {
  // A missing worker file would only show as a start-up timeout: find it first, or say where it is not.
  const workerFile = findWorkerFile();
  if (!workerFile.ok) return workerFile;
  const { port1: hostPort, port2: modelPort } = new MessageChannel();
  let worker: Worker;
  try {
    worker = new Worker(workerFile.value, { workerData: { ...init, port: modelPort }, transferList: [modelPort] });
  } catch (e) {
    return err(`cannot start the software NIC's worker: ${(e as Error).message}`);
  }
  worker.unref();
  worker.on('error', (e) => { console.error('emu worker died:', e); });
  return ok({ worker, hostPort });
}

/** Starts the worker and waits for its first sign of life, so open fails cleanly if it cannot start. */
export function hostInWorker(init: HostInit): Result<ModelHost> {
  const spawned = startWorker(init);
  if (!spawned.ok) return spawned;
  const { worker, hostPort } = spawned.value;
  const wake = new Int32Array(init.wake);
  const port = new ControlPort(hostPort, wake, worker);
  const clock = new ThreadClock(wake, port);
  const queue = new WriteQueueProducer(init.queue, () => clock.sleep(50));
  let workerGone = false;
  const post = (m: ControlMessage) => {
    // After close nobody takes the queue: drop (frees of quarantined memory come after close).
    if (workerGone) return;
    hostPort.postMessage(m);
    queue.push(WriteKind.Control, 0, 0, 0);
  };
  let nextId = 1;
  const call = (name: string, args: unknown[]): unknown => {
    port.check();
    const id = nextId++;
    post({ op: 'call', id, name, args });
    const reply = port.awaitReply(id, clock, CALL_TIMEOUT_US);
    if (reply instanceof Error) throw reply;
    return reply;
  };
  let started: unknown;
  try {
    started = port.awaitReply(0, clock, START_TIMEOUT_US);
  } catch (e) {
    started = e instanceof Error ? e : new Error(String(e));
  }
  if (started instanceof Error) {
    void worker.terminate();
    return err(`the software NIC did not start: ${started.message}`);
  }
  return ok({
    queue,
    mapper: {
      map: (iova, memory, length) => post({ op: 'map', iova, memory, length }),
      unmap: (iova) => post({ op: 'unmap', iova }),
    },
    clock,
    // The worker's start reply names every control: the host offers the same calls by name.
    controls: controlsByName(started as ControlNames, call),
    close() {
      let failure = port.failed();
      if (!failure) {
        // The worker closes the model (sockets, the capture flushed to its file) and answers;
        // only then is it stopped, so nothing it was still writing is lost.
        const id = nextId++;
        post({ op: 'close', id });
        try {
          const reply = port.awaitReply(id, clock, CLOSE_TIMEOUT_US);
          if (reply instanceof Error)
            process.emitWarning(`software NIC: close: ${reply.message}; its worker was stopped without closing`, {
              code: 'RIG_BNXT_EMU',
            });
        } catch (e) {
          if (!(e instanceof ModelInternalError)) throw e;
          failure = e;
        }
      }
      workerGone = true;
      hostPort.close();
      void worker.terminate();
      if (failure) throw failure;
    },
  });
}
