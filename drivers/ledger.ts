/**
 * An acquisition ledger: everything a control-path step took from the host and the device, in
 * order, with how to give each back. A failed step and a later close both unwind it from the
 * top, so giving back is always the exact reverse of taking. Three kinds of entry:
 *
 *   take(buffer)            DMA memory: freed at the end of the unwind, or quarantined
 *   undo(channel, what, f)  an object the device made (a CQ, a ring, a region): one command over
 *                           a firmware channel gives it back (DESTROY_CQ, RING_FREE, ...)
 *   release(what, f)        a host-side action that always runs (close a file, unmap a BAR)
 *
 * "The firmware stopped answering" is one failure kind, handled here: a silent channel is sent
 * no more undo commands (as Linux's bnxt_re stops after it detected a firmware stall,
 * qplib_rcfw.c FIRMWARE_STALL_DETECTED, and DPDK after BNXT_FLAG_FW_TIMEDOUT, bnxt_hwrm.c), and
 * because the firmware may still write what it was told of, every buffer of the ledger is
 * quarantined (held, never freed nor reused, until the device is closed) instead of freed. So is
 * every buffer when an undo is refused: the object left in the device may still name the
 * memory. The public drivers do not say what a silent chip may still write; holding the memory
 * is the strict reading (docs/hardware.md).
 */
import type { DmaBuffer } from './device.ts';
import type { Result } from '../firmware-hwrm/result.ts';
import { assert } from '../firmware-hwrm/errors.ts';

/** Where the ledger's memory goes back to (lib/bnxt/dma-pool.ts is one). */
export interface MemoryHolder {
  free(buffer: DmaBuffer): void;
  /** The device may still write these: hold them until it is closed. */
  quarantine(...buffers: DmaBuffer[]): void;
}

/** A firmware channel: `stalled` says why it stopped answering, or is undefined while it answers. */
export interface Channel {
  readonly stalled: string | undefined;
}

/** A host-side release: returns a message when it failed (it should not throw). */
export type Release = () => string | undefined;

type Entry =
  | { readonly kind: 'memory'; readonly buffer: DmaBuffer }
  | { readonly kind: 'undo'; readonly channel: Channel; readonly what: string; readonly run: () => Result<unknown> }
  | { readonly kind: 'release'; readonly what: string; readonly run: Release };

export interface UnwindOptions {
  /**
   * Stop at the first refused undo and leave it, and everything taken before it, in the ledger
   * (a later unwind goes on from there, or `abandon()` holds it all). Default: go on past a
   * refusal, and quarantine the memory at the end.
   */
  readonly stopAtRefusal?: boolean;
}

export class Ledger {
  private readonly entries: Entry[] = [];
  private readonly watched: Channel[];

  /**
   * `memory` takes the ledger's buffers back; `channels` are the firmware channels whose
   * silence means the device may still name them (undo channels are watched too).
   */
  constructor(private readonly memory?: MemoryHolder, channels: readonly Channel[] = []) {
    this.watched = [...channels];
  }

  /** Also watch `channel`: once it is silent, the ledger's memory is quarantined, not freed. */
  watch(channel: Channel): void {
    if (!this.watched.includes(channel)) this.watched.push(channel);
  }

  /** Why a watched channel stopped answering, if one did. */
  get silent(): string | undefined {
    for (const c of this.watched) if (c.stalled !== undefined) return c.stalled;
    return undefined;
  }

  /** Entries left to give back. */
  get size(): number {
    return this.entries.length;
  }

  /** Records DMA memory the step took; returns it. */
  take<B extends DmaBuffer>(buffer: B): B {
    assert(this.memory !== undefined, 'a ledger without a memory holder was given memory');
    this.entries.push({ kind: 'memory', buffer });
    return buffer;
  }

  takeAll(buffers: readonly DmaBuffer[]): void {
    for (const b of buffers) this.take(b);
  }

  /** Records an object the device made; `run` gives it back over `channel` (never sent once it is silent). */
  undo(channel: Channel, what: string, run: () => Result<unknown>): void {
    this.watch(channel);
    this.entries.push({ kind: 'undo', channel, what, run });
  }

  /** Records a host-side action to run when unwinding (always, silence or not). */
  release(what: string, run: Release): void {
    this.entries.push({ kind: 'release', what, run });
  }

  /**
   * Memory the device holds under a name the driver cannot trust (a malformed answer to the
   * command that handed it over): quarantined now, and no longer the ledger's to free.
   */
  hold(...buffers: DmaBuffer[]): void {
    assert(this.memory !== undefined, 'a ledger without a memory holder was given memory');
    this.memory.quarantine(...buffers);
    this.drop(buffers);
  }

  /**
   * Gives everything back, newest first: undo commands (skipped on a silent channel), host
   * releases, then the memory, freed if nothing the device holds may still name it, else
   * quarantined. Returns what failed (empty: everything was given back). An exception from an
   * entry quarantines the memory left, empties the ledger, and reaches the caller.
   */
  unwind(options: UnwindOptions = {}): string[] {
    const failures: string[] = [];
    const memory: DmaBuffer[] = [];
    let held = false;
    try {
      for (let e = this.entries.pop(); e; e = this.entries.pop()) {
        if (e.kind === 'memory') memory.push(e.buffer);
        else if (e.kind === 'release') {
          const failure = e.run();
          if (failure !== undefined) failures.push(`${e.what}: ${failure}`);
        } else if (e.channel.stalled !== undefined) held = true;
        else {
          const r = e.run();
          if (r.ok) continue;
          failures.push(r.error);
          if (e.channel.stalled !== undefined) held = true; // it went silent on this very command
          else if (options.stopAtRefusal) {
            this.entries.push(e); // still the device's: a later unwind starts here
            this.entries.push(...memory.reverse().map((buffer) => ({ kind: 'memory' as const, buffer })));
            return failures;
          } else held = true;
        }
      }
    } catch (e) {
      this.abandon(memory);
      throw e;
    }
    if (held || this.silent !== undefined) this.memory?.quarantine(...memory);
    else for (const b of memory) this.memory!.free(b);
    return failures;
  }

  /**
   * Gives up on the entries left: nothing more is sent or run, and every buffer is quarantined
   * (the device may still name it). For a step an exception ended, or an object whose undo was
   * refused.
   */
  abandon(alsoHeld: readonly DmaBuffer[] = []): void {
    const memory = [...alsoHeld];
    for (const e of this.entries) if (e.kind === 'memory') memory.push(e.buffer);
    this.entries.length = 0;
    if (memory.length > 0) this.memory?.quarantine(...memory);
  }

  /** Runs `body`; if it throws, everything taken is quarantined (abandon) and the exception goes on. */
  guard<T>(body: () => T): T {
    try {
      return body();
    } catch (e) {
      this.abandon();
      throw e;
    }
  }

  /** Every buffer the ledger holds, oldest first. */
  buffers(): DmaBuffer[] {
    const out: DmaBuffer[] = [];
    for (const e of this.entries) if (e.kind === 'memory') out.push(e.buffer);
    return out;
  }

  private drop(buffers: readonly DmaBuffer[]): void {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.kind === 'memory' && buffers.includes(e.buffer)) this.entries.splice(i, 1);
    }
  }
}
