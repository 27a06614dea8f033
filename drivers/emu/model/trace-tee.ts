/** One trace sink that writes to two: the software NIC's own trace file and the driver's (its WQE records). */
import type { TraceSink } from '../../../firmware-hwrm/trace.ts';

/** Sends each event to both sinks; either may be absent (then the other is the tee). */
export function teeTrace(a: TraceSink | undefined, b: TraceSink | undefined): TraceSink | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return { write: (event) => { a.write(event); b.write(event); } };
}
