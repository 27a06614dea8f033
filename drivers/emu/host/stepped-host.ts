/**
 * A software NIC's model run in the caller's thread on a virtual clock: the driver's waits
 * run it, so a run is deterministic for a given seed. The NICs of a pair cable share one
 * clock: a wait on either runs both models, and time jumps only when neither has anything to
 * do before its next deadline. A strict model's broken invariant throws out of the wait
 * (or relax) that ran it, and out of every one after.
 */
import type { Clock } from '../../device.ts';
import { NicModel } from '../model/nic-model.ts';
import { SharedStepping, pairLink, runModelsOnce } from '../model/cable/pair-cable.ts';
import type { HostInit, ModelHost } from './model-host.ts';
import { hostServices } from './services.ts';
import { thisThreadHost } from './this-thread-host.ts';

class SteppedClock implements Clock {
  constructor(private readonly stepping: SharedStepping) {}
  nowNs(): number {
    return this.stepping.nowNs;
  }
  readNs(into: Float64Array): void {
    into[0] = this.stepping.nowNs;
  }
  /** The last run did work (more may follow at this virtual time); else only time brings more. */
  private worked = false;
  relax(): void {
    this.worked = this.runAll();
  }
  deviceRunning(): boolean {
    return this.worked;
  }
  sleep(us: number): boolean {
    const s = this.stepping;
    const until = s.nowNs + us * 1000;
    // Let the models finish what they can now, then jump to the next deadline or the bound
    // (a frame in flight between two models is work now: its receiver's deadline is now).
    this.worked = this.runAll();
    const models = s.models;
    let next = Infinity;
    for (let i = 0; i < models.length; i++) next = Math.min(next, models[i]!.nextDeadlineNs());
    s.nowNs = Math.max(s.nowNs, Math.min(until, next));
    this.worked = this.runAll();
    return s.nowNs >= until;
  }
  private runAll(): boolean {
    return runModelsOnce(this.stepping.models, this.stepping.nowNs);
  }
}

/** Builds the model here; throws what its construction throws (a cable that cannot be made). */
export function hostStepped(init: HostInit): ModelHost {
  const model = new NicModel(init, hostServices(init.config.mode, init.wake));
  // A pair cable's NICs step on the pair's shared clock (its port joined the pair above).
  const cable = init.config.cable;
  const link = cable.kind === 'pair' ? pairLink(cable.name) : undefined;
  const stepping = link?.stepping ?? new SharedStepping();
  if (stepping.clock === 'real') {
    model.close();
    const name = cable.kind === 'pair' ? cable.name : '';
    throw new Error(`the pair "${name}" joins a NIC on the real clock: both ends of a pair are stepped, or neither`);
  }
  stepping.clock = 'virtual';
  stepping.models.push(model);
  const clock = new SteppedClock(stepping);
  return thisThreadHost(model, init, clock, () => {
    const i = stepping.models.indexOf(model);
    if (i >= 0) stepping.models.splice(i, 1);
  });
}
