// BnxtQp's postSend (lib/bnxt/qp-posts.ts) is kept over V8's limit for a function it inlines, so
// that its callers always call it and its own optimized code inlines the whole post. V8 is asked
// rather than trusted: a child process sends and polls with --trace-turbo-inlining and has
// TurboFan compile its send loop and postSend (helpers/post-inlining-child.ts), and the trace must
// show postSend never inlined into anything and every call postSend makes inlined into it, on
// each SQ table (the MSN table on P7 and on P5's current-msn firmware, PSN search on P5). With
// V8's limit raised the same trace shows postSend inlined into the loop: the check can fail, and
// the limit is what keeps it out.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = 'test/helpers/post-inlining-child.ts';

/** What postSend calls, each written once in its body (the MSN table's or the PSN search's writers). */
const CALLEES_ALWAYS = [
  'setSqSendHdrWords', 'setSqSgeWords', 'psnPacketsByShift', 'tellBeforePost', 'dbcDbcWord0', 'doorbell64', 'push',
];
const CALLEES_MSN = ['sqMsnSearchWord0', 'sqMsnSearchWord1', 'setSqMsnSearchWords'];
const CALLEES_PSN = ['sqPsnSearchExtWord0', 'setSqPsnSearchExtWords'];

interface Trace {
  /** [function inlined, function it went into], each once. */
  readonly inlined: [string, string][];
  /** V8's reasons (SharedFunctionInfo::Inlineability) for not considering postSend, one per caller compiled. */
  readonly refused: string[];
  readonly turbofanned: { postSend: boolean; sendBatch: boolean };
}

/**
 * The environment without the test runner's hooks: tap's NODE_OPTIONS loads its process-info
 * module (coverage bookkeeping), under which V8 inlines otherwise.
 */
function plainEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k !== 'NODE_OPTIONS' && k !== 'NODE_V8_COVERAGE' && !k.startsWith('_TAPJS_')) env[k] = v;
  }
  return env;
}

function trace(chip: string, firmware: string, v8Flags: readonly string[] = []): Trace {
  // V8 prints its trace with C stdio on fd 1, which Node makes non-blocking when it is a pipe:
  // a full pipe would lose lines. A file takes them all.
  const dir = mkdtempSync(join(tmpdir(), 'post-inlining-'));
  const file = join(dir, 'trace.txt');
  const fd = openSync(file, 'w');
  let r: ReturnType<typeof spawnSync>;
  let stdout: string;
  try {
    r = spawnSync(process.execPath, [
      // Compiles on the main thread, one at a time (concurrent compiles would interleave their traces),
      // and only where the child asks (an interrupt budget nothing reaches): each with the warm-up's feedback.
      '--import', './scripts/register-ts.mjs', '--allow-natives-syntax', '--trace-turbo-inlining',
      '--no-concurrent-recompilation', '--interrupt-budget=1000000000', ...v8Flags, CHILD, chip, firmware,
    ], { cwd: ROOT, env: plainEnv(), stdio: ['ignore', fd, 'pipe'], encoding: 'utf8', timeout: 120_000 });
  } finally {
    closeSync(fd);
  }
  try {
    stdout = readFileSync(file, 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (r.status !== 0) throw new Error(`the child failed (${r.status} ${r.signal}): ${String(r.stderr)}`);
  const result = /RESULT (\{[^}]*\})/.exec(stdout);
  if (!result) throw new Error(`the child printed no result: ${String(r.stderr)}`);
  const pairs = new Set<string>();
  const fn = '0x[0-9a-f]+ \\{0x[0-9a-f]+ <SharedFunctionInfo ([^>]+)>\\}';
  for (const m of stdout.matchAll(new RegExp(`Inlining ${fn} into ${fn}`, 'g'))) pairs.add(`${m[1]}\n${m[2]}`);
  const cannot = new RegExp(`Cannot consider ${fn} for inlining \\(reason: ([^)]+)\\)`, 'g');
  const refused = [...stdout.matchAll(cannot)].filter((m) => m[1] === 'postSend').map((m) => m[2]!);
  return {
    inlined: [...pairs].map((p) => p.split('\n') as [string, string]),
    refused,
    turbofanned: JSON.parse(result[1]!) as Trace['turbofanned'],
  };
}

const CONFIGS: [string, string, readonly string[]][] = [
  ['BCM57608', 'current', CALLEES_MSN],
  ['BCM57508', 'current', CALLEES_PSN],
  ['BCM57508', 'current-msn', CALLEES_MSN],
];

for (const [chip, firmware, table] of CONFIGS) {
  t.test(`${chip} (${firmware}): postSend is inlined into no caller and inlines every call it makes`, async (t) => {
    const tr = trace(chip, firmware);
    t.same(tr.turbofanned, { postSend: true, sendBatch: true }, 'TurboFan compiled the send loop and postSend');
    t.ok(tr.refused.length > 0, `the loop, Qp.send inlined, could not take postSend in (V8's reason ${tr.refused})`);
    t.same(tr.inlined.filter(([f]) => f === 'postSend'), [], 'postSend went into no other function');
    const into = new Set(tr.inlined.filter(([, g]) => g === 'postSend').map(([f]) => f));
    t.same([...CALLEES_ALWAYS, ...table].filter((f) => !into.has(f)), [], 'every call of postSend inlined into it');
  });
}

t.test('with V8\'s limit raised over postSend\'s bytecode, it is inlined into the loop: the limit keeps it out',
  async (t) => {
    const tr = trace('BCM57608', 'current', ['--max-inlined-bytecode-size=2000']);
    t.ok(tr.inlined.some(([f, g]) => f === 'postSend' && g === 'sendBatch'), 'postSend inlined into the send loop');
  });
