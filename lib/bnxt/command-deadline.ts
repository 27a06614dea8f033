/**
 * A firmware command's bound, kept as bnxt_en keeps it: __hwrm_send (bnxt_hwrm.c) counts its
 * passes, a look and a usleep_range each, up to the count the timeout makes, and DPDK's
 * bnxt_hwrm_send_message counts its looks of rte_delay_us(1) the same way. Time in which the
 * driver itself did not run (descheduled on a busy machine) uses up no passes there, so a
 * command that the device answers is never given up on for a stall of the host.
 *
 * Here the passes are counted in real time, each look's share capped: the time since the
 * previous look counts in full up to MAX_STEP_NS (a sleep between looks lasts tens to hundreds of
 * microseconds, so on a machine that runs the driver the bound is the wall-clock timeout), and a
 * longer gap (the thread had no CPU) counts as MAX_STEP_NS only. A loaded test machine that
 * stalled the driver for 600 ms inside a 500 ms VER_GET bound no longer fails the bring-up; a
 * silent firmware still fails it, after at least the timeout.
 */
import type { Clock } from '../../drivers/device.ts';

/** The most one gap between two looks counts: a longer stall of the driver is not the device's time. */
const MAX_STEP_NS = 2_000_000;

export class CommandDeadline {
  private lastNs: number;
  private spentNs = 0;

  constructor(private readonly clock: Clock, private readonly limitNs: number) {
    this.lastNs = clock.nowNs();
  }

  /** Counts the time since the last look (capped) and says whether the bound is used up. */
  expired(): boolean {
    const now = this.clock.nowNs();
    const step = now - this.lastNs;
    this.lastNs = now;
    this.spentNs += step < MAX_STEP_NS ? step : MAX_STEP_NS;
    return this.spentNs > this.limitNs;
  }
}
