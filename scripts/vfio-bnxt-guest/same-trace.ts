/**
 * The same steps on two roads: rig-bnxt's driver over VFIO in the guest (a NIC served over
 * vfio-user) and over the in-process Device (the software NIC in this process), each writing its
 * driver trace (RIG_BNXT_TRACE: firmware-hwrm/trace.ts records). The driver above the Device
 * boundary is the same code on both, so every HWRM request and response, RoCE command and CREQ
 * answer, and doorbell must be the same, field for field: a difference is a defect of one road.
 * Left out of the comparison: where memory is (IOVAs: each road's IOMMU space is its own), the
 * driver's random draws (PSNs: crypto-random on a PCI device, as on hardware; seeded on a stepped
 * software NIC), and the "wqe" records, which only the in-process software NIC adds (the WQEs it
 * fetched, from the device's side).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ok, err, type Result } from '../../firmware-hwrm/result.ts';
import { parseTrace, type TraceRecord } from '../../firmware-hwrm/trace.ts';
import { GUEST_PROJECT, apiExample } from './project-archive.ts';

/** A file the guest printed as gzip in base64 lines (steps.sh print_file), back as text. */
export function consoleFile(lines: readonly string[]): string {
  return gunzipSync(Buffer.from(lines.map((l) => l.trim()).join(''), 'base64')).toString('utf8');
}

/**
 * Runs the README's API example here, on a software NIC opened with `options`, from the bundle
 * the guest got (the run folder's staged project), and returns its driver trace.
 */
export function inProcessTrace(stage: string, options: Record<string, unknown>): Result<TraceRecord[]> {
  const app = join(stage, '..', 'host-app');
  mkdirSync(join(app, 'node_modules'), { recursive: true });
  try {
    symlinkSync(join(stage, GUEST_PROJECT.slice(1)), join(app, 'node_modules', 'rig-bnxt'));
  } catch { /* there from an earlier call */ }
  writeFileSync(join(app, 'api-example.mjs'), apiExample('emu', options));
  const trace = join(app, 'api-trace.jsonl');
  const env = { ...process.env, RIG_BNXT_TRACE: trace };
  const r = spawnSync(process.execPath, ['api-example.mjs'], { cwd: app, env, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) return err(`the API example on the software NIC failed: ${r.error?.message ?? ''}${r.stderr}`);
  return ok(parseTrace(readFileSync(trace, 'utf8')));
}

/** Fields naming where memory is: IOVAs of buffers, rings, page tables, answers. */
const ADDRESS = /(^|_)(addr|address|pbl|page_dir|va|va_or_pa|dpi_addr)$/;
/** The driver's random draws. */
const RANDOM = /(^|_)psn$/;
const COMPARED_CHANNELS = new Set(['hwrm', 'cmdq', 'creq', 'db']);

function comparable(trace: readonly TraceRecord[]): TraceRecord[] {
  return trace.filter((r) => COMPARED_CHANNELS.has(r.ch));
}

function fieldDifferences(where: string, a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (ADDRESS.test(k) || RANDOM.test(k)) continue;
    if (a[k] !== b[k]) out.push(`${where}: ${k} ${JSON.stringify(a[k])} over VFIO, ${JSON.stringify(b[k])} in process`);
  }
  return out;
}

/** Every difference between the two roads' traces, as text (none: the same commands and fields). */
export function compareDriverTraces(vfio: readonly TraceRecord[], inProcess: readonly TraceRecord[]): string[] {
  const a = comparable(vfio);
  const b = comparable(inProcess);
  const out: string[] = [];
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined || y === undefined) {
      out.push(`record ${i}: ${x === undefined ? 'only in process' : 'only over VFIO'}: ` +
        `${(x ?? y)!.ch} ${(x ?? y)!.dir} ${(x ?? y)!.name}`);
      continue;
    }
    const where = `record ${i} (${x.ch} ${x.dir} ${x.name})`;
    if (x.ch !== y.ch || x.dir !== y.dir || x.name !== y.name) {
      out.push(`record ${i}: ${x.ch} ${x.dir} ${x.name} over VFIO, ${y.ch} ${y.dir} ${y.name} in process`);
      break; // the rest would differ only because of this one
    }
    out.push(...fieldDifferences(where, x.fields, y.fields));
    out.push(...fieldDifferences(`${where} side buffer`, x.side ?? {}, y.side ?? {}));
    for (const k of ['why', 'tlv', 'qp'] as const) {
      if (x[k] === y[k]) continue;
      out.push(`${where}: ${k} ${JSON.stringify(x[k])} over VFIO, ${JSON.stringify(y[k])} in process`);
    }
  }
  return out;
}
