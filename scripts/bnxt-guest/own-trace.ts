/**
 * rig-bnxt's own driver doing what the bnxt guest's drivers do, on a software NIC that traces
 * what it receives (Nic.open deviceTrace): bring-up and the RoCE device (Nic.open), a region,
 * two queue pairs connected to each other, then everything given back. Stepped, so the trace
 * is the same on every run. The comparison with the kernel's trace is compare-trace.ts's.
 */
import { readFileSync } from 'node:fs';
import { Nic, Qp, Region } from '../../lib/index.ts';
import { parseTrace, type TraceRecord } from '../../firmware-hwrm/trace.ts';
import { ok, err, type Result } from '../../lib/result.ts';

/** `chip`: the one the kernel's run met (run.ts `chip`), so the two traces compare. */
export function traceOwnDriver(path: string, chip: string): Result<TraceRecord[]> {
  // The guest's chip and Ethernet MTU, so both drivers meet the same device and pick the same path MTU.
  const nic = Nic.open('emu', { stepped: true, deviceTrace: path, mtu: 1500, chip });
  if (!nic.ok) return err(`Nic.open: ${nic.error}`);
  try {
    const region = Region.alloc(nic.value, 8192);
    if (!region.ok) return err(`Region.alloc: ${region.error}`);
    const a = Qp.make(nic.value);
    const b = Qp.make(nic.value);
    if (!a.ok || !b.ok) return err(`Qp.make: ${a.ok ? '' : a.error}${b.ok ? '' : b.error}`);
    for (const [x, y] of [[a.value, b.value], [b.value, a.value]] as const) {
      const c = x.connect(y.endpoint);
      if (!c.ok) return err(`connect: ${c.error}`);
    }
    for (const r of [a.value.destroy(), b.value.destroy(), region.value.deregister()]) if (!r.ok) return err(r.error);
  } finally {
    nic.value.close();
  }
  return ok(parseTrace(readFileSync(path, 'utf8')));
}
