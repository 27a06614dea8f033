// The tidy check (TigerBeetle's tidy.zig as a test): rules a reviewer should not have to count.
// It reads files and parses them with TypeScript; it spawns nothing and takes about a second.
//
// 1. Line width: at most 120 columns (code points) in every *.ts, *.mjs, *.sh, *.c and *.h file
//    under lib/ drivers/ firmware-hwrm/ scripts/ bench/ test/ (generated *.g.ts included, so
//    their generator must wrap too), in the shell scripts there without an extension, and in
//    every *.md under docs/ and README.md. Exempt: a line holding a URL (it cannot be cut), and in
//    Markdown a table row (a row cannot be wrapped without breaking the table).
// 2. Function length: at most 70 lines from the first token to the closing brace, nested
//    functions counted in their parent, in every *.ts and *.mjs file of those folders. The few
//    longer ones are in LONG_FUNCTIONS, each with the reason it is one piece; an entry that no
//    longer matches a long function is an error, so the list only shrinks.
// 3. Citations a clone can follow: no file of the repository names a path of a build machine
//    (the project's own folder on it, a home folder) or the project's private fact sheets (the
//    folder beside the project they live in, their file names, their section marks): cite the
//    public source (Linux, rdma-core, DPDK, perftest, QEMU file and function or struct) and
//    write the fact into docs/ in the project's own words.
//    /tmp is allowed: it is where programs write at run time, not a machine's layout.
// 4. The hot path allocates nothing: in HOT_PATH_FILES (the driver's post, doorbell and poll
//    files, the software NIC's data path, the word accessors generated from the layouts: see
//    docs/architecture.md), no closure (arrow function, function expression) and no BigInt
//    (`1n`, `BigInt(x)`) is made inside a function. Module level, class field initializers and
//    constructors are setup (once per load or object) and allowed; so are the setup functions
//    each file names, with a reason.
// 5. Chip facts live in firmware-hwrm/chips.ts: no product file (lib/ drivers/ firmware-hwrm/
//    scripts/ bench/) compares a family by name ('P5', 'P7', ...) but chips.ts and the driver's
//    chip policy, lib/bnxt/chip.ts; what differs by family is a profile field, read as one.
// 6. Hand-inlined copies on the hot path are listed: PERF_FORKS names each copy (a function or
//    class that says so in a comment naming PERF_FORKS, or a function of a hot-path file that
//    writes a number where a named constant stands, the name in the comment after it), its one
//    definition, the differential test that holds the two to the same results, and the benchmark
//    that shows why the copy stays. A copy not in the list fails, and so does an entry whose copy,
//    definition, test or benchmark is gone: the list only shrinks. Where a shared helper is as
//    fast (measured), it replaces the copy instead.
// 7. File size: a hand-written file (generated *.g.ts exempt) has at most 500 lines; the few
//    longer ones are in LONG_FILES with the reason, and an entry for a file that fits is an error.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import {
  definedNames, familyComparisons, functionSpans, hotPathFindings, longLines, perfForkMarks, readFiles,
} from './helpers/tidy.ts';
import { generatedFiles } from '../scripts/accessors/generate.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAX_COLUMNS = 120;
const MAX_FUNCTION_LINES = 70;
const MAX_FILE_LINES = 500;
const CODE_FOLDERS = ['lib', 'drivers', 'firmware-hwrm', 'scripts', 'bench', 'test'];
/** The folders of the product and its tools (no tests): where rule 5 holds. */
const PRODUCT_FOLDERS = ['lib/', 'drivers/', 'firmware-hwrm/', 'scripts/', 'bench/'];
/** The only files that may compare a chip family by name (rule 5). */
const FAMILY_NAMING_FILES = new Set(['firmware-hwrm/chips.ts', 'lib/bnxt/chip.ts']);

/** Functions allowed over MAX_FUNCTION_LINES: `path: dotted name` -> why it stays one piece. */
const LONG_FUNCTIONS = new Map<string, string>([
  ['lib/bnxt/bringup.ts: bringUp',
    'bring-up as the manual\'s table of contents: one commented HWRM step after another'],
  ['lib/bnxt/roce-device.ts: bringUpRoce', 'the RoCE bring-up\'s table of contents, one commented step each'],
  ['drivers/vfio/open.ts: bringUp', 'the VFIO open in the kernel API\'s order (container, group, device, BARs)'],
  ['drivers/emu/model/firmware/roce-cmd-modify-qp.ts: modifyQp', 'MODIFY_QP\'s checks in the order of its mask bits'],
  ['drivers/emu/host/vfio-user/session.ts: VfioUserSession.dispatch',
    'one case per vfio-user command: a dispatch table'],
  ['drivers/emu/model/wire/build.ts: encodeFrame',
    'the headers in wire order, allocation-free: split, it would pass state around'],
  ['drivers/emu/model/wire/parse.ts: parse', 'the headers in wire order, one status per check, allocation-free'],
  ['drivers/emu/model/wire/parse.ts: parseWords', "parse's checks in parse's order, the headers read as words"],
  ['scripts/interop/run-guest.ts: runGuest', 'the guest run in order (build, boot, follow, collect); to split ' +
    'where the serial QEMU test can check it (nothing else runs it)'],
  ['scripts/bnxt-guest/run.ts: runGuest', 'the guest run in order (serve, boot, follow the steps, collect); to split ' +
    'where the serial QEMU test can check it (nothing else runs it)'],
  ['test/serial/bnxt-guest.test.ts: guestRun', 'one guest boot, asserted step by step'],
  ['scripts/interop/stand-in-peer.ts: main', 'the stand-in peer\'s script in order; to split where the serial ' +
    'QEMU test can check it (it pairs only with ibv_rc_pingpong in the guest)'],
  ['scripts/stress/hostile-relay.ts: makeKind', 'one case per hostile frame kind: a table'],
  ['test/helpers/fake-vfio-kernel.ts: FakeVfioKernel.ioctl', 'one case per VFIO ioctl: a dispatch table'],
]);

/** A hand-inlined copy (rule 6): what it copies, the test that holds it to that, the benchmark it is kept for. */
interface PerfFork {
  /** `path: dotted name` of the one definition. */
  readonly of: string;
  /** The differential test: it names both (their last dotted part). */
  readonly test: string;
  /** The benchmark (bench/*.ts `name`) whose figure the copy is kept for. */
  readonly bench: string;
  readonly why: string;
}

/** Rule 6: `path: dotted name` of each hand-inlined copy on the hot path. */
const PERF_FORKS = new Map<string, PerfFork>([
  ['lib/bnxt/qp-posts.ts: QpPosts.postSend', {
    of: 'lib/bnxt/qp-posts.ts: QpPosts.writeSqWqe', test: 'test/qp-post-forks.test.ts', bench: 'qp-post-poll',
    why: 'over V8\'s inlining limit, so that every caller calls it and its own budget inlines the whole post ' +
      '(test/qp-post-inlining.test.ts asks V8)',
  }],
  ['lib/qp.ts: Qp.send', {
    of: 'lib/qp.ts: Qp.regionHolds', test: 'test/qp-data-checks.test.ts', bench: 'qp-post-poll',
    why: 'a program\'s post loop inlines the whole post: called, regionHolds ran V8\'s inlining budget out sooner',
  }],
  ['lib/qp.ts: Qp.receive', {
    of: 'lib/qp.ts: Qp.regionHolds', test: 'test/qp-data-checks.test.ts', bench: 'qp-post-poll',
    why: 'as Qp.send',
  }],
  ['lib/bnxt/qp-completions.ts: QpCompletions.sqFull', {
    of: 'lib/bnxt/qp-completions.ts: QpCompletions.room', test: 'test/qp-post-forks.test.ts', bench: 'qp-post-poll',
    why: 'Qp.send\'s room check in a few bytes of bytecode, the ring\'s room a literal',
  }],
  ['lib/bnxt/qp-completions.ts: QpCompletions.rqFull', {
    of: 'lib/bnxt/qp-completions.ts: QpCompletions.room', test: 'test/qp-post-forks.test.ts', bench: 'qp-post-poll',
    why: 'Qp.receive\'s room check, as sqFull',
  }],
  ['lib/bnxt/completion-queue.ts: CompletionQueue', {
    of: 'firmware-hwrm/ring.ts: RingCursor', test: 'test/qp-post-forks.test.ts', bench: 'qp-post-poll',
    why: 'the CQE reads of every poll: a call through the cursor cost the send path ~4 ns',
  }],
  ['drivers/emu/host/write-queue-producer.ts: WriteQueueProducer.push', {
    of: 'drivers/emu/model/write-queue.ts: WriteQueueConsumer.take', test: 'test/write-queue.test.ts',
    bench: 'qp-post-poll', why: 'inlined into every doorbell of a post: the layout\'s numbers as literals',
  }],
  ['drivers/emu/model/wire/parse.ts: parseWords', {
    of: 'drivers/emu/model/wire/parse.ts: parse', test: 'test/wire-parse-words.test.ts', bench: 'qp-message-rate',
    why: 'every frame the model receives: the headers read as 10 words instead of 40 bytes',
  }],
  ['drivers/emu/model/wire/build.ts: encodeFrameWith', {
    of: 'drivers/emu/model/wire/build.ts: encodeFrame', test: 'test/wire-header-template.test.ts',
    bench: 'qp-message-rate', why: 'every frame a QP sends: its path\'s headers from a template, as words',
  }],
  ['drivers/emu/host/cable/udp-socket-cable.ts: UdpSocketCable', {
    of: 'drivers/emu/host/cable/udp-cable.ts: UdpCable', test: 'test/cable-udp-twins.test.ts',
    bench: 'qp-udp-pingpong', why: 'the UDP cable read by the model\'s thread through libc: no Buffer per datagram, ' +
      'no event-loop turn',
  }],
]);

/** Rule 7: hand-written files allowed over MAX_FILE_LINES -> why. */
const LONG_FILES = new Map<string, string>([
  ['test/serial/interop-rxe.test.ts', 'one guest session with rxe asserted step by step; to split where the serial ' +
    'QEMU test can check it (nothing else runs it)'],
  ['test/helpers/emu-engine-harness.ts', 'one harness: its NIC, CQs and QPs refer to each other (apart, an import ' +
    'circle)'],
]);

/** The hot-path files -> their setup functions (dotted names, see helpers/tidy.ts) and why each is setup. */
const HOT_PATH_FILES = new Map<string, Record<string, string>>([
  ['lib/qp.ts', {
    'Qp.waitAsync': 'the asynchronous wait makes a promise per call by design; wait and waitBytes are the hot ones',
    sameBytes: 'connect\'s endpoint check: the control path',
  }],
  ['lib/bnxt/queue-pair.ts', { 'BnxtQp.make': 'runs once per queue pair' }],
  ['lib/bnxt/qp-posts.ts', {}],
  ['lib/bnxt/qp-completions.ts', {}],
  ['lib/bnxt/completion-queue.ts', {}],
  ['lib/bnxt/completion-wait.ts', { waitForCompletionAsync: 'as Qp.waitAsync: a promise per call by design' }],
  ['drivers/vfio/mmio.ts', {}],
  ['drivers/emu/model/write-queue.ts', {}],
  ['drivers/emu/host/write-queue-producer.ts', {}],
  ['drivers/emu/host/long-crc32.ts', {}],
  ['firmware-hwrm/roce/doorbell.ts', {}],
  ['firmware-hwrm/roce/wqe.ts', {}],
  ['firmware-hwrm/roce/cqe.ts', {}],
  // Ring positions: every post, doorbell and poll of both sides computes them.
  ['firmware-hwrm/ring.ts', {}],
  // The word accessors generated from the Layout tables (scripts/accessors): both sides' data path calls them.
  ...['cmdq', 'cqe', 'creq', 'doorbell', 'nqe', 'wqe']
    .map((f): [string, Record<string, string>] => [`firmware-hwrm/roce/${f}.g.ts`, {}]),
  ['firmware-hwrm/hwrm/header.g.ts', {}],
  ...[
    'completer', 'core', 'counters', 'cq-writer', 'doorbells', 'flush', 'health', 'host', 'port', 'requester',
    'responder', 'responder-answers', 'responder-receive', 'sgl', 'sq-wqe', 'states', 'timers', 'transport',
  ].map((f): [string, Record<string, string>] => [`drivers/emu/model/engine/${f}.ts`, {}]),
  ['drivers/emu/model/engine/engine.ts', {}],
  ...[
    'aeth', 'build', 'bytes', 'crc32', 'headers', 'icrc', 'ipv4-checksum', 'opcodes', 'parse', 'range-view',
    'roce-frame',
  ]
    .map((f): [string, Record<string, string>] => [`drivers/emu/model/wire/${f}.ts`, {}]),
  ['drivers/emu/model/cable/cable.ts', { dropAll: 'a cable\'s first receiver, made once when the cable is' }],
  ['drivers/emu/model/cable/pair-cable.ts', { sameBytes: 'compares addresses when a pair is plugged' }],
  ['drivers/emu/model/cable/loop-cable.ts', {}],
  ['drivers/emu/model/cable/local-delivery.ts', {}],
  ['drivers/emu/model/cable/faults.ts', {}],
  ['drivers/emu/host/cable/udp-cable.ts', { 'UdpCable.constructor': 'binding the socket: once per cable' }],
  ['drivers/emu/host/cable/stream-cable.ts', {
    'StreamCable.connect': 'once per connection', 'StreamCable.listen': 'once per cable',
    'StreamCable.attach': 'once per connection',
  }],
  ['drivers/emu/model/iommu.ts', { 'Iommu.unmap': 'the control path (a buffer freed)' }],
  ['drivers/emu/model/nic-model.ts', { 'NicModel.modelControls': 'test hooks, made once per model' }],
  ['drivers/emu/host/inline-host.ts', { hostInline: 'builds the host once per NIC' }],
  ['drivers/emu/host/inline-clock.ts', {}],
  ['drivers/emu/host/stepped-host.ts', { hostStepped: 'builds the host once per NIC' }],
]);

const code = readFiles(ROOT, CODE_FOLDERS, (p) =>
  /\.(ts|mjs|sh|c|h)$/.test(p) && !p.endsWith('.d.ts'));
const shellWithoutExtension = readFiles(ROOT, ['scripts'], (p) => !/\.[a-z]+$/.test(p.split('/').pop()!));
for (const [p, text] of shellWithoutExtension) if (text.startsWith('#!')) code.set(p, text);
const markdown = readFiles(ROOT, ['docs'], (p) => p.endsWith('.md'));
markdown.set('README.md', readFiles(ROOT, ['.'], (p) => p === 'README.md').get('README.md')!);

const hasUrl = (line: string): boolean => /\bhttps?:\/\//.test(line);
const isTableRow = (line: string): boolean => line.trimStart().startsWith('|');

t.test(`rule 1: no line is wider than ${MAX_COLUMNS} columns (URLs, and Markdown tables, exempt)`, async (t) => {
  const found: string[] = [];
  for (const [path, text] of code) found.push(...longLines(path, text, MAX_COLUMNS, hasUrl));
  for (const [path, text] of markdown) {
    found.push(...longLines(path, text, MAX_COLUMNS, (line) => hasUrl(line) || isTableRow(line)));
  }
  t.same(found, [], 'lines to wrap');
  t.ok(code.has('lib/bnxt/queue-pair.ts') && code.has('scripts/bind-vfio.sh') && markdown.has('docs/api.md'),
    'the files are read');
});

t.test(`rule 2: no function is longer than ${MAX_FUNCTION_LINES} lines but the listed ones`, async (t) => {
  const found: string[] = [];
  const listed = new Set<string>();
  for (const [path, text] of code) {
    if (!/\.(ts|mjs)$/.test(path)) continue;
    for (const f of functionSpans(path, text)) {
      if (f.lines <= MAX_FUNCTION_LINES) continue;
      const key = `${path}: ${f.name}`;
      if (LONG_FUNCTIONS.has(key)) listed.add(key);
      else found.push(`${key} (line ${f.line}, ${f.lines} lines)`);
    }
  }
  t.same(found, [], 'functions to split');
  t.same([...LONG_FUNCTIONS.keys()].filter((k) => !listed.has(k)), [], 'LONG_FUNCTIONS entries that are not long');
});

t.test('rule 3: no file names a build machine\'s path or the private fact sheets', async (t) => {
  // Spelled in pieces, so that this file does not name them itself.
  const banned = [
    ['', 'work', ''].join('/'), ['', 'home', ''].join('/'), ['', 'Users', ''].join('/'),
    ['..', 'shared'].join('/'), ['shared', 'docs'].join('/'),
    ['bnxt-roce', 'interface.md'].join('-'), ['bnxt-hwrm', 'vfio.md'].join('-'), ['rxe', 'interop.md'].join('-'),
    ['facts', '§'].join(' '), ['(facts', ''].join(':'),
  ];
  const everything = readFiles(ROOT, ['.'], (p) =>
    !p.startsWith('.git/') && p !== 'package-lock.json' && !/\.(png|pcap|gz|xz|zst|node|so)$/.test(p));
  const found: string[] = [];
  for (const [path, text] of everything) {
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      for (const b of banned) if (lines[i]!.includes(b)) found.push(`${path}:${i + 1}: ${b}`);
    }
  }
  t.same(found, [], 'citations to replace by public sources');
  t.ok(everything.has('.ci/run') && everything.has('docs/hardware.md'), 'the whole tree is read, dot-folders included');
});

t.test('rule 4: the hot-path files make no closure and no BigInt outside setup', async (t) => {
  const found: string[] = [];
  for (const [path, setup] of HOT_PATH_FILES) {
    const text = code.get(path);
    if (text === undefined) {
      found.push(`${path}: missing (HOT_PATH_FILES names a file that is not there)`);
      continue;
    }
    const findings = hotPathFindings(path, text, new Set(Object.keys(setup)));
    for (const f of findings) found.push(`${path}:${f.line}: ${f.what} in ${f.within}`);
  }
  t.same(found, [], 'closures or BigInts made per call in the hot path');
});

t.test('rule 5: only chips.ts and lib/bnxt/chip.ts compare a chip family by name', async (t) => {
  const found: string[] = [];
  for (const [path, text] of code) {
    if (!path.endsWith('.ts') || FAMILY_NAMING_FILES.has(path) || !PRODUCT_FOLDERS.some((f) => path.startsWith(f)))
      continue;
    for (const c of familyComparisons(path, text)) found.push(`${path}:${c.line}: ${c.text}`);
  }
  t.same(found, [], 'family comparisons to turn into profile facts');
  t.ok(code.has('lib/bnxt/device-limits.ts') && code.has('firmware-hwrm/chips.ts'), 'the files are read');
});

t.test('rule 6: every hand-inlined copy on the hot path is in PERF_FORKS, with its definition, test and benchmark',
  async (t) => {
    const benches = new Set<string>();
    for (const [path, text] of code) {
      const m = /^export const name = '([^']+)';$/m.exec(text);
      if (path.startsWith('bench/') && m) benches.add(m[1]!);
    }
    const found: string[] = [];
    const seen = new Set<string>();
    for (const [path, text] of code) {
      if (!path.endsWith('.ts') || !PRODUCT_FOLDERS.some((f) => path.startsWith(f))) continue;
      for (const m of perfForkMarks(path, text, HOT_PATH_FILES.has(path))) {
        const key = `${path}: ${m.name}`;
        seen.add(key);
        if (!PERF_FORKS.has(key)) found.push(`${key} (line ${m.line}, ${m.how}): not in PERF_FORKS`);
      }
    }
    const exists = (key: string): boolean => {
      const [path, name] = key.split(': ');
      const text = code.get(path!);
      return text !== undefined && definedNames(path!, text).has(name!);
    };
    const lastPart = (key: string): string => key.split(': ')[1]!.split('.').pop()!;
    for (const [key, f] of PERF_FORKS) {
      if (!seen.has(key)) found.push(`${key}: listed, but no such copy (gone, or no longer marked)`);
      if (!exists(f.of)) found.push(`${key}: its definition ${f.of} is not there`);
      const test = code.get(f.test);
      if (test === undefined) found.push(`${key}: its test ${f.test} is not there`);
      else if (!test.includes(lastPart(key)) || !test.includes(lastPart(f.of)))
        found.push(`${key}: ${f.test} does not name ${lastPart(key)} and ${lastPart(f.of)}`);
      if (!benches.has(f.bench)) found.push(`${key}: no benchmark named ${f.bench}`);
    }
    t.same(found, [], 'copies to list, or entries to drop');
    t.ok(benches.has('qp-post-poll') && seen.size >= PERF_FORKS.size, 'the benchmarks and the copies are read');
  });

t.test(`rule 7: no hand-written file is longer than ${MAX_FILE_LINES} lines but the listed ones`, async (t) => {
  const found: string[] = [];
  const long = new Set<string>();
  for (const [path, text] of code) {
    if (path.endsWith('.g.ts')) continue;
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines <= MAX_FILE_LINES) continue;
    long.add(path);
    if (!LONG_FILES.has(path)) found.push(`${path} (${lines} lines)`);
  }
  t.same(found, [], 'files to split');
  t.same([...LONG_FILES.keys()].filter((p) => !long.has(p)), [], 'LONG_FILES entries that fit');
});

t.test('the checks catch what they are for', async (t) => {
  t.same(longLines('a.ts', `ok\n${'x'.repeat(121)}\n${'│'.repeat(120)}\n`, 120, () => false),
    ['a.ts:2 (121 columns)'],
    'columns are code points: 120 box-drawing characters fit');
  const spans = functionSpans('a.ts', [
    'class A {', '  m() {', '    const f = () => {', '      return 1;', '    };', '  }', '}',
    "t.test('rule 6: a title', async () => {", '});', 'const s = `function x() {}`;',
  ].join('\n'));
  t.same(spans.map((s) => [s.name, s.line, s.lines]),
    [['A.m', 2, 5], ['A.m.f', 3, 3], ["t.test('rule 6: a title')", 8, 2]],
    'methods, arrows named by what they initialize or their title; a template literal is no function');
  const hot = [
    'const TABLE = (() => { const a = [1].map((x) => x); return a; })();',
    'const BIG = 1n << 32n;',
    'class Q {',
    '  private readonly onFrame = (n: number): void => { this.seen.push(() => n); };',
    '  constructor() { this.cb = () => 0; }',
    '  make() { return [0].map((x) => BigInt(x)); }',
    '  post(v: number) { this.db = BigInt(v) << 32n; run(() => v); }',
    '}',
  ].join('\n');
  t.same(hotPathFindings('q.ts', hot, new Set(['Q.make'])).map((f) => `${f.line} ${f.what} ${f.within}`), [
    '4 closure Q.onFrame',
    '7 BigInt() Q.post', '7 BigInt literal Q.post', '7 closure Q.post',
  ], 'made per call in a field\'s arrow or a method, it is found; at module level (a module-level IIFE ' +
    'included), in a constructor or in a named setup function it is allowed');
  t.same(familyComparisons('d.ts', [
    "const cap = chip.family === 'P7' ? a : b;", "if ('P5' !== p.family) x();", "switch (f) { case 'P4': break; }",
    "// chip.family === 'P7' in a comment", "const s = \"family === 'P7'\";", "const ok = p.maxCqWqes === undefined;",
  ].join('\n')).map((c) => c.line), [1, 2, 3],
  'a comparison either way round and a switch case are found; a comment, a string, a fact read are not');
  const forks = [
    'class A {', '  full() {', '    return this.p - this.t === 4095; // RING_ROOM', '  }',
    '  room() {', '    return MASK - (this.p - this.t); // RING_ROOM', '  }',
    '  /** A copy of parse (PERF_FORKS). */', '  quick() {', '    return 1;', '  }', '}',
    'function f() { return x & 0xff; } // a byte', '/** Lists PERF_FORKS. */', 'const NOTE = 1;',
  ].join('\n');
  t.same(perfForkMarks('a.ts', forks, true).map((m) => `${m.name} ${m.how}`), ['A.quick marked', 'A.full literal'],
    'a copy marked in its doc comment, a literal for a named constant in a hot file; a constant used by name, ' +
    'a plain comment, a mark on no function are none');
  t.same(perfForkMarks('a.ts', forks, false).map((m) => m.name), ['A.quick'], 'outside the hot path only marks count');
  // The generated accessors are hot-path files: what the generator writes passes, and a getter
  // that widened a u64 field to a BigInt (as ixy.js's hot path did) would be caught.
  const cqe = generatedFiles().find((g) => g.path === 'firmware-hwrm/roce/cqe.g.ts')!;
  t.same(hotPathFindings(cqe.path, cqe.text, new Set()), [], 'the CQE accessors as generated make nothing per call');
  const widened = `${cqe.text}export function cqReqQpHandle(u: Uint32Array, w: number): bigint {\n` +
    '  return (BigInt(u[w + 1]!) << 32n) | BigInt(u[w]!);\n}\n';
  t.same(hotPathFindings(cqe.path, widened, new Set()).map((f) => `${f.what} ${f.within}`),
    ['BigInt() cqReqQpHandle', 'BigInt literal cqReqQpHandle', 'BigInt() cqReqQpHandle'],
    'a BigInt getter added to them is found');
});
