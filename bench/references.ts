/**
 * The reference programs every figure is compared with, each measured at most once per run
 * (the first benchmark that asks runs it; later ones reuse the figure) and all listed in
 * docs/performance.md. A reference does the same work as the driver with nothing in the way:
 * C built with the machine's gcc, raw memcpy, a raw round trip.
 */
import { runC } from './helpers/c-build.ts';
import { numberField, type JsonLine } from './helpers/json-line.ts';
import type { Durations } from './helpers/timing.ts';
import { measureNodeUdpPing } from './helpers/udp-ping-node.ts';

/** A figure measured as a reference: by a C program, raw memcpy, a raw round trip. */
export interface ReferenceFigure {
  readonly name: string;
  readonly figure: number;
  readonly unit: string;
}

interface FigureSpec {
  readonly unit: string;
  readonly label: string;
}

interface ReferenceProgram {
  /** Where it lives, from the repository root. */
  readonly file: string;
  /** One line for the docs: what it does. */
  readonly what: string;
  /** The fields of its JSON result line that are figures. */
  readonly figures: Readonly<Record<string, FigureSpec>>;
  measure(d: Durations): Promise<JsonLine>;
}

const PROGRAMS = {
  'shm-ping': {
    file: 'bench/c/shm-ping.c',
    what: 'two threads pass a number back and forth through shared memory, one 64-byte cache line each way (per-trip ' +
      'figures from 32-trip batches)',
    figures: {
      ns_median: { unit: 'ns', label: 'round trip, median' },
      ns_p99: { unit: 'ns', label: 'round trip, p99' },
      ns_mean: { unit: 'ns', label: 'round trip, mean' },
    },
    measure: (d: Durations) => runC('shm-ping', [d.referenceSeconds]),
  },
  'ring-work': {
    file: 'bench/c/ring-work.c',
    what: '48-byte SEND WQE (variable mode, as the default chip) and its 8-byte MSN-table entry into a 4096-WQE ' +
      'ring, 64-bit doorbell store, 32-byte CQE polled by its toggle bit; a second thread plays the device',
    figures: {
      ns_sync_median: { unit: 'ns', label: 'post+poll, 1 outstanding, median' },
      ns_pipelined_median: { unit: 'ns', label: 'post+poll, 64 outstanding, median' },
      ns_batch_median: {
        unit: 'ns', label: 'post+poll, batches of 512 (posts timed, device untimed, polls timed), median',
      },
    },
    measure: (d: Durations) => runC('ring-work', [d.referenceSeconds]),
  },
  'udp-ping': {
    file: 'bench/c/udp-ping.c',
    what: '64-byte UDP ping-pong over 127.0.0.1 between two processes (blocking send/recv)',
    figures: {
      us_median: { unit: 'us', label: 'round trip, median' },
      us_p99: { unit: 'us', label: 'round trip, p99' },
      us_mean: { unit: 'us', label: 'round trip, mean' },
    },
    measure: (d: Durations) => runC('udp-ping', [d.referenceSeconds, 64]),
  },
  'udp-ping-node': {
    file: 'bench/helpers/udp-ping-node.ts',
    what: '64-byte Node dgram ping-pong over 127.0.0.1 between two Node processes (the raw Node baseline)',
    figures: {
      us_median: { unit: 'us', label: 'round trip, median' },
      us_p99: { unit: 'us', label: 'round trip, p99' },
      us_mean: { unit: 'us', label: 'round trip, mean' },
    },
    measure: (d: Durations) => measureNodeUdpPing(d, 64),
  },
  'memcpy-crc': {
    file: 'bench/c/memcpy-crc.c',
    what: 'memcpy and CRC-32 of 1 MiB buffers, the CRC table-driven (slicing-by-8), zlib\'s (crc32(), linked with ' +
      '-lz) and libdeflate\'s (libdeflate_crc32(), by dlopen; 0 where it is not installed: the fastest CRC-32 ' +
      'available to C here), GB/s = 1e9 bytes/s from the median pass',
    figures: {
      memcpy_gbps: { unit: 'GB/s', label: 'memcpy 1 MiB' },
      crc32_gbps: { unit: 'GB/s', label: 'CRC-32 (slicing-by-8) 1 MiB' },
      memcpy_crc32_gbps: { unit: 'GB/s', label: 'memcpy + CRC-32 (slicing-by-8) 1 MiB' },
      zlib_crc32_gbps: { unit: 'GB/s', label: 'zlib CRC-32 1 MiB' },
      memcpy_zlib_crc32_gbps: { unit: 'GB/s', label: 'memcpy + zlib CRC-32 1 MiB' },
      libdeflate_crc32_gbps: { unit: 'GB/s', label: 'libdeflate CRC-32 1 MiB' },
      memcpy_libdeflate_crc32_gbps: { unit: 'GB/s', label: 'memcpy + libdeflate CRC-32 1 MiB' },
    },
    measure: (d: Durations) => runC('memcpy-crc', [d.referenceSeconds], { libs: ['z'] }),
  },
} as const satisfies Readonly<Record<string, ReferenceProgram>>;

export type ReferenceName = keyof typeof PROGRAMS;
export type FigureKey<P extends ReferenceName> = keyof (typeof PROGRAMS)[P]['figures'] & string;
export const REFERENCE_NAMES = Object.keys(PROGRAMS) as ReferenceName[];

/** A reference as the docs list it: its figures, or why it could not be measured. */
export interface ReferenceRecord {
  readonly name: ReferenceName;
  readonly file: string;
  readonly what: string;
  readonly figures: readonly { readonly label: string; readonly figure: number; readonly unit: string }[] | undefined;
  readonly error: string | undefined;
}

export class References {
  private readonly runs = new Map<ReferenceName, Promise<JsonLine>>();
  private readonly outcomes = new Map<ReferenceName, { line: JsonLine } | { error: string }>();

  constructor(
    private readonly durations: Durations,
    private readonly log: (message: string) => void,
  ) {}

  /** The program's JSON result line, measured on the first call. */
  result(name: ReferenceName): Promise<JsonLine> {
    let run = this.runs.get(name);
    if (!run) {
      const program: ReferenceProgram = PROGRAMS[name];
      if (!program)
        throw new RangeError(`no reference program "${String(name)}" (there are ${REFERENCE_NAMES.join(', ')})`);
      this.log(`  reference ${name} (${program.file}) ...`);
      run = program.measure(this.durations).then(
        (line) => { this.outcomes.set(name, { line }); return line; },
        (e: Error) => { this.outcomes.set(name, { error: e.message }); throw e; },
      );
      this.runs.set(name, run);
    }
    return run;
  }

  /** One figure of a reference, named for the table: e.g. ("shm-ping", "ns_median"). */
  async figure<P extends ReferenceName>(name: P, key: FigureKey<P>): Promise<ReferenceFigure> {
    const program: ReferenceProgram = PROGRAMS[name];
    const spec = program.figures[key];
    if (!spec) throw new RangeError(`reference ${name} has no figure "${key}"`);
    const line = await this.result(name);
    return {
      name: `${basename(program.file)} ${spec.label}`, figure: numberField(line, key, program.file), unit: spec.unit,
    };
  }

  /** Measures every reference not measured yet (a full run lists them all); failures are recorded, not thrown. */
  async measureAll(): Promise<void> {
    for (const name of REFERENCE_NAMES) await this.result(name).catch(() => undefined);
  }

  /** Every reference measured (or attempted) so far, in the table's order. */
  records(): ReferenceRecord[] {
    const records: ReferenceRecord[] = [];
    for (const name of REFERENCE_NAMES) {
      const outcome = this.outcomes.get(name);
      if (!outcome) continue;
      const program: ReferenceProgram = PROGRAMS[name];
      if ('error' in outcome) {
        records.push({ name, file: program.file, what: program.what, figures: undefined, error: outcome.error });
        continue;
      }
      try {
        const figures = Object.entries(program.figures).map(([key, spec]) => ({
          label: spec.label, figure: numberField(outcome.line, key, program.file), unit: spec.unit,
        }));
        records.push({ name, file: program.file, what: program.what, figures, error: undefined });
      } catch (e) {
        records.push({ name, file: program.file, what: program.what, figures: undefined, error: (e as Error).message });
      }
    }
    return records;
  }
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
