/**
 * Software NICs on UDP cables with their models run inline in the driver's thread, each
 * reading its socket through libc (cable/udp-socket-cable.ts). A round trip between two
 * processes then costs what a datagram ping-pong costs, two wake-ups, instead of also four
 * hand-offs between a driver's thread and a worker's, each waiting for a core on a loaded
 * machine (docs/performance.md has both modes).
 *
 * A model here makes progress three ways, so a peer in another process always finds it
 * answering while this program waits, on a driver call or on the event loop:
 *   - inside driver calls, as inline-host.ts's models do: each relax runs every UDP model of
 *     this thread at the time now; a sleep runs them, then blocks in ppoll(2) on all their
 *     sockets until a datagram comes, their next deadline, or the bound;
 *   - on the event loop: it watches every socket (UdpSocketCable.watch) and runs the models
 *     when a datagram comes, so a program that awaits something else still ACKs and answers;
 *   - on a timer every TICK_MS (unref'd: it keeps no process alive), so ACK and RNR timers fire
 *     while the program waits on the event loop. A program that computes for long without
 *     calling the driver or yielding sees no progress until it does (as inline-host.ts says);
 *     Nic.open's `thread` runs the model in a worker for that.
 *
 * Every UDP NIC of this thread runs in one group: a wait on one runs all of them (two NICs of
 * one process cabled to each other, directly or through a relay, each answer the other).
 * A strict model's broken invariant throws out of the next driver call (the event loop's
 * runs keep it for that call).
 */
import { NicModel } from '../model/nic-model.ts';
import { runModelsOnce } from '../model/cable/pair-cable.ts';
import { SocketSleep } from './socket-sleep.ts';
import { InlineModelsClock } from './inline-clock.ts';
import type { HostInit, ModelHost } from './model-host.ts';
import { hostServices } from './services.ts';
import { thisThreadHost } from './this-thread-host.ts';

const TICK_MS = 5;

/** The UDP models this thread runs, their sockets' sleep, and the event loop's timer. */
class UdpGroup {
  readonly models: NicModel[] = [];
  sleeper: SocketSleep | undefined;
  private tick: ReturnType<typeof setInterval> | undefined;

  add(model: NicModel): void {
    this.models.push(model);
    this.changed();
  }

  remove(model: NicModel): void {
    const i = this.models.indexOf(model);
    if (i >= 0) this.models.splice(i, 1);
    this.changed();
  }

  /** A run from the event loop: a failure is kept by the model and thrown by the next driver call. */
  readonly runFromEventLoop = (): void => {
    try {
      runModelsOnce(this.models, performance.now() * 1e6);
    } catch {
      // bus.failure holds it; runOnce throws it again inside the next driver call.
    }
  };

  private changed(): void {
    this.sleeper = SocketSleep.forInline(this.models.map((m) => m.cablePollFd()).filter((fd) => fd >= 0));
    if (this.models.length > 0 && this.tick === undefined) {
      this.tick = setInterval(this.runFromEventLoop, TICK_MS);
      this.tick.unref();
    } else if (this.models.length === 0 && this.tick !== undefined) {
      clearInterval(this.tick);
      this.tick = undefined;
    }
  }
}

const group = new UdpGroup();

/** Its sleeps block in ppoll(2) on every UDP model's socket: a datagram ends one early. */
class InlineUdpClock extends InlineModelsClock {
  constructor() {
    super(group.models);
  }
  protected block(ms: number): boolean {
    return group.sleeper !== undefined ? group.sleeper.wait(ms) : false;
  }
}

/** Builds the model here, on a UDP cable read through libc; throws what its construction throws. */
export function hostInlineUdp(init: HostInit): ModelHost {
  const model = new NicModel(init, hostServices(init.config.mode, init.wake));
  if (model.cablePollFd() < 0) {
    model.close();
    throw new Error('an inline UDP NIC needs its socket read through libc (koffi did not load)');
  }
  group.add(model);
  model.watchCable(group.runFromEventLoop);
  const clock = new InlineUdpClock();
  return thisThreadHost(model, init, clock, () => {
    group.remove(model);
  });
}
