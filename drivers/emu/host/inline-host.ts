/**
 * A software NIC's model run inline in the caller's thread on the real clock: for cables with
 * no outside peer (the loop, a pair of NICs of this process), where nothing but the driver's
 * own calls can give the model work. The model then makes all its progress inside driver
 * calls (post, poll, wait, firmware commands, destroy, close): each relax runs it at the time
 * now, and a sleep runs it, then blocks only until its next deadline (an ACK or RNR timer) or
 * the bound, whichever comes first. Timers therefore fire on time whenever the program waits
 * or polls, so retries, RNR waits and a peer's reads behave as the spec says; a program that
 * computes without calling the driver sees no progress until its next call (the worker mode,
 * worker-host.ts, is for programs that want the NIC to run while they compute).
 *
 * Why inline: with the model in a worker, every hand-off between the driver's thread and the
 * worker's needs a core each; on a loaded machine the thread that must run next often has
 * none, and round trips went bimodal (8 us in one run, 140 us in the next, p99 in ms).
 * Inline, a round trip is the CPU work alone (docs/performance.md).
 *
 * The NICs of a pair cable share one list of models: a relax or sleep on either runs both.
 * A strict model's broken invariant throws out of the call that ran it, and out of every
 * one after.
 */
import { NicModel } from '../model/nic-model.ts';
import { SharedStepping, pairLink } from '../model/cable/pair-cable.ts';
import { InlineModelsClock } from './inline-clock.ts';
import type { HostInit, ModelHost } from './model-host.ts';
import { hostServices } from './services.ts';
import { thisThreadHost } from './this-thread-host.ts';

/** Nobody notifies its sleeps: each is a bounded block until the models' next deadline. */
class InlineClock extends InlineModelsClock {
  private readonly idle = new Int32Array(new SharedArrayBuffer(4));
  protected block(ms: number): boolean {
    Atomics.wait(this.idle, 0, 0, ms);
    return false;
  }
}

/** Builds the model here; throws what its construction throws (a cable that cannot be made). */
export function hostInline(init: HostInit): ModelHost {
  const model = new NicModel(init, hostServices(init.config.mode, init.wake));
  const cable = init.config.cable;
  const link = cable.kind === 'pair' ? pairLink(cable.name) : undefined;
  const stepping = link?.stepping ?? new SharedStepping();
  // Both ends of a pair run on one clock: a virtual one (stepped) or the real one (inline).
  if (stepping.clock === 'virtual') {
    model.close();
    const name = cable.kind === 'pair' ? cable.name : '';
    throw new Error(`the pair "${name}" joins a stepped NIC: both ends of a pair are stepped, or neither`);
  }
  stepping.clock = 'real';
  stepping.models.push(model);
  const clock = new InlineClock(stepping.models);
  return thisThreadHost(model, init, clock, () => {
    const i = stepping.models.indexOf(model);
    if (i >= 0) stepping.models.splice(i, 1);
  });
}
