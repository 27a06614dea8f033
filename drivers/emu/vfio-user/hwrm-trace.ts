/**
 * The trace of what a guest driver sent over HWRM and what the model answered, one JSON object
 * per line in the fidelity issue's format: {"t":<ns>,"ch":"hwrm","dir":"req"|"resp",
 * "name":"HWRM_FUNC_QCAPS","fields":{...}}, field names as in Linux's bnxt_hsi.h, numbers as
 * JSON numbers, 64-bit fields and byte arrays as "0x…" strings. Decoded with the same layouts
 * the codecs use; a command without a layout here is traced with its header fields only.
 */
import { openSync, writeSync, closeSync } from 'node:fs';
import { hwrmCommand, hwrmRequestName, HwrmInput, HwrmOutput } from '../../../firmware-hwrm/hwrm/index.ts';
import type { FieldSpec, Layout } from '../../../firmware-hwrm/layout.ts';

type AnyLayout = Layout<Record<string, FieldSpec>>;

/** Field values as JSON: u64 as "0x…" (little-endian value), byte arrays as "0x…" of their bytes in order. */
export function traceFields(layout: AnyLayout, bytes: Uint8Array): Record<string, number | string> {
  const padded = bytes.length >= layout.size ? bytes
    : Uint8Array.from({ length: layout.size }, (_, i) => bytes[i] ?? 0);
  const values = layout.decode(padded) as Record<string, unknown>;
  const out: Record<string, number | string> = {};
  for (const [name, spec] of Object.entries(layout.fields)) {
    const v = values[name];
    if (spec.kind === 'u64' || spec.kind === 'u64n') out[name] = `0x${BigInt(v as number | bigint).toString(16)}`;
    else if (v instanceof Uint8Array) out[name] = `0x${[...v].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
    else out[name] = v as number;
  }
  return out;
}

export class HwrmTrace {
  private fd: number | undefined;
  lines = 0;
  private readonly start = process.hrtime.bigint();

  constructor(path: string) {
    this.fd = openSync(path, 'w');
  }

  private line(dir: 'req' | 'resp', reqType: number, layout: AnyLayout, bytes: Uint8Array): void {
    if (this.fd === undefined) return;
    const t = Number(process.hrtime.bigint() - this.start);
    writeSync(this.fd,
      JSON.stringify({ t, ch: 'hwrm', dir, name: hwrmRequestName(reqType), fields: traceFields(layout, bytes) }) +
      '\n');
    this.lines++;
  }

  request(reqType: number, bytes: Uint8Array): void {
    this.line('req', reqType, hwrmCommand(reqType)?.request ?? (HwrmInput as unknown as AnyLayout), bytes);
  }

  response(reqType: number, bytes: Uint8Array): void {
    const ok = bytes.length >= 2 && (bytes[0]! | (bytes[1]! << 8)) === 0;
    this.line('resp', reqType,
      ok ? hwrmCommand(reqType)?.response ?? (HwrmOutput as unknown as AnyLayout)
      : (HwrmOutput as unknown as AnyLayout), bytes);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
