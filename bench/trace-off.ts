/**
 * Tracing off costs nothing on the data path (issue 11): the same send/receive work measured
 * with the library as it is (the trace hooks in place, no trace asked for) and with a build
 * of it whose trace hooks are cut out, in alternating turns of the same run. Both are bundled
 * the same way with esbuild into bench/out/; the second build's plugin removes the model's
 * WQE-trace check (engine/sq-wqe.ts readWqeHeader, engine/responder.ts loadReceive) and has
 * bring-up hand the device's own BAR2 to the rings instead of doorbellBar's choice, and fails
 * the benchmark if any of them is no longer where it expects it. One operation: Qp.receive +
 * Qp.send of 64 bytes, the software NIC (inline, in this thread) fetching both WQEs and moving
 * the message, and both completions polled (Qp.pollBytes, which runs the inline model): the
 * model's WQE fetch, where its hook sits, and the driver's doorbells, where a hook would sit,
 * are both inside the timing.
 */
import { build, type Plugin } from 'esbuild';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchResult, ratioAtMost } from './helpers/result.ts';
import { nowNs, summarize, type Durations } from './helpers/timing.ts';
import type { BenchOptions, BenchResult } from './helpers/types.ts';

export const name = 'trace-off';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = `${ROOT}bench/out/trace-off`;
const BATCH = 256;
const TURNS = 10;

/** The edits that cut the trace hooks out: file (from the root), the text, what replaces it. */
const CUTS: readonly (readonly [string, RegExp, string])[] = [
  ['drivers/emu/model/engine/sq-wqe.ts', /^\s*if \(core\.bus\.wqeTrace !== undefined\).*$/m, ''],
  ['drivers/emu/model/engine/responder.ts', /^\s*if \(core\.bus\.wqeTrace !== undefined\).*$/m, ''],
  ['lib/bnxt/bringup.ts', /doorbellBar\(device\.bar\(2\), options\.trace\)/, 'device.bar(2)'],
];

function cutHooks(): Plugin {
  return {
    name: 'cut-trace-hooks',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        const rel = args.path.startsWith(ROOT) ? args.path.slice(ROOT.length) : args.path;
        let text = readFileSync(args.path, 'utf8');
        for (const [file, pattern, replacement] of CUTS) {
          if (file !== rel) continue;
          if (!pattern.test(text)) throw new Error(`trace-off: the hook ${pattern} is no longer in ${file}`);
          text = text.replace(pattern, replacement);
        }
        return { contents: text, loader: 'ts' };
      });
    },
  };
}

type Lib = typeof import('../lib/index.ts');

async function bundle(file: string, plugins: Plugin[]): Promise<Lib> {
  mkdirSync(OUT, { recursive: true });
  const outfile = `${OUT}/${file}`;
  await build({
    entryPoints: [`${ROOT}lib/index.ts`], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20',
    external: ['koffi'], plugins, logLevel: 'warning',
    banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  });
  return (await import(pathToFileURL(outfile).href)) as Lib;
}

const SPIN_LIMIT = 1e8;

/** Polls until a completion (or a failure) comes; each poll lets the inline model run. */
function spin(poll: () => number): number {
  for (let i = 0; i < SPIN_LIMIT; i++) {
    const n = poll();
    if (n !== -1) return n;
  }
  return -1;
}

interface Pair {
  readonly close: () => void;
  /** Runs one batch of BATCH operations; the ns per operation. */
  readonly batch: () => number;
}

function openPair(lib: Lib): Pair {
  const must = <T>(r: { ok: true; value: T } | { ok: false; error: string }, what: string): T => {
    if (!r.ok) throw new Error(`${what}: ${r.error}`);
    return r.value;
  };
  const nic = must(lib.Nic.open('emu', {}), 'Nic.open');
  const a = must(lib.Qp.make(nic), 'Qp.make');
  const b = must(lib.Qp.make(nic), 'Qp.make');
  const ra = must(lib.Region.alloc(nic, 1 << 16), 'Region.alloc');
  const rb = must(lib.Region.alloc(nic, 1 << 16), 'Region.alloc');
  must(a.connect(b.endpoint), 'connect');
  must(b.connect(a.endpoint), 'connect');
  const batch = (): number => {
    const t0 = nowNs();
    for (let i = 0; i < BATCH; i++) {
      b.receive(rb, 0, 64);
      a.send(ra, 0, 64);
    }
    // Polled, not waited for: a wait may sleep between looks, and the sleep is not the work measured.
    for (let i = 0; i < BATCH; i++) {
      if (spin(() => a.pollBytes('send')) !== 64) throw new Error(`send completion: ${a.lastError}`);
      if (spin(() => b.pollBytes('receive')) !== 64) throw new Error(`receive completion: ${b.lastError}`);
    }
    return (nowNs() - t0) / BATCH;
  };
  return { close: () => nic.close(), batch };
}

/** Alternating turns: each turn runs one build's pair for a slice of the time, then the other's. */
function measure(hooked: Pair, cut: Pair, d: Durations): { hooked: Float64Array; cut: Float64Array } {
  const per = Math.max(1, Math.floor(d.maxSamples / (2 * TURNS)));
  const out = { hooked: new Float64Array(per * TURNS), cut: new Float64Array(per * TURNS) };
  const counts = { hooked: 0, cut: 0 };
  const slice = (d.runMs * 1e6) / (2 * TURNS);
  const warmEnd = nowNs() + d.warmupMs * 1e6;
  while (nowNs() < warmEnd) { hooked.batch(); cut.batch(); }
  for (let turn = 0; turn < TURNS; turn++) {
    for (const which of turn % 2 === 0 ? (['hooked', 'cut'] as const) : (['cut', 'hooked'] as const)) {
      const pair = which === 'hooked' ? hooked : cut;
      const end = nowNs() + slice;
      let n = 0;
      while (n < per && nowNs() < end) { out[which][counts[which]++] = pair.batch(); n++; }
    }
  }
  return { hooked: out.hooked.subarray(0, counts.hooked), cut: out.cut.subarray(0, counts.cut) };
}

export async function run(options: BenchOptions): Promise<BenchResult[]> {
  options.log('trace-off: bundling the library twice (as it is; trace hooks cut out)');
  const asIs = await bundle('as-is.mjs', []);
  const cut = await bundle('hooks-cut.mjs', [cutHooks()]);
  const hookedPair = openPair(asIs);
  let cutPair: Pair | undefined;
  try {
    cutPair = openPair(cut);
    const m = measure(hookedPair, cutPair, options.durations);
    const h = summarize(m.hooked);
    const c = summarize(m.cut);
    return [
      benchResult({
        label: 'receive + send + both completions, 64 B, trace hooks in place and tracing off, median',
        figure: h.median, unit: 'ns',
        reference: { name: 'the same with the trace hooks cut out of the build, median', figure: c.median, unit: 'ns' },
        goal: ratioAtMost(1.05),
        detail: `${h.count} and ${c.count} batches of ${BATCH} in ${TURNS} alternating turns, model inline; p90 ` +
          `${h.p90.toFixed(0)} vs ${c.p90.toFixed(0)} ns`,
      }),
    ];
  } finally {
    cutPair?.close();
    hookedPair.close();
  }
}
