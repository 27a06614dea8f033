/**
 * The clock of models that run in the driver's own thread (inline-host.ts on in-memory cables,
 * inline-udp-host.ts on UDP cables): real time, and every relax or sleep of the driver runs the
 * models at the time now, so they make their progress inside driver calls. A sleep that finds
 * nothing to do blocks until the models' next deadline or the bound; how it blocks is the one
 * thing the two hosts do differently (a timed wait nobody notifies, or ppoll on the sockets).
 */
import type { Clock } from '../../device.ts';
import { runModelsOnce, type Stepped } from '../model/cable/pair-cable.ts';

/** The Performance object, read once (a getter of globalThis at each use: services.ts says more). */
const perf = performance;

export abstract class InlineModelsClock implements Clock {
  /** The last run did work (more may follow at once); else only a deadline (or a datagram) brings more. */
  private worked = false;
  /**
   * The last run found nothing to do. Until the driver queues a write, a run before a sleep's
   * block would find nothing either: what else gives the models work (a deadline, a datagram)
   * ends the block at once, and the run after the block takes it. The sleep then skips that
   * run: in a 64 B UDP ping-pong it was one of ~4.7 runs a round trip, each a recvfrom that
   * found nothing and a heap number (the time passed down).
   */
  private nothingToDo = false;

  /** `models` is read at every call: the host adds and removes models in this same array. */
  constructor(private readonly models: readonly Stepped[]) {}

  /** Blocks at most `ms` milliseconds; true if something other than the time woke it. */
  protected abstract block(ms: number): boolean;

  nowNs(): number {
    return perf.now() * 1e6;
  }

  readNs(into: Float64Array): void {
    into[0] = perf.now() * 1e6;
  }

  relax(): void {
    this.nothingToDo = !(this.worked = runModelsOnce(this.models, perf.now() * 1e6));
  }

  deviceRunning(): boolean {
    return this.worked;
  }

  sleep(us: number): boolean {
    const start = perf.now() * 1e6;
    const models = this.models;
    // Work done is something the caller may be waiting for: let it look before blocking.
    if (!this.nothingToDo || queuedWrites(models)) {
      if ((this.worked = runModelsOnce(models, start))) {
        this.nothingToDo = false;
        return false;
      }
    }
    let next = Infinity;
    for (let i = 0; i < models.length; i++) {
      const d = models[i]!.nextDeadlineNs();
      if (d < next) next = d;
    }
    const fullMs = us / 1000;
    const waitMs = Math.min(fullMs, (next - start) / 1e6);
    const woken = waitMs > 0 && this.block(waitMs);
    this.nothingToDo = !(this.worked = runModelsOnce(models, perf.now() * 1e6));
    // The whole bound passed only if the block ran its full timeout, cut short by nothing.
    return !woken && waitMs >= fullMs;
  }
}

function queuedWrites(models: readonly Stepped[]): boolean {
  for (let i = 0; i < models.length; i++) if (models[i]!.hasQueuedWrites()) return true;
  return false;
}
