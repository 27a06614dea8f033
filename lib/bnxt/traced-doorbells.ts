/**
 * The doorbell BAR as the driver sees it when a trace is on: every 64-bit doorbell is traced
 * (a "db" record decoded as bnxt_hsi.h struct dbc_dbc, firmware-hwrm/trace.ts) and then
 * written. Without a trace the driver holds the device's own BAR2 Mmio, so the data path runs
 * exactly the code it runs untraced: no check, no call, no allocation (bench/trace-off.ts).
 */
import type { Mmio } from '../../drivers/device.ts';
import { dbEvent, type TraceSink } from '../../firmware-hwrm/trace.ts';

class TracedDoorbells implements Mmio {
  constructor(private readonly bar: Mmio, private readonly trace: TraceSink) {}
  get size(): number {
    return this.bar.size;
  }
  read32(offset: number): number {
    return this.bar.read32(offset);
  }
  write32(offset: number, value: number): void {
    this.bar.write32(offset, value);
  }
  doorbell64(offset: number, lo: number, hi: number): void {
    // Traced before the store: a doorbell the device acts on at once still comes first in the file.
    this.trace.write(dbEvent(lo, hi));
    this.bar.doorbell64(offset, lo, hi);
  }
}

/** BAR2 as the driver rings it: the device's own Mmio, or one that traces each doorbell into `trace`. */
export function doorbellBar(bar2: Mmio, trace: TraceSink | undefined): Mmio {
  return trace === undefined ? bar2 : new TracedDoorbells(bar2, trace);
}
